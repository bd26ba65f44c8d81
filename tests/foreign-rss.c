/* Threads started with glibc's pthread_create (tests/foreign-start.c),
   each calling into the pthread API the program binds to (so that
   xpthread, when preloaded, gives it a descriptor) and joined through it.
   Prints the resident set after WARM and after CYCLES such threads, in
   KiB: what the threads left behind.  */
#define _GNU_SOURCE
#include "foreign-start.h"
#include "rss.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long count;

static void *
touch_the_api (void *arg)
{
  pthread_mutex_lock (&lock);
  count++;
  pthread_mutex_unlock (&lock);
  return pthread_equal (pthread_self (), pthread_self ()) ? arg : NULL;
}

static int
cycles (long n)
{
  for (long i = 0; i < n; i++)
    {
      pthread_t t;
      void *result;
      if (xp_foreign_start (&t, touch_the_api, &count) != 0
          || pthread_join (t, &result) != 0 || result != &count)
        {
          fprintf (stderr, "cycle %ld failed\n", i);
          return 1;
        }
    }
  return 0;
}

int
main (int argc, char **argv)
{
  long warm = argc > 1 ? atol (argv[1]) : 1000;
  long total = argc > 2 ? atol (argv[2]) : 100000;
  if (cycles (warm) != 0)
    return 1;
  long before = xp_test_rss_kib ();
  if (cycles (total - warm) != 0 || count != total)
    return 1;
  printf ("%ld %ld\n", before, xp_test_rss_kib ());
  return 0;
}
