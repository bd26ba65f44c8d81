/* Mutex and condition variable performance.

   uncontended_pair_ns: one thread, lock + unlock of a default mutex
   through the public API; nanoseconds per pair.

   contended_T<threads>_cs<ns>: <threads> threads each loop { lock; a
   critical section of about <ns> ns; unlock; a short pause } on one
   default mutex (or the kind given with -k) for -s seconds; acquisitions
   per second, all threads together.  fairness_T<threads>_cs<ns> is the
   fewest acquisitions of any thread divided by the most (1 is perfectly
   fair).

   cond_pingpong_rate: two threads hand a token back and forth through a
   mutex and two condition variables; round trips per second.

   With -k adaptive every metric name starts with "adaptive_".  A C
   library without PTHREAD_MUTEX_ADAPTIVE_NP (musl) refuses -k adaptive.

   usage: bench-mutex [-k default|adaptive] [-s SECONDS]  */
#include "bench.h"
#include <pthread.h>
#include <stdatomic.h>

static pthread_mutex_t lock;
/* Metric name prefix: "" for the default mutex, "adaptive_" for -k.  */
static const char *prefix = "";
static double seconds_per_cell = 0.3;
static volatile unsigned long sink;
static double spins_per_ns;

/* Busy work of a calibrated length, standing for a critical section.  */
static void
work (long spins)
{
  for (long i = 0; i < spins; i++)
    sink++;
}

static void
calibrate (void)
{
  long n = 10 * 1000 * 1000;
  double t0 = bench_now ();
  work (n);
  spins_per_ns = n / ((bench_now () - t0) * 1e9);
}

static double
uncontended_pair_ns (void)
{
  long n = 20 * 1000 * 1000;
  double t0 = bench_now ();
  for (long i = 0; i < n; i++)
    {
      pthread_mutex_lock (&lock);
      pthread_mutex_unlock (&lock);
    }
  return (bench_now () - t0) * 1e9 / n;
}

struct contender
{
  pthread_t thread;
  long cs_spins;
  long count;
};

static atomic_int go, stop;

static void *
contend (void *arg)
{
  struct contender *c = arg;
  long count = 0;
  while (!atomic_load_explicit (&go, memory_order_acquire))
    ;
  while (!atomic_load_explicit (&stop, memory_order_relaxed))
    {
      pthread_mutex_lock (&lock);
      work (c->cs_spins);
      pthread_mutex_unlock (&lock);
      count++;
      /* Some work outside, or one thread would re-take the lock at once
         and the benchmark would measure nothing but that.  */
      work (20);
    }
  c->count = count;
  return NULL;
}

static void
contended_cell (int threads, int cs_ns)
{
  struct contender c[threads];
  atomic_store (&go, 0);
  atomic_store (&stop, 0);
  for (int i = 0; i < threads; i++)
    {
      c[i].cs_spins = (long) (cs_ns * spins_per_ns);
      int err = pthread_create (&c[i].thread, NULL, contend, &c[i]);
      if (err != 0)
        bench_fail ("pthread_create", err);
    }
  double t0 = bench_now ();
  atomic_store_explicit (&go, 1, memory_order_release);
  while (bench_now () - t0 < seconds_per_cell)
    usleep (10000);
  atomic_store (&stop, 1);
  double elapsed = bench_now () - t0;
  long total = 0, least = -1, most = 0;
  for (int i = 0; i < threads; i++)
    {
      pthread_join (c[i].thread, NULL);
      total += c[i].count;
      if (least < 0 || c[i].count < least)
        least = c[i].count;
      if (c[i].count > most)
        most = c[i].count;
    }
  char name[64];
  snprintf (name, sizeof name, "%scontended_T%d_cs%d", prefix, threads,
            cs_ns);
  bench_metric (name, total / elapsed, "ops/s", 1);
  snprintf (name, sizeof name, "%sfairness_T%d_cs%d", prefix, threads,
            cs_ns);
  bench_metric (name, most > 0 ? (double) least / most : 0, "min/max", 1);
}

static pthread_mutex_t pp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pp_cond[2] = { PTHREAD_COND_INITIALIZER,
                                     PTHREAD_COND_INITIALIZER };
static int pp_turn;
static long pp_rounds;

static void *
pingpong_side (void *arg)
{
  int me = (int) (long) arg;
  pthread_mutex_lock (&pp_lock);
  for (long i = 0; i < pp_rounds; i++)
    {
      while (pp_turn != me)
        pthread_cond_wait (&pp_cond[me], &pp_lock);
      pp_turn = !me;
      pthread_cond_signal (&pp_cond[!me]);
    }
  pthread_mutex_unlock (&pp_lock);
  return NULL;
}

static double
cond_pingpong_rate (long rounds)
{
  pthread_t t[2];
  pp_rounds = rounds;
  pp_turn = 0;
  double t0 = bench_now ();
  for (long i = 0; i < 2; i++)
    pthread_create (&t[i], NULL, pingpong_side, (void *) i);
  for (int i = 0; i < 2; i++)
    pthread_join (t[i], NULL);
  return rounds / (bench_now () - t0);
}

int
main (int argc, char **argv)
{
  int opt;
  pthread_mutexattr_t attr;
  pthread_mutexattr_init (&attr);
  while ((opt = getopt (argc, argv, "k:s:")) != -1)
    if (opt == 'k' && strcmp (optarg, "adaptive") == 0)
      {
#ifdef __GLIBC__
        pthread_mutexattr_settype (&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
        prefix = "adaptive_";
#else
        fprintf (stderr, "%s: no adaptive mutex kind in this C library\n",
                 argv[0]);
        return 2;
#endif
      }
    else if (opt == 's')
      seconds_per_cell = atof (optarg);
    else if (opt != 'k' || strcmp (optarg, "default") != 0)
      {
        fprintf (stderr, "usage: %s [-k default|adaptive] [-s SECONDS]\n",
                 argv[0]);
        return 2;
      }
  pthread_mutex_init (&lock, &attr);
  bench_print_impl ();
  calibrate ();
  char name[64];
  snprintf (name, sizeof name, "%suncontended_pair_ns", prefix);
  bench_metric (name, uncontended_pair_ns (), "ns", 0);
  static const int threads[] = { 2, 4, 8 };
  static const int cs[] = { 0, 50, 1000 };
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
      contended_cell (threads[i], cs[j]);
  snprintf (name, sizeof name, "%scond_pingpong_rate", prefix);
  bench_metric (name, cond_pingpong_rate (100000), "round-trips/s", 1);
  return 0;
}
