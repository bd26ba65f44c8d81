/* The glibc side of the semaphore interoperation test (test-sem.c): a
   plain glibc program, not linked with xpthread and run without
   LD_PRELOAD, that shares semaphores with an xpthread process.

   usage: sem-glibc-helper unnamed FD ROUNDS
            the file FD holds struct ping_pong (sem-ping-pong.h)
          sem-glibc-helper named NAME-PING NAME-PONG ROUNDS
   Each round: wait for ping, check the counter and step it (unnamed
   only: the named semaphores share no other memory), post pong.
   Exit status 0 when every round matched; 3 when xpthread is loaded.  */
#define _GNU_SOURCE
#include "sem-ping-pong.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int
play (sem_t *ping, sem_t *pong, volatile unsigned *counter, unsigned rounds)
{
  for (unsigned i = 0; i < rounds; i++)
    {
      if (sem_wait (ping) != 0)
        return 1;
      if (counter != NULL)
        {
          if (*counter != 2 * i)
            return 1;
          *counter = 2 * i + 1;
        }
      /* Now and then be slow, so that the other side sleeps.  */
      if (i % PING_PONG_SLOW_EVERY == 0)
        usleep (1000);
      if (sem_post (pong) != 0)
        return 1;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  if (dlsym (RTLD_DEFAULT, "xpthread_mode_np") != NULL)
    return 3;
  if (argc == 4 && strcmp (argv[1], "unnamed") == 0)
    {
      struct ping_pong *pp = mmap (NULL, sizeof *pp, PROT_READ | PROT_WRITE,
                                   MAP_SHARED, atoi (argv[2]), 0);
      if (pp == MAP_FAILED)
        return 1;
      return play (&pp->ping, &pp->pong, &pp->counter,
                   (unsigned) atoi (argv[3]));
    }
  if (argc == 5 && strcmp (argv[1], "named") == 0)
    {
      sem_t *ping = sem_open (argv[2], 0);
      sem_t *pong = sem_open (argv[3], 0);
      if (ping == SEM_FAILED || pong == SEM_FAILED)
        return 1;
      return play (ping, pong, NULL, (unsigned) atoi (argv[4]));
    }
  fprintf (stderr, "usage: %s unnamed FD ROUNDS | named PING PONG ROUNDS\n",
           argv[0]);
  return 2;
}
