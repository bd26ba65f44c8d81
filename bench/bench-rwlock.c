/* Read-write lock throughput, mostly reads and more writes.

   rwlock_read99_2t_rate, rwlock_read99_4t_rate: 2 and 4 threads each do
   -n operations on one lock: every 100th a write (all words of a small
   table incremented), the others reads (the table summed); operations
   per second, all threads together.
   rwlock_read90_4t_rate, rwlock_read50_2t_rate: the same with every 10th
   and every 2nd operation a write, where counting readers per CPU no
   longer pays (xpthread's writers turn it off).

   usage: bench-rwlock [-n OPS_PER_THREAD]  */
#include "bench.h"
#include <pthread.h>

#define WORDS 8

static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static unsigned long table[WORDS];
static long ops = 2000000;
static long write_every;

static void *
worker (void *arg)
{
  unsigned long seen = 0;
  for (long i = 1; i <= ops; i++)
    if (i % write_every == 0)
      {
        pthread_rwlock_wrlock (&lock);
        for (int w = 0; w < WORDS; w++)
          table[w]++;
        pthread_rwlock_unlock (&lock);
      }
    else
      {
        pthread_rwlock_rdlock (&lock);
        for (int w = 0; w < WORDS; w++)
          seen += table[w];
        pthread_rwlock_unlock (&lock);
      }
  return (void *) seen;
}

static double
run (int threads, int percent_read)
{
  pthread_t t[8];
  write_every = 100 / (100 - percent_read);
  for (int w = 0; w < WORDS; w++)
    table[w] = 0;
  double t0 = bench_now ();
  for (int i = 0; i < threads; i++)
    {
      int err = pthread_create (&t[i], NULL, worker, NULL);
      if (err != 0)
        bench_fail ("pthread_create", err);
    }
  for (int i = 0; i < threads; i++)
    pthread_join (t[i], NULL);
  double rate = (double) ops * threads / (bench_now () - t0);
  for (int w = 1; w < WORDS; w++)
    if (table[w] != table[0])
      {
        fprintf (stderr, "bench-rwlock: torn table\n");
        exit (1);
      }
  printf ("# check writes_read%d_%dt %lu\n", percent_read, threads,
          table[0]);
  return rate;
}

int
main (int argc, char **argv)
{
  int opt;
  while ((opt = getopt (argc, argv, "n:")) != -1)
    switch (opt)
      {
      case 'n': ops = bench_count (argv[0], optarg); break;
      default:
        fprintf (stderr, "usage: %s [-n OPS_PER_THREAD]\n", argv[0]);
        return 2;
      }
  bench_print_impl ();
  bench_metric ("rwlock_read99_2t_rate", run (2, 99), "ops/s", 1);
  bench_metric ("rwlock_read99_4t_rate", run (4, 99), "ops/s", 1);
  bench_metric ("rwlock_read90_4t_rate", run (4, 90), "ops/s", 1);
  bench_metric ("rwlock_read50_2t_rate", run (2, 50), "ops/s", 1);
  return 0;
}
