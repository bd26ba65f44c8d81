/* Thread churn: create and join many short threads, each using malloc,
   and report how much the resident set grew.  glibc frees a thread's
   malloc cache when the thread exits; a thread implementation that loses
   it leaks tens of kilobytes per thread.  tests/churn.sh runs this with
   and without xpthread and compares the two figures.

   Usage: test-churn [threads]   (default 100000)
   Prints "rss-growth-kib N" after the run.  */
#define _GNU_SOURCE
#include "rss.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ALLOCATIONS = 64, WARM_UP = 1000 };

/* Returned by a thread whose malloc failed.  */
static char failed;

/* Sizes 16..1024 bytes, touched so that the pages are really used.  */
static void *
churn (void *p)
{
  (void) p;
  void *blocks[ALLOCATIONS];
  for (int i = 0; i < ALLOCATIONS; i++)
    {
      size_t size = 16 + (size_t) (i * 131 % 1009);
      blocks[i] = malloc (size);
      if (blocks[i] == NULL)
        return &failed;
      memset (blocks[i], i, size);
    }
  for (int i = 0; i < ALLOCATIONS; i++)
    free (blocks[i]);
  return NULL;
}

static int
run (long count)
{
  for (long i = 0; i < count; i++)
    {
      pthread_t t;
      void *result;
      int err = pthread_create (&t, NULL, churn, NULL);
      if (err != 0)
        {
          fprintf (stderr, "pthread_create: %s\n", strerror (err));
          return -1;
        }
      if (pthread_join (t, &result) != 0 || result != NULL)
        {
          fprintf (stderr, "thread %ld failed\n", i);
          return -1;
        }
    }
  return 0;
}

int
main (int argc, char **argv)
{
  long threads = argc > 1 ? strtol (argv[1], NULL, 10) : 100000;
  if (threads < WARM_UP)
    threads = WARM_UP;
  /* The first threads set up arenas and caches that stay; measure from
     after them.  */
  if (run (WARM_UP) != 0)
    return 1;
  long before = xp_test_rss_kib ();
  if (run (threads - WARM_UP) != 0)
    return 1;
  long after = xp_test_rss_kib ();
  if (before < 0 || after < 0)
    {
      fprintf (stderr, "cannot read VmRSS\n");
      return 1;
    }
  printf ("threads %ld rss-before-kib %ld rss-after-kib %ld\n", threads,
          before, after);
  printf ("rss-growth-kib %ld\n", after - before);
  return 0;
}
