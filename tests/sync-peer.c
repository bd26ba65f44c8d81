/* A plain glibc program that works on a process-shared mutex and
   condition variable together with a suite that runs on xpthread (see
   sync-peer.h).  It is built without libxpthread and the suite runs it
   with LD_PRELOAD removed, and it checks that, so the other side of every
   exchange really is glibc's implementation.

   Usage: sync-peer FD init TYPE          initialise the shared mutex (of
                                          TYPE) and condition variable
          sync-peer FD count N THREADS    THREADS threads each increment
                                          the counter N times under the
                                          mutex
          sync-peer FD pong ROUNDS        play side 1 of the ping-pong  */
#define _GNU_SOURCE
#include "sync-peer.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static struct xp_peer_area *area;

static long
number (const char *s)
{
  char *end;
  long n = strtol (s, &end, 10);
  if (*s == '\0' || *end != '\0' || n < 0)
    exit (XP_PEER_USAGE);
  return n;
}

static int
init_shared (int type)
{
  pthread_mutexattr_t mattr;
  pthread_condattr_t cattr;
  if (pthread_mutexattr_init (&mattr) != 0
      || pthread_mutexattr_settype (&mattr, type) != 0
      || pthread_mutexattr_setpshared (&mattr, PTHREAD_PROCESS_SHARED) != 0
      || pthread_mutex_init (&area->mutex, &mattr) != 0)
    return XP_PEER_INIT;
  if (pthread_condattr_init (&cattr) != 0
      || pthread_condattr_setpshared (&cattr, PTHREAD_PROCESS_SHARED) != 0
      || pthread_cond_init (&area->cond, &cattr) != 0)
    return XP_PEER_INIT;
  return 0;
}

static long per_thread;

static void *
count_worker (void *unused)
{
  for (long i = 0; i < per_thread; i++)
    {
      if (pthread_mutex_lock (&area->mutex) != 0)
        return (void *) 1;
      area->counter++;
      if (pthread_mutex_unlock (&area->mutex) != 0)
        return (void *) 1;
    }
  return NULL;
}

static int
count (long n, long threads)
{
  pthread_t t[16];
  if (threads < 1 || threads > 16)
    return XP_PEER_USAGE;
  per_thread = n;
  for (long i = 0; i < threads; i++)
    if (pthread_create (&t[i], NULL, count_worker, NULL) != 0)
      return XP_PEER_THREAD;
  int status = 0;
  for (long i = 0; i < threads; i++)
    {
      void *result;
      if (pthread_join (t[i], &result) != 0)
        return XP_PEER_THREAD;
      if (result != NULL)
        status = XP_PEER_LOCK;
    }
  return status;
}

/* Side 1 of the ping-pong: wait for the turn, take it, hand it back.  */
static int
pong (long rounds)
{
  for (long r = 0; r < rounds; r++)
    {
      if (pthread_mutex_lock (&area->mutex) != 0)
        return XP_PEER_LOCK;
      struct timespec deadline;
      clock_gettime (CLOCK_REALTIME, &deadline);
      deadline.tv_sec += XP_PEER_WAIT_SECONDS;
      while (area->turn != 1)
        if (pthread_cond_timedwait (&area->cond, &area->mutex, &deadline)
            != 0)
          return XP_PEER_COND;
      area->moves[1]++;
      area->turn = 0;
      if (pthread_cond_signal (&area->cond) != 0
          || pthread_mutex_unlock (&area->mutex) != 0)
        return XP_PEER_LOCK;
    }
  return 0;
}

int
main (int argc, char **argv)
{
  /* Never outlive a suite that failed and left us waiting.  */
  alarm (2 * XP_PEER_WAIT_SECONDS);
  if (argc < 3)
    return XP_PEER_USAGE;
  if (dlsym (RTLD_DEFAULT, "xpthread_mode_np") != NULL)
    return XP_PEER_NOT_GLIBC;
  int fd = (int) number (argv[1]);
  area = mmap (NULL, sizeof *area, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (area == MAP_FAILED)
    return XP_PEER_MAP;
  __atomic_store_n (&area->peer_started, 1, __ATOMIC_RELEASE);

  if (argc == 4 && strcmp (argv[2], "init") == 0)
    return init_shared ((int) number (argv[3]));
  if (argc == 5 && strcmp (argv[2], "count") == 0)
    return count (number (argv[3]), number (argv[4]));
  if (argc == 4 && strcmp (argv[2], "pong") == 0)
    return pong (number (argv[3]));
  return XP_PEER_USAGE;
}
