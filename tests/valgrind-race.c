/* A racy program for tests/valgrind.sh: two threads increment a counter
   without a lock, which helgrind and DRD must report.  The mutex the
   threads also take guards something else, so that the lock is known to
   the tools and still does not order the counter.  */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static long guarded;
static long counter;   /* the race */

static void *
worker (void *arg)
{
  for (int i = 0; i < 10; i++)
    {
      pthread_mutex_lock (&mutex);
      guarded++;
      pthread_mutex_unlock (&mutex);
      counter++;
    }
  return arg;
}

int
main (void)
{
  pthread_t a, b;
  pthread_create (&a, NULL, worker, NULL);
  pthread_create (&b, NULL, worker, NULL);
  pthread_join (a, NULL);
  pthread_join (b, NULL);
  printf ("guarded %ld\n", guarded);
  return guarded == 20 ? 0 : 1;
}
