/* Ping-pong through a condition variable and through semaphores, with the
   two threads placed three ways: where the kernel likes (free), both
   pinned to one CPU (same), and pinned to two different CPUs (apart).
   Each thread pins itself with sched_setaffinity once it has started, as
   a program that manages its own placement does.

   For each placement: round trips per second, and CPU time (user and
   system, both threads) per round trip.

   cond: two threads hand a turn back and forth under one mutex, each
   waiting on a condition variable of its own until it is its turn.
   sem: one thread posts "ping" and waits on "pong", the other the
   reverse.

   Built with -DBENCH_ABSL and bench/absl-mutex.cc (bench/mutex-cells
   --pingpong does so), the condition variable ping-pong runs on
   Abseil's absl::Mutex and absl::CondVar; Abseil has no semaphore, and
   that build refuses -w sem.

   usage: bench-pingpong [-n ROUNDS] [-w cond|sem] [-p free|same|apart]  */
#include "bench.h"
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>

enum placement { FREE, SAME, APART };
static const char *const placement_names[] = { "free", "same", "apart" };

/* The CPUs the process may run on at start, in order.  */
static int cpus[CPU_SETSIZE];
static int cpus_n;

static void
read_cpus (void)
{
  cpu_set_t set;
  if (sched_getaffinity (0, sizeof set, &set) != 0)
    bench_fail ("sched_getaffinity", errno);
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET (c, &set))
      cpus[cpus_n++] = c;
}

/* Side SIDE (0 or 1) of a ping-pong pins itself as PLACEMENT says.  */
static void
place (enum placement placement, int side)
{
  if (placement == FREE)
    return;
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpus[placement == APART ? side % cpus_n : 0], &set);
  if (sched_setaffinity (0, sizeof set, &set) != 0)
    bench_fail ("sched_setaffinity", errno);
}

static long rounds = 100000;
static enum placement placement;

/* The lock and condition variables of the cond ping-pong.  */
#ifdef BENCH_ABSL
void bench_absl_reset (void);
void bench_absl_lock (void);
void bench_absl_unlock (void);
void bench_absl_cond_wait (int which);
void bench_absl_cond_signal (int which);
# define pp_lock() bench_absl_lock ()
# define pp_unlock() bench_absl_unlock ()
# define pp_wait(which) bench_absl_cond_wait (which)
# define pp_signal(which) bench_absl_cond_signal (which)
# define HAVE_SEMAPHORES 0
#else
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed[2] = { PTHREAD_COND_INITIALIZER,
                                          PTHREAD_COND_INITIALIZER };
# define pp_lock() pthread_mutex_lock (&lock)
# define pp_unlock() pthread_mutex_unlock (&lock)
# define pp_wait(which) pthread_cond_wait (&turn_changed[which], &lock)
# define pp_signal(which) pthread_cond_signal (&turn_changed[which])
# define HAVE_SEMAPHORES 1
#endif
static int turn;

static void *
cond_side (void *arg)
{
  int me = (int) (long) arg;
  place (placement, me);
  pp_lock ();
  for (long i = 0; i < rounds; i++)
    {
      while (turn != me)
        pp_wait (me);
      turn = !me;
      pp_signal (!me);
    }
  pp_unlock ();
  return NULL;
}

static sem_t token[2];

static void *
sem_side (void *arg)
{
  int me = (int) (long) arg;
  place (placement, me);
  for (long i = 0; i < rounds; i++)
    {
      if (me == 0)
        sem_post (&token[1]);
      sem_wait (&token[me]);
      if (me == 1)
        sem_post (&token[0]);
    }
  return NULL;
}

/* Run SIDE in two threads; print the rate and the CPU per round trip as
   PREFIX_PLACEMENT_rate and _cpu_ns.  */
static void
measure (const char *prefix, void *(*side) (void *))
{
  pthread_t t[2];
  double t0 = bench_now (), c0 = bench_cpu_seconds ();
  for (long i = 0; i < 2; i++)
    {
      int err = pthread_create (&t[i], NULL, side, (void *) i);
      if (err != 0)
        bench_fail ("pthread_create", err);
    }
  for (int i = 0; i < 2; i++)
    pthread_join (t[i], NULL);
  double wall = bench_now () - t0, cpu = bench_cpu_seconds () - c0;
  char name[64];
  snprintf (name, sizeof name, "%s_%s_rate", prefix,
            placement_names[placement]);
  bench_metric (name, (double) rounds / wall, "round-trips/s", 1);
  snprintf (name, sizeof name, "%s_%s_cpu_ns", prefix,
            placement_names[placement]);
  bench_metric (name, cpu * 1e9 / (double) rounds, "ns", 0);
}

static int
index_of (const char *const *names, int n, const char *arg)
{
  for (int i = 0; i < n; i++)
    if (strcmp (names[i], arg) == 0)
      return i;
  return -1;
}

static void
usage (const char *prog)
{
  fprintf (stderr, "usage: %s [-n ROUNDS] [-w cond|sem] "
           "[-p free|same|apart]\n", prog);
  exit (2);
}

int
main (int argc, char **argv)
{
  static const char *const waits[] = { "cond", "sem" };
  int only_wait = -1, only_placement = -1, opt;
  while ((opt = getopt (argc, argv, "n:w:p:")) != -1)
    if (opt == 'n')
      rounds = bench_count (argv[0], optarg);
    else if (opt == 'w' && (only_wait = index_of (waits, 2, optarg)) >= 0)
      continue;
    else if (opt == 'p'
             && (only_placement = index_of (placement_names, 3, optarg)) >= 0)
      continue;
    else
      usage (argv[0]);
  if (!HAVE_SEMAPHORES && only_wait == 1)
    {
      fprintf (stderr, "%s: no semaphores in this build\n", argv[0]);
      return 2;
    }
  if (!HAVE_SEMAPHORES)
    only_wait = 0;
#ifdef BENCH_ABSL
  bench_absl_reset ();
#endif
  read_cpus ();
  bench_print_impl ();
  printf ("# cpus %d\n", cpus_n);
  if (sem_init (&token[0], 0, 0) != 0 || sem_init (&token[1], 0, 0) != 0)
    bench_fail ("sem_init", errno);
  for (int p = FREE; p <= APART; p++)
    {
      if (only_placement >= 0 && p != only_placement)
        continue;
      placement = (enum placement) p;
      turn = 0;
      if (only_wait != 1)
        measure ("cond_pingpong", cond_side);
      if (only_wait != 0)
        measure ("sem_pingpong", sem_side);
    }
  return 0;
}
