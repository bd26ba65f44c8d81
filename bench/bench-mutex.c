/* Mutex and condition variable performance.

   uncontended_pair_ns: one thread, lock + unlock of a default mutex
   through the public API; nanoseconds per pair (median of 5 runs).

   contended_T<threads>_cs<ns>: <threads> threads each loop { lock; add
   one to a counter the mutex protects (on a cache line of its own) and
   busy work of about <ns> ns; unlock; a short pause } on one default
   mutex (or the kind given with -k), which has a cache line of its own;
   acquisitions per second, all threads together.  fairness_T<threads>_cs
   <ns> is the fewest acquisitions of any thread divided by the most (1 is
   perfectly fair), and cpu_T<threads>_cs<ns> the CPU time (user and
   system, all threads) per acquisition, in ns.  Every cell runs -R times for -s seconds, the rounds
   interleaved (every cell once, then every cell again, ...) so that a
   burst of load elsewhere on the machine spreads over the cells; the
   metrics are the medians of the rounds, and a note gives each cell's
   spread.  Every run of a cell starts on a freshly initialised mutex, so
   that no cell inherits what a spinning mutex learnt in the one before
   (glibc's adaptive kind and xpthread keep a spin estimate in the
   mutex).  The busy work touches no shared memory and is calibrated on
   the fastest of several runs, so that a loaded moment at start-up does
   not shorten the critical sections of one run.  The protected counter
   doubles as a check of mutual exclusion.

   cond_pingpong_rate: two threads hand a token back and forth through a
   mutex and two condition variables; round trips per second.

   -L runs the lock validator's set instead (bench/run lockdep runs it
   with xpthread, with xpthread and XPTHREAD_LOCKDEP=1, with glibc, and
   built with gcc -fsanitize=thread under TSan's deadlock detector), in
   a process that keeps a second, idle thread (as -t): after a warm-up
   that shows the validator every lock and every order the set takes,
   each measured as wall and CPU time (the process's, all threads
   together), median of -R runs:
     uncontended_pair_ns, _cpu_ns: one thread, one default mutex, per
       lock + unlock pair;
     nested_pair_ns, _cpu_ns: one thread, a static mutex held while it
       takes and releases the default mutex, per both pairs (an order
       the validator has seen: the "lock chains" of a real program);
     contended_T4_cs<ns>_s, _cpu_s: -N acquisitions (default 2000000)
       shared by 4 threads as in the contended cells, cs 0 and 50 ns; a
       fixed amount of work, so that both times are comparable;
     once_contended_pair_ns, _cpu_ns: the pair again on that mutex, now
       that it has been contended (the contention profiler watches a
       lock from its first contention on).

   With -k KIND every metric name starts with "KIND_".  A C library
   without PTHREAD_MUTEX_ADAPTIVE_NP (musl) refuses -k adaptive.

   -w also times every lock call of the contended cells and prints, per
   cell, longest_wait_T<t>_cs<ns> (the longest of all threads, median of
   the rounds) and thread_longest_wait_T<t>_cs<ns> (the median thread's
   longest), in milliseconds: how long a waiter can be kept waiting,
   which the rates and fairness do not show.  The clock reads cost time
   outside the lock, so the rates of a -w run are not those of a run
   without it.

   -w also gives p999_wait_T<t>_cs<ns>, the 99.9th percentile of every
   wait of every thread together (median of the rounds), in milliseconds,
   from a histogram with 16 steps per doubling (the bucket's upper edge,
   at most 6% high).

   -c T:NS runs only that cell (repeatable); -c T:NS:WORK makes the work
   between two acquisitions of each thread about WORK ns instead of the
   short pause, and its metrics end in _w<WORK>; a final 'r' (T:NS:WORKr)
   draws the length of every critical section and every pause uniformly
   from 0 to twice the figure, and the names end in 'r'.

   Built with -DBENCH_ABSL and bench/absl-mutex.cc (bench/mutex-cells
   does so), the cells lock Abseil's absl::Mutex instead, on glibc's
   threads; -k and -L are then refused.

   -u PAIRS runs only PAIRS
   uncontended pairs and prints nothing else, for counting instructions
   (bench/count-mutex runs it under callgrind); -t then keeps a second,
   idle thread alive meanwhile, so that the count is that of a
   multi-threaded process.

   usage: bench-mutex [-k default|adaptive|errorcheck|recursive]
                      [-s SECONDS] [-R ROUNDS] [-w] [-c T:NS[:WORK[r]]]...
                      [-u PAIRS [-t]] [-L [-N OPS]]  */
#include "bench.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define LINE 64

/* The mutex and the data it protects, each on a cache line of its own.  */
static struct
{
  _Alignas (LINE) pthread_mutex_t lock;
  _Alignas (LINE) unsigned long protected_count;
  _Alignas (LINE) char end;
} shared;

/* The lock the contended cells and the uncontended pair take.  */
#ifdef BENCH_ABSL
void bench_absl_reset (void);
void bench_absl_lock (void);
void bench_absl_unlock (void);
# define cell_lock_reset() bench_absl_reset ()
# define cell_lock() bench_absl_lock ()
# define cell_unlock() bench_absl_unlock ()
# define BENCH_LOCK_IS_PTHREAD 0
#else
# define BENCH_LOCK_IS_PTHREAD 1
# define cell_lock_reset() \
  (pthread_mutex_destroy (&shared.lock), \
   pthread_mutex_init (&shared.lock, &lock_attr))
# define cell_lock() pthread_mutex_lock (&shared.lock)
# define cell_unlock() pthread_mutex_unlock (&shared.lock)
#endif

static pthread_mutexattr_t lock_attr;

/* Metric name prefix: "" for the default mutex, "KIND_" for -k.  */
static const char *prefix = "";
static double seconds_per_cell = 0.2;
static int rounds = 3;
static double iters_per_ns;
static bool timing_waits;

/* Busy work of a calibrated length, standing for a critical section: a
   loop the compiler must keep, touching no memory.  */
static void
work (long iters)
{
  for (long i = 0; i < iters; i++)
    __asm__ volatile ("" : : "r" (i));
}

static void
calibrate (void)
{
  long n = 2 * 1000 * 1000;
  double best = 1e9;
  for (int i = 0; i < 15; i++)
    {
      double t0 = bench_now ();
      work (n);
      double t = bench_now () - t0;
      if (t < best)
        best = t;
    }
  iters_per_ns = n / (best * 1e9);
}

/* The loop bench/count-mutex counts: exactly PAIRS lock + unlock pairs
   and the loop around them.  */
__attribute__ ((noinline)) void bench_uncontended_loop (long pairs);
__attribute__ ((noinline)) void
bench_uncontended_loop (long pairs)
{
  for (long i = 0; i < pairs; i++)
    {
      cell_lock ();
      cell_unlock ();
    }
}

static int
compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median (double *v, int n)
{
  qsort (v, n, sizeof *v, compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double
uncontended_pair_ns (void)
{
  long n = 4 * 1000 * 1000;
  double ns[5];
  for (int i = 0; i < 5; i++)
    {
      double t0 = bench_now ();
      bench_uncontended_loop (n);
      ns[i] = (bench_now () - t0) * 1e9 / n;
    }
  return median (ns, 5);
}

/* Waits, in a histogram of 16 buckets per doubling of nanoseconds: a
   thread counts every wait without allocating or sharing a line.  */
#define WAIT_STEPS 16
#define WAIT_BUCKETS (WAIT_STEPS + 40 * WAIT_STEPS)

static unsigned
wait_bucket (uint64_t ns)
{
  if (ns < WAIT_STEPS)
    return (unsigned) ns;
  int exp = 63 - __builtin_clzll (ns);
  unsigned step = (unsigned) (ns >> (exp - 4)) & (WAIT_STEPS - 1);
  unsigned b = WAIT_STEPS + (exp - 4) * WAIT_STEPS + step;
  return b < WAIT_BUCKETS ? b : WAIT_BUCKETS - 1;
}

/* The longest wait bucket B holds, in nanoseconds.  */
static double
wait_bucket_top (unsigned b)
{
  if (b < WAIT_STEPS)
    return b;
  unsigned exp = (b - WAIT_STEPS) / WAIT_STEPS + 4;
  unsigned step = (b - WAIT_STEPS) % WAIT_STEPS;
  return (double) ((uint64_t) (WAIT_STEPS + step + 1) << (exp - 4)) - 1;
}

static uint64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* The lengths of a thread's critical sections and pauses, in loop
   iterations: fixed, or drawn uniformly from 0 to twice the mean.  */
struct lengths
{
  long cs_iters, work_iters;
  bool random;
  uint64_t rng;
};

static long
draw (struct lengths *l, long mean)
{
  if (!l->random || mean == 0)
    return mean;
  l->rng ^= l->rng << 13;
  l->rng ^= l->rng >> 7;
  l->rng ^= l->rng << 17;
  return (long) (((l->rng >> 32) * (uint64_t) (2 * mean + 1)) >> 32);
}

struct contender
{
  pthread_t thread;
  struct lengths len;
  long count;
  uint64_t longest_wait_ns;     /* with -w */
  unsigned long *waits;         /* WAIT_BUCKETS counts, with -w */
};

static atomic_int go, stop;

static void
count_wait (struct contender *c, uint64_t ns)
{
  if (ns > c->longest_wait_ns)
    c->longest_wait_ns = ns;
  c->waits[wait_bucket (ns)]++;
}

static void *
contend (void *arg)
{
  struct contender *c = arg;
  long count = 0;
  while (!atomic_load_explicit (&go, memory_order_acquire))
    ;
  while (!atomic_load_explicit (&stop, memory_order_relaxed))
    {
      uint64_t asked = timing_waits ? now_ns () : 0;
      cell_lock ();
      if (timing_waits)
        count_wait (c, now_ns () - asked);
      shared.protected_count++;
      work (draw (&c->len, c->len.cs_iters));
      cell_unlock ();
      count++;
      /* Some work outside, or one thread would re-take the lock at once
         and the benchmark would measure nothing but that.  */
      work (draw (&c->len, c->len.work_iters));
    }
  c->count = count;
  return NULL;
}

#define MAX_CELLS 32
#define MAX_ROUNDS 100
#define MAX_THREADS 64

/* WORK_NS 0: the short pause of the first cells (20 iterations), whose
   metric names have no _w part.  */
struct cell
{
  int threads, cs_ns, work_ns;
  bool random;
  double rate[MAX_ROUNDS], fairness[MAX_ROUNDS], cpu_ns[MAX_ROUNDS];
  double longest_wait_ms[MAX_ROUNDS], thread_longest_wait_ms[MAX_ROUNDS];
  double p999_wait_ms[MAX_ROUNDS];
};

static unsigned long wait_counts[MAX_THREADS][WAIT_BUCKETS];

/* The 99.9th percentile of the waits of THREADS threads, in ms.  */
static double
p999_wait_ms (int threads)
{
  unsigned long total = 0, seen = 0;
  for (int i = 0; i < threads; i++)
    for (unsigned b = 0; b < WAIT_BUCKETS; b++)
      total += wait_counts[i][b];
  for (unsigned b = 0; b < WAIT_BUCKETS; b++)
    {
      for (int i = 0; i < threads; i++)
        seen += wait_counts[i][b];
      if (total > 0 && seen * 1000 >= total * 999)
        return wait_bucket_top (b) * 1e-6;
    }
  return 0;
}

static void
start_contenders (struct cell *cell, struct contender *c)
{
  for (int i = 0; i < cell->threads; i++)
    {
      c[i].len.cs_iters = (long) (cell->cs_ns * iters_per_ns);
      c[i].len.work_iters = cell->work_ns > 0
                            ? (long) (cell->work_ns * iters_per_ns) : 20;
      c[i].len.random = cell->random;
      c[i].len.rng = 0x9e3779b97f4a7c15ull * (uint64_t) (i + 1);
      c[i].longest_wait_ns = 0;
      c[i].waits = wait_counts[i];
      memset (wait_counts[i], 0, sizeof wait_counts[i]);
      int err = pthread_create (&c[i].thread, NULL, contend, &c[i]);
      if (err != 0)
        bench_fail ("pthread_create", err);
    }
}

static void
run_cell (struct cell *cell, int round)
{
  int threads = cell->threads;
  cell_lock_reset ();
  struct contender c[threads];
  atomic_store (&go, 0);
  atomic_store (&stop, 0);
  shared.protected_count = 0;
  start_contenders (cell, c);
  double cpu0 = bench_cpu_seconds ();
  double t0 = bench_now ();
  atomic_store_explicit (&go, 1, memory_order_release);
  while (bench_now () - t0 < seconds_per_cell)
    usleep (10000);
  atomic_store (&stop, 1);
  double elapsed = bench_now () - t0;
  long total = 0, least = -1, most = 0;
  double waits_ms[threads];
  for (int i = 0; i < threads; i++)
    {
      pthread_join (c[i].thread, NULL);
      waits_ms[i] = c[i].longest_wait_ns * 1e-6;
      total += c[i].count;
      if (least < 0 || c[i].count < least)
        least = c[i].count;
      if (c[i].count > most)
        most = c[i].count;
    }
  if ((unsigned long) total != shared.protected_count)
    {
      fprintf (stderr, "bench-mutex: T%d cs%d: %ld acquisitions but the "
               "protected counter says %lu: no mutual exclusion\n",
               threads, cell->cs_ns, total, shared.protected_count);
      exit (1);
    }
  cell->rate[round] = total / elapsed;
  cell->cpu_ns[round] = total > 0 ? (bench_cpu_seconds () - cpu0) * 1e9
                                    / total : 0;
  cell->fairness[round] = most > 0 ? (double) least / most : 0;
  cell->p999_wait_ms[round] = p999_wait_ms (threads);
  cell->longest_wait_ms[round] = waits_ms[0];
  for (int i = 1; i < threads; i++)
    if (waits_ms[i] > cell->longest_wait_ms[round])
      cell->longest_wait_ms[round] = waits_ms[i];
  cell->thread_longest_wait_ms[round] = median (waits_ms, threads);
}

/* Prints the median over the rounds of V as METRIC_T<t>_cs<ns>[_w<w>][r].  */
static void
cell_metric (const struct cell *cell, const char *metric, double *v,
             const char *unit, int higher)
{
  char name[96], work[16] = "";
  if (cell->work_ns > 0)
    snprintf (work, sizeof work, "_w%d", cell->work_ns);
  snprintf (name, sizeof name, "%s%s_T%d_cs%d%s%s", prefix, metric,
            cell->threads, cell->cs_ns, work, cell->random ? "r" : "");
  bench_metric (name, median (v, rounds), unit, higher);
}

static void
report_cell (struct cell *cell)
{
  double lo = cell->rate[0], hi = cell->rate[0];
  for (int r = 1; r < rounds; r++)
    {
      if (cell->rate[r] < lo)
        lo = cell->rate[r];
      if (cell->rate[r] > hi)
        hi = cell->rate[r];
    }
  double rate = median (cell->rate, rounds);
  printf ("# T%d cs%d work%d%s: %d rounds of %g s, ops/s median %.4g, "
          "spread (max-min)/2/median %.0f%%\n", cell->threads, cell->cs_ns,
          cell->work_ns, cell->random ? " random" : "", rounds,
          seconds_per_cell, rate, rate > 0 ? 50 * (hi - lo) / rate : 0);
  cell_metric (cell, "contended", cell->rate, "ops/s", 1);
  cell_metric (cell, "fairness", cell->fairness, "min/max", 1);
  cell_metric (cell, "cpu", cell->cpu_ns, "ns", 0);
  if (!timing_waits)
    return;
  cell_metric (cell, "longest_wait", cell->longest_wait_ms, "ms", 0);
  cell_metric (cell, "thread_longest_wait", cell->thread_longest_wait_ms,
               "ms", 0);
  cell_metric (cell, "p999_wait", cell->p999_wait_ms, "ms", 0);
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

/* ---- -L: the lock validator's set ------------------------------------ */

static pthread_mutex_t nest_outer = PTHREAD_MUTEX_INITIALIZER;

/* CPU time of the whole process, all threads, in seconds.  */
static double
cpu_now (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

__attribute__ ((noinline)) static void
nested_loop (long iterations)
{
  for (long i = 0; i < iterations; i++)
    {
      pthread_mutex_lock (&nest_outer);
      pthread_mutex_lock (&shared.lock);
      pthread_mutex_unlock (&shared.lock);
      pthread_mutex_unlock (&nest_outer);
    }
}

/* Runs LOOP (N) -R times; prints NAME_ns and NAME_cpu_ns, the medians of
   wall and CPU nanoseconds per iteration.  */
static void
timed_loops (const char *name, void (*loop) (long), long n)
{
  double wall[MAX_ROUNDS], cpu[MAX_ROUNDS];
  char metric[64];
  loop (n / 16);                /* the warm-up */
  for (int r = 0; r < rounds; r++)
    {
      double c0 = cpu_now (), t0 = bench_now ();
      loop (n);
      wall[r] = (bench_now () - t0) * 1e9 / n;
      cpu[r] = (cpu_now () - c0) * 1e9 / n;
    }
  snprintf (metric, sizeof metric, "%s%s_ns", prefix, name);
  bench_metric (metric, median (wall, rounds), "ns", 0);
  snprintf (metric, sizeof metric, "%s%s_cpu_ns", prefix, name);
  bench_metric (metric, median (cpu, rounds), "ns", 0);
}

struct fixed_contender
{
  pthread_t thread;
  long cs_iters, iterations;
};

static void *
contend_fixed (void *arg)
{
  struct fixed_contender *c = arg;
  while (!atomic_load_explicit (&go, memory_order_acquire))
    ;
  for (long i = 0; i < c->iterations; i++)
    {
      pthread_mutex_lock (&shared.lock);
      shared.protected_count++;
      work (c->cs_iters);
      pthread_mutex_unlock (&shared.lock);
      work (20);
    }
  return NULL;
}

/* THREADS threads share OPS acquisitions; *WALL and *CPU get the
   seconds the work took.  */
static void
run_fixed (int threads, int cs_ns, long ops, double *wall, double *cpu)
{
  struct fixed_contender c[threads];
  atomic_store (&go, 0);
  shared.protected_count = 0;
  for (int i = 0; i < threads; i++)
    {
      c[i].cs_iters = (long) (cs_ns * iters_per_ns);
      c[i].iterations = ops / threads;
      int err = pthread_create (&c[i].thread, NULL, contend_fixed, &c[i]);
      if (err != 0)
        bench_fail ("pthread_create", err);
    }
  double c0 = cpu_now (), t0 = bench_now ();
  atomic_store_explicit (&go, 1, memory_order_release);
  for (int i = 0; i < threads; i++)
    pthread_join (c[i].thread, NULL);
  *wall = bench_now () - t0;
  *cpu = cpu_now () - c0;
  if (shared.protected_count != (unsigned long) (ops / threads * threads))
    {
      fprintf (stderr, "bench-mutex: -L T%d cs%d: %lu acquisitions counted, "
               "%ld made: no mutual exclusion\n", threads, cs_ns,
               shared.protected_count, ops / threads * threads);
      exit (1);
    }
}

static void *idle_thread (void *arg);

static void
lockdep_set (long ops)
{
  /* Lock chains matter in processes with threads, where the C library
     cannot skip the atomic instructions of a lock as it may while the
     process has only one thread: a second, idle thread throughout.  */
  pthread_t idle;
  int err = pthread_create (&idle, NULL, idle_thread, NULL);
  if (err != 0)
    bench_fail ("pthread_create", err);
  timed_loops ("uncontended_pair", bench_uncontended_loop, 4000000);
  timed_loops ("nested_pair", nested_loop, 2000000);
  static const int cs[] = { 0, 50 };
  double wall[2][MAX_ROUNDS], cpu[2][MAX_ROUNDS];
  double w, t;
  run_fixed (4, 0, ops / 16, &w, &t);           /* the warm-up */
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < 2; i++)
      run_fixed (4, cs[i], ops, &wall[i][r], &cpu[i][r]);
  for (int i = 0; i < 2; i++)
    {
      char name[64];
      snprintf (name, sizeof name, "%scontended_T4_cs%d_s", prefix, cs[i]);
      bench_metric (name, median (wall[i], rounds), "s", 0);
      snprintf (name, sizeof name, "%scontended_T4_cs%d_cpu_s", prefix,
                cs[i]);
      bench_metric (name, median (cpu[i], rounds), "s", 0);
    }
  timed_loops ("once_contended_pair", bench_uncontended_loop, 4000000);
  printf ("# check ops %ld\n", ops / 4 * 4);
}

static void *
idle_thread (void *arg)
{
  for (;;)
    pause ();
  return arg;
}

/* T:NS, T:NS:WORK or T:NS:WORKr.  */
static bool
parse_cell (const char *spec, struct cell *cell)
{
  char random[2] = "";
  int n = sscanf (spec, "%d:%d:%d%1[r]", &cell->threads, &cell->cs_ns,
                  &cell->work_ns, random);
  if (n == 2)
    cell->work_ns = 0;
  cell->random = n == 4;
  return n >= 2 && cell->threads >= 1 && cell->threads <= MAX_THREADS
         && cell->cs_ns >= 0 && (n == 2 || cell->work_ns > 0);
}

static __attribute__ ((noreturn)) void
usage (const char *prog)
{
  fprintf (stderr, "usage: %s [-k default|adaptive|errorcheck|recursive] "
           "[-s SECONDS] [-R ROUNDS] [-w] [-c THREADS:NS[:WORK[r]]]... "
           "[-u PAIRS [-t]] [-L [-N OPS]]\n",
           prog);
  exit (2);
}

int
main (int argc, char **argv)
{
  static struct cell cells[MAX_CELLS];
  int ncells = 0;
  long count_pairs = 0;
  int idle = 0, lockdep = 0;
  long ops = 2000000;
  int opt;
  pthread_mutexattr_init (&lock_attr);
  while ((opt = getopt (argc, argv, "k:s:R:wc:u:tLN:")) != -1)
    if (opt == 'k')
      {
        static const struct { const char *name; int type; } kinds[] = {
          { "default", PTHREAD_MUTEX_DEFAULT },
#ifdef __GLIBC__
          { "adaptive", PTHREAD_MUTEX_ADAPTIVE_NP },
#endif
          { "errorcheck", PTHREAD_MUTEX_ERRORCHECK },
          { "recursive", PTHREAD_MUTEX_RECURSIVE },
        };
        size_t i;
        for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
          if (strcmp (optarg, kinds[i].name) == 0)
            break;
        if (i == sizeof kinds / sizeof kinds[0])
          {
            fprintf (stderr, "%s: no mutex kind '%s' in this C library\n",
                     argv[0], optarg);
            return 2;
          }
        pthread_mutexattr_settype (&lock_attr, kinds[i].type);
        if (i > 0)
          {
            static char buf[32];
            snprintf (buf, sizeof buf, "%s_", optarg);
            prefix = buf;
          }
      }
    else if (opt == 's')
      seconds_per_cell = atof (optarg);
    else if (opt == 'R')
      {
        rounds = (int) bench_count (argv[0], optarg);
        if (rounds > MAX_ROUNDS)
          usage (argv[0]);
      }
    else if (opt == 'w')
      timing_waits = true;
    else if (opt == 'c')
      {
        if (ncells == MAX_CELLS || !parse_cell (optarg, &cells[ncells++]))
          usage (argv[0]);
      }
    else if (opt == 'u')
      count_pairs = bench_count (argv[0], optarg);
    else if (opt == 't')
      idle = 1;
    else if (opt == 'L')
      lockdep = 1;
    else if (opt == 'N')
      ops = bench_count (argv[0], optarg);
    else
      usage (argv[0]);
  if (!BENCH_LOCK_IS_PTHREAD && (*prefix != '\0' || lockdep))
    {
      fprintf (stderr, "%s: -k and -L need the C library's mutex\n",
               argv[0]);
      return 2;
    }
  cell_lock_reset ();
  if (count_pairs > 0)
    {
      pthread_t t;
      int err = idle ? pthread_create (&t, NULL, idle_thread, NULL) : 0;
      if (err != 0)
        bench_fail ("pthread_create", err);
      bench_uncontended_loop (count_pairs);
      return 0;
    }
  bench_print_impl ();
  calibrate ();
  if (lockdep)
    {
      lockdep_set (ops);
      return 0;
    }
  char name[64];
  int all = ncells == 0;
  if (all)
    {
      snprintf (name, sizeof name, "%suncontended_pair_ns", prefix);
      bench_metric (name, uncontended_pair_ns (), "ns", 0);
      static const int threads[] = { 2, 4, 8 };
      static const int cs[] = { 0, 50, 1000 };
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
          {
            cells[ncells].threads = threads[i];
            cells[ncells++].cs_ns = cs[j];
          }
    }
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < ncells; i++)
      run_cell (&cells[i], r);
  for (int i = 0; i < ncells; i++)
    report_cell (&cells[i]);
  if (all && BENCH_LOCK_IS_PTHREAD)
    {
      snprintf (name, sizeof name, "%scond_pingpong_rate", prefix);
      bench_metric (name, cond_pingpong_rate (100000), "round-trips/s", 1);
    }
  return 0;
}
