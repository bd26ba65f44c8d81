/* The program tests/probes.sh traces: a worker thread takes a mutex ROUNDS
   times, each time while the main thread holds it, and the main thread
   lets go only once the lock word says the worker sleeps on it (2, glibc's
   protocol too), so that every one of those acquisitions waited: the
   mutex_entry and mutex_acquired probes must fire ROUNDS times for this
   mutex, whose address the program prints first.  The rounds are handed
   over through atomics, not pthread objects, which would fire probes of
   their own.  A plain glibc program, run under LD_PRELOAD.  */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int started, finished;   /* the last round each side began/ended */

static void
nap (void)
{
  struct timespec ts = { 0, 50000 };
  nanosleep (&ts, NULL);
}

static void
await (int *word, int value)
{
  while (__atomic_load_n (word, __ATOMIC_ACQUIRE) != value)
    nap ();
}

static void *
worker (void *arg)
{
  int rounds = *(int *) arg;
  for (int i = 1; i <= rounds; i++)
    {
      await (&started, i);
      pthread_mutex_lock (&lock);
      pthread_mutex_unlock (&lock);
      __atomic_store_n (&finished, i, __ATOMIC_RELEASE);
    }
  return NULL;
}

int
main (int argc, char **argv)
{
  int rounds = argc > 1 ? atoi (argv[1]) : 100;
  printf ("mutex %lu\n", (unsigned long) (uintptr_t) &lock);
  fflush (stdout);
  pthread_t t;
  if (pthread_create (&t, NULL, worker, &rounds) != 0)
    return 1;
  for (int i = 1; i <= rounds; i++)
    {
      pthread_mutex_lock (&lock);
      __atomic_store_n (&started, i, __ATOMIC_RELEASE);
      while ((__atomic_load_n (&lock.__data.__lock, __ATOMIC_RELAXED) & 3)
             != 2)
        nap ();
      pthread_mutex_unlock (&lock);
      await (&finished, i);
    }
  if (pthread_join (t, NULL) != 0)
    return 1;
  printf ("rounds %d\n", rounds);
  return 0;
}
