/* Memory kept by thread churn.

   churn_rss_kib: growth of the resident set size after creating and
   joining N threads one after another (default 100,000), each of which
   mallocs and frees 64 blocks of assorted small sizes.  The baseline is
   taken after a warm-up, so the figure is what exited threads leave
   behind, not one-time set-up.  A thread library that forgets each
   thread's malloc cache grows by tens of KiB per thread; glibc stays flat.

   To keep a leaking library from exhausting the machine, the run stops
   once the growth passes -m MiB (default 2048) and reports the growth
   scaled to N threads, with a note saying so.

   usage: bench-churn [-n THREADS] [-m MAX_MIB]  */
#include "bench.h"
#include <pthread.h>
#include <stdint.h>

#define BLOCKS 64

static void *
churn_body (void *arg)
{
  uintptr_t seed = (uintptr_t) arg;
  void *p[BLOCKS];
  /* Sizes 8..1016 cover every small-block bin of glibc's malloc cache,
     visited in an order that differs from thread to thread.  */
  for (int i = 0; i < BLOCKS; i++)
    {
      size_t size = 8 + 16 * (size_t) ((i * 37 + seed) % BLOCKS);
      p[i] = malloc (size);
      if (p[i] == NULL)
        return (void *) 1;
      memset (p[i], i, size);
    }
  for (int i = 0; i < BLOCKS; i++)
    free (p[i]);
  return NULL;
}

static void
run_one (long i)
{
  pthread_t t;
  void *ret;
  int err = pthread_create (&t, NULL, churn_body, (void *) (uintptr_t) i);
  if (err != 0)
    bench_fail ("pthread_create", err);
  err = pthread_join (t, &ret);
  if (err != 0)
    bench_fail ("pthread_join", err);
  if (ret != NULL)
    {
      fprintf (stderr, "bench-churn: malloc failed in a thread\n");
      exit (1);
    }
}

int
main (int argc, char **argv)
{
  long n = 100000, max_mib = 2048;
  int opt;
  while ((opt = getopt (argc, argv, "n:m:")) != -1)
    switch (opt)
      {
      case 'n': n = bench_count (argv[0], optarg); break;
      case 'm': max_mib = bench_count (argv[0], optarg); break;
      default:
        fprintf (stderr, "usage: %s [-n THREADS] [-m MAX_MIB]\n", argv[0]);
        return 2;
      }

  bench_print_impl ();
  for (long i = 0; i < 100; i++)
    run_one (i);
  long base = bench_rss_kib ();
  if (base < 0)
    {
      fprintf (stderr, "bench-churn: cannot read /proc/self/statm\n");
      return 1;
    }

  long done = 0, growth = 0;
  double t0 = bench_now ();
  while (done < n)
    {
      run_one (done);
      done++;
      if (done % 1000 == 0)
        {
          growth = bench_rss_kib () - base;
          if (growth > max_mib * 1024)
            break;
        }
    }
  double secs = bench_now () - t0;
  growth = bench_rss_kib () - base;
  if (done < n)
    {
      printf ("# stopped after %ld threads at +%ld KiB; scaled to %ld\n",
              done, growth, n);
      growth = (long) ((double) growth * (double) n / (double) done);
    }
  printf ("churn_rss_kib %ld KiB lower%s\n", growth,
          done < n ? " estimated" : "");
  printf ("# %.0f bytes per thread, %.0f threads/s\n",
          (double) growth * 1024.0 / (double) n, (double) done / secs);
  return 0;
}
