/* Programs whose lock contention is known, for tests/prof.sh: each case
   runs under the contention profiler (XPTHREAD_PROF=1) and prints what
   it measured itself, as "key value" lines, for the test to compare
   with the report.  The cases are not inlined into main: a site inside
   an inlined function is named by the line of the outermost call.  */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void
sleep_ns (long ns)
{
  struct timespec ts = { ns / 1000000000L, ns % 1000000000L };
  while (nanosleep (&ts, &ts) != 0)
    ;
}

static void
busy_ns (long ns)
{
  long long end = now_ns () + ns;
  while (now_ns () < end)
    ;
}

static void
start (pthread_t *threads, int n, void *(*routine) (void *))
{
  for (long i = 0; i < n; i++)
    if (pthread_create (&threads[i], NULL, routine, (void *) i) != 0)
      {
        perror ("pthread_create");
        exit (99);
      }
}

static void
join (pthread_t *threads, int n)
{
  for (int i = 0; i < n; i++)
    pthread_join (threads[i], NULL);
}

/* --- truth: 4 threads take one mutex 1000 times each, holding it 1 ms.
   Every acquisition contends until the last thread runs alone, and the
   program knows which did without a race: a thread locks while another
   holds the mutex only once it has told the holder so (truth_waiting)
   and still sees it held (truth_holder); a holder unlocks only once
   another thread sleeps in the lock (unless it runs alone), then clears
   truth_holder and waits until every thread that told it is asleep,
   which between the two can only be in the lock.  */

#define TRUTH_THREADS 4
#define TRUTH_ROUNDS 1000
#define TRUTH_TOTAL (TRUTH_THREADS * TRUTH_ROUNDS + 1)

static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int truth_gate, truth_done, truth_holder;
static atomic_int truth_waiting[TRUTH_THREADS];   /* tids; 0: not waiting */
static atomic_long truth_taken;         /* acquisitions so far */
static struct
{
  int owner;
  bool contended;
  long long wait_ns, hold_ns;
} truth_log[TRUTH_TOTAL];

/* Whether thread TID of this process is asleep (state S).  */
static bool
asleep (int tid)
{
  char path[64], stat[512];
  snprintf (path, sizeof path, "/proc/self/task/%d/stat", tid);
  FILE *f = fopen (path, "r");
  if (f == NULL)
    return false;
  size_t len = fread (stat, 1, sizeof stat - 1, f);
  fclose (f);
  stat[len] = '\0';
  const char *state = strrchr (stat, ')');
  return state != NULL && state[1] == ' ' && state[2] == 'S';
}

/* How many threads have told the holder that they wait, and how many of
   them sleep.  */
static int
truth_sleepers (int *told)
{
  int sleeping = 0;
  *told = 0;
  for (int i = 0; i < TRUTH_THREADS; i++)
    {
      int tid = atomic_load (&truth_waiting[i]);
      *told += tid != 0;
      sleeping += tid != 0 && asleep (tid);
    }
  return sleeping;
}

/* The holder's release, before its unlock, while OTHERS threads still
   run besides it.  */
static void
truth_release (int others)
{
  int told;
  while (others > 0 && truth_sleepers (&told) == 0)
    sleep_ns (20000);
  atomic_store (&truth_holder, 0);
  while (truth_sleepers (&told) < told)
    sleep_ns (20000);
}

/* Waits until the mutex is held by another thread, or this thread is
   the last one; returns whether it will find the mutex held.  */
static bool
truth_before_lock (int slot)
{
  for (;;)
    {
      if (atomic_load (&truth_done) == TRUTH_THREADS - 1)
        return false;
      if (atomic_load (&truth_holder) != 0)
        {
          atomic_store (&truth_waiting[slot], (int) gettid ());
          if (atomic_load (&truth_holder) != 0)
            return true;
          atomic_store (&truth_waiting[slot], 0);
        }
      sleep_ns (20000);
    }
}

static void *
truth_worker (void *arg)
{
  int slot = (int) (long) arg, me = slot + 1;
  while (!atomic_load (&truth_gate))
    ;
  for (int i = 0; i < TRUTH_ROUNDS; i++)
    {
      bool held = truth_before_lock (slot);
      long long asked = now_ns ();
      pthread_mutex_lock (&truth_lock);   /* line:truth-lock */
      long long got = now_ns ();
      atomic_store (&truth_waiting[slot], 0);
      atomic_store (&truth_holder, me);
      long n = atomic_load (&truth_taken);
      truth_log[n].owner = me;
      truth_log[n].contended = held;
      truth_log[n].wait_ns = got - asked;
      atomic_store (&truth_taken, n + 1);
      sleep_ns (1000000);
      truth_release (TRUTH_THREADS - 1 - atomic_load (&truth_done));
      truth_log[n].hold_ns = now_ns () - got;
      pthread_mutex_unlock (&truth_lock);
    }
  atomic_fetch_add (&truth_done, 1);
  return NULL;
}

/* Prints the truth from the first contended acquisition on, where the
   profiler starts counting.  */
static __attribute__ ((noinline)) int
truth (void)
{
  pthread_t threads[TRUTH_THREADS];
  start (threads, TRUTH_THREADS, truth_worker);
  pthread_mutex_lock (&truth_lock);
  atomic_store (&truth_holder, -1);
  truth_log[0].owner = -1;
  atomic_store (&truth_taken, 1);
  atomic_store (&truth_gate, 1);
  sleep_ns (20000000);
  truth_release (TRUTH_THREADS);
  pthread_mutex_unlock (&truth_lock);
  join (threads, TRUTH_THREADS);
  int first = 0;
  while (first < TRUTH_TOTAL && !truth_log[first].contended)
    first++;
  long contended = 0, owner_changes = 0;
  long long wait = 0, hold = 0;
  for (int i = first; i < TRUTH_TOTAL; i++)
    {
      contended += truth_log[i].contended;
      owner_changes += i == 0 || truth_log[i].owner != truth_log[i - 1].owner;
      if (truth_log[i].contended)
        wait += truth_log[i].wait_ns;
      hold += truth_log[i].hold_ns;
    }
  printf ("acquisitions %d\ncontended %ld\nowner_changes %ld\n"
          "wait_ns %lld\nhold_ns %lld\n", TRUTH_TOTAL - first, contended,
          owner_changes, wait, hold);
  return 0;
}

/* --- rwlock: a writer holds it 5 ms, 50 times; 4 readers read in a
   loop meanwhile, and wait for the writer.  */

static pthread_rwlock_t rw_lock = PTHREAD_RWLOCK_INITIALIZER;
static atomic_int rw_writer_done;

static void *
rw_reader (void *arg)
{
  while (!atomic_load (&rw_writer_done))
    {
      pthread_rwlock_rdlock (&rw_lock);   /* line:rw-read */
      pthread_rwlock_unlock (&rw_lock);
      sleep_ns (100000);
    }
  return arg;
}

static __attribute__ ((noinline)) int
rwlock (void)
{
  pthread_t readers[4];
  start (readers, 4, rw_reader);
  long long held_ns[50];
  for (int i = 0; i < 50; i++)
    {
      pthread_rwlock_wrlock (&rw_lock);   /* line:rw-write */
      long long t0 = now_ns ();
      sleep_ns (5000000);
      held_ns[i] = now_ns () - t0;
      pthread_rwlock_unlock (&rw_lock);
      sleep_ns (500000);
    }
  atomic_store (&rw_writer_done, 1);
  join (readers, 4);
  /* Each hold: those before the lock's first contention are not
     profiled, and on a loaded machine one can last many times 5 ms.  */
  for (int i = 0; i < 50; i++)
    printf ("write_hold_ns_%d %lld\n", i, held_ns[i]);
  return 0;
}

/* --- cond: one signal that wakes a waiter, 5 with no waiter, one
   broadcast with no waiter.  */

static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond_var = PTHREAD_COND_INITIALIZER;
static int cond_ready, cond_go;

static void *
cond_waiter (void *arg)
{
  pthread_mutex_lock (&cond_lock);
  cond_ready = 1;
  while (!cond_go)
    pthread_cond_wait (&cond_var, &cond_lock);
  pthread_mutex_unlock (&cond_lock);
  return arg;
}

static __attribute__ ((noinline)) int
cond (void)
{
  pthread_t waiter;
  start (&waiter, 1, cond_waiter);
  for (;;)
    {
      pthread_mutex_lock (&cond_lock);
      if (cond_ready)
        break;
      pthread_mutex_unlock (&cond_lock);
      sleep_ns (1000000);
    }
  /* The waiter is in its wait: it released the mutex there.  */
  cond_go = 1;
  pthread_cond_signal (&cond_var);
  pthread_mutex_unlock (&cond_lock);
  join (&waiter, 1);
  for (int i = 0; i < 5; i++)
    pthread_cond_signal (&cond_var);
  pthread_cond_broadcast (&cond_var);
  return 0;
}

/* --- million: a million static mutexes, each found taken once by a
   try.  */

#define MILLION 1000000
static pthread_mutex_t many[MILLION];
static atomic_int many_phase;

static void *
many_holder (void *arg)
{
  for (int i = 0; i < MILLION; i++)
    pthread_mutex_lock (&many[i]);
  atomic_store (&many_phase, 1);
  while (atomic_load (&many_phase) != 2)
    sched_yield ();
  for (int i = 0; i < MILLION; i++)
    pthread_mutex_unlock (&many[i]);
  return arg;
}

static __attribute__ ((noinline)) int
million (void)
{
  pthread_t holder;
  start (&holder, 1, many_holder);
  while (atomic_load (&many_phase) != 1)
    sched_yield ();
  long busy = 0;
  for (int i = 0; i < MILLION; i++)
    busy += pthread_mutex_trylock (&many[i]) != 0;
  atomic_store (&many_phase, 2);
  join (&holder, 1);
  printf ("busy %ld\n", busy);
  return 0;
}

/* --- contend: 3 threads take LOCK 100 times, holding it 200 us; slower:
   1 ms longer, busy, so that a loaded machine, where a short sleep may
   take milliseconds, cannot make it as short as the sleep.  */

static pthread_mutex_t parent_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *contended_lock = &parent_lock;
static long extra_hold_ns;   /* "slower": the regression to find */

static void *
contend_worker (void *arg)
{
  for (int i = 0; i < 100; i++)
    {
      pthread_mutex_lock (contended_lock);   /* line:contend */
      sleep_ns (200000);
      busy_ns (extra_hold_ns);
      pthread_mutex_unlock (contended_lock);
    }
  return arg;
}

static void
contend_on (pthread_mutex_t *lock)
{
  pthread_t threads[3];
  contended_lock = lock;
  start (threads, 3, contend_worker);
  join (threads, 3);
}

static __attribute__ ((noinline)) int
contend (void)
{
  contend_on (&child_lock);
  return 0;
}

/* --- kinds: the robust, priority-inheritance and priority-protection
   mutexes, each locked by a thread while the main thread holds it, 10
   times: 10 contended acquisitions each, all behind the main thread's
   lock.  The main thread unlocks once the other sleeps, which it can
   only do in the lock.  A kind the system refuses (PP without the right
   to SCHED_FIFO) is left out and said so.  */

#define KINDS_ROUNDS 10

static pthread_mutex_t kind_robust, kind_pi, kind_pp;
static atomic_int kind_waiter;

static void *
kind_worker (void *arg)
{
  pthread_mutex_t *m = arg;
  atomic_store (&kind_waiter, (int) gettid ());
  int err = pthread_mutex_lock (m);   /* line:kind-wait */
  if (err == 0)
    pthread_mutex_unlock (m);
  return (void *) (long) err;
}

/* Whether M, set up with PROTOCOL and ROBUST, can be used here.  */
static bool
kind_init (pthread_mutex_t *m, int protocol, int robust)
{
  pthread_mutexattr_t a;
  pthread_mutexattr_init (&a);
  pthread_mutexattr_setprotocol (&a, protocol);
  pthread_mutexattr_setrobust (&a, robust);
  if (protocol == PTHREAD_PRIO_PROTECT)
    pthread_mutexattr_setprioceiling (&a, sched_get_priority_min (SCHED_FIFO));
  bool ok = pthread_mutex_init (m, &a) == 0 && pthread_mutex_lock (m) == 0;
  pthread_mutexattr_destroy (&a);
  return ok && pthread_mutex_unlock (m) == 0;
}

static __attribute__ ((noinline)) int
kinds (void)
{
  static const struct
  {
    const char *name;
    pthread_mutex_t *m;
    int protocol, robust;
  } all[] = {
    { "kind_robust", &kind_robust, PTHREAD_PRIO_NONE, PTHREAD_MUTEX_ROBUST },
    { "kind_pi", &kind_pi, PTHREAD_PRIO_INHERIT, PTHREAD_MUTEX_STALLED },
    { "kind_pp", &kind_pp, PTHREAD_PRIO_PROTECT, PTHREAD_MUTEX_STALLED },
  };
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
    {
      if (!kind_init (all[k].m, all[k].protocol, all[k].robust))
        {
          fprintf (stderr, "%s refused\n", all[k].name);
          continue;
        }
      for (int i = 0; i < KINDS_ROUNDS; i++)
        {
          atomic_store (&kind_waiter, 0);
          pthread_mutex_lock (all[k].m);   /* line:kind-hold */
          pthread_t t;
          if (pthread_create (&t, NULL, kind_worker, all[k].m) != 0)
            return 99;
          int tid;
          while ((tid = atomic_load (&kind_waiter)) == 0 || !asleep (tid))
            sleep_ns (100000);
          pthread_mutex_unlock (all[k].m);
          void *err;
          pthread_join (t, &err);
          if (err != NULL)
            return 1;
        }
      printf ("%s %d\n", all[k].name, KINDS_ROUNDS);
    }
  return 0;
}

/* --- fork: contention in the parent, then in the child on another
   lock; each process's report has its own.  */
static __attribute__ ((noinline)) int
fork_case (void)
{
  contend_on (&parent_lock);
  pid_t pid = fork ();
  if (pid == 0)
    {
      contend_on (&child_lock);
      exit (0);
    }
  int status;
  waitpid (pid, &status, 0);
  printf ("parent %d\nchild %d\n", (int) getpid (), (int) pid);
  return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? 0 : 1;
}

/* --- brief: 2 threads take one mutex 20000 times each and hold it
   about 2 us, so that most waits end in the spin, where the profiler
   times only some and estimates the others.  Each thread times its own
   lock calls; one that took over BRIEF_SLOW_NS waited, unless the kernel
   took the thread off its CPU meanwhile (an involuntary context switch):
   on a loaded machine most slow calls are those, with nobody holding
   the lock.  */

#define BRIEF_THREADS 2
#define BRIEF_ROUNDS 20000
#define BRIEF_HOLD_NS 2000
#define BRIEF_SLOW_NS 300

static pthread_mutex_t brief_lock = PTHREAD_MUTEX_INITIALIZER;

static long
involuntary_switches (void)
{
  struct rusage usage;
  getrusage (RUSAGE_THREAD, &usage);
  return usage.ru_nivcsw;
}
static atomic_llong brief_wait_ns, brief_waits;

static void *
brief_thread (void *arg)
{
  (void) arg;
  long long waited = 0, waits = 0;
  for (int i = 0; i < BRIEF_ROUNDS; i++)
    {
      long preempted = involuntary_switches ();
      long long t0 = now_ns ();
      pthread_mutex_lock (&brief_lock);
      long long ns = now_ns () - t0;
      if (ns > BRIEF_SLOW_NS && involuntary_switches () == preempted)
        {
          waited += ns;
          waits++;
        }
      busy_ns (BRIEF_HOLD_NS);
      pthread_mutex_unlock (&brief_lock);
      busy_ns (BRIEF_HOLD_NS / 2);
    }
  brief_wait_ns += waited;
  brief_waits += waits;
  return NULL;
}

static __attribute__ ((noinline)) int
brief (void)
{
  pthread_t threads[BRIEF_THREADS];
  start (threads, BRIEF_THREADS, brief_thread);
  join (threads, BRIEF_THREADS);
  printf ("wait_ns %lld\nwaits %lld\n", (long long) brief_wait_ns,
          (long long) brief_waits);
  return 0;
}

/* --- timeout: a thread's timed locks of a mutex that the main thread
   holds all along, each given up after 200 ms: their waits count in
   full.  */

#define TIMEOUT_TRIES 5
#define TIMEOUT_NS 200000000L

static pthread_mutex_t timeout_lock = PTHREAD_MUTEX_INITIALIZER;

static void *
timeout_thread (void *arg)
{
  long long *waited = arg;
  for (int i = 0; i < TIMEOUT_TRIES; i++)
    {
      struct timespec deadline;
      clock_gettime (CLOCK_REALTIME, &deadline);
      deadline.tv_nsec += TIMEOUT_NS;
      if (deadline.tv_nsec >= 1000000000L)
        {
          deadline.tv_sec++;
          deadline.tv_nsec -= 1000000000L;
        }
      long long t0 = now_ns ();
      int err = pthread_mutex_timedlock (&timeout_lock, &deadline);
      *waited += now_ns () - t0;
      if (err != ETIMEDOUT)
        {
          fprintf (stderr, "timedlock: %s\n", strerror (err));
          exit (1);
        }
    }
  return NULL;
}

static __attribute__ ((noinline)) int
timeout_case (void)
{
  long long waited = 0;
  pthread_t thread;
  pthread_mutex_lock (&timeout_lock);
  if (pthread_create (&thread, NULL, timeout_thread, &waited) != 0)
    return 99;
  pthread_join (thread, NULL);
  pthread_mutex_unlock (&timeout_lock);
  printf ("wait_ns %lld\ntries %d\n", waited, TIMEOUT_TRIES);
  return 0;
}

/* --- owners: a mutex made watched by one wait (the main thread holds
   it until the other thread sleeps in its lock), then taken in turns
   without contention: OWNERS_ROUNDS times three locks by the main
   thread, then three tries by the other, so that the owner changes at
   the first of each three and stays at the other two.  At the end the
   main thread takes it three times at another site, then three times
   at a third, holding it the last time until the other thread sleeps in
   its lock: that wait is behind the third site, though the main thread
   kept the mutex from one site to the next.  */

#define OWNERS_ROUNDS 500
#define OWNERS_RUN 3

static pthread_mutex_t owners_lock = PTHREAD_MUTEX_INITIALIZER;
static sem_t owners_main_turn, owners_other_turn;
static atomic_int owners_other_tid;

static void *
owners_other (void *arg)
{
  atomic_store (&owners_other_tid, (int) gettid ());
  pthread_mutex_lock (&owners_lock);
  pthread_mutex_unlock (&owners_lock);
  sem_post (&owners_main_turn);
  for (int r = 0; r < OWNERS_ROUNDS; r++)
    {
      sem_wait (&owners_other_turn);
      for (int i = 0; i < OWNERS_RUN; i++)
        {
          if (pthread_mutex_trylock (&owners_lock) != 0)
            exit (98);
          pthread_mutex_unlock (&owners_lock);
        }
      sem_post (&owners_main_turn);
    }
  sem_wait (&owners_other_turn);
  pthread_mutex_lock (&owners_lock);
  pthread_mutex_unlock (&owners_lock);
  return arg;
}

static __attribute__ ((noinline)) int
owners (void)
{
  pthread_t other;
  sem_init (&owners_main_turn, 0, 0);
  sem_init (&owners_other_turn, 0, 0);
  pthread_mutex_lock (&owners_lock);
  start (&other, 1, owners_other);
  int tid;
  while ((tid = atomic_load (&owners_other_tid)) == 0 || !asleep (tid))
    sleep_ns (20000);
  pthread_mutex_unlock (&owners_lock);
  for (int r = 0; r < OWNERS_ROUNDS; r++)
    {
      sem_wait (&owners_main_turn);
      for (int i = 0; i < OWNERS_RUN; i++)
        {
          pthread_mutex_lock (&owners_lock);
          pthread_mutex_unlock (&owners_lock);
        }
      sem_post (&owners_other_turn);
    }
  sem_wait (&owners_main_turn);
  for (int i = 0; i < OWNERS_RUN; i++)
    {
      pthread_mutex_lock (&owners_lock);   /* line:owners-elsewhere */
      pthread_mutex_unlock (&owners_lock);
    }
  for (int i = 0; i < OWNERS_RUN; i++)
    {
      pthread_mutex_lock (&owners_lock);   /* line:owners-last */
      if (i < OWNERS_RUN - 1)
        pthread_mutex_unlock (&owners_lock);
    }
  sem_post (&owners_other_turn);
  while (!asleep (tid))
    sleep_ns (20000);
  pthread_mutex_unlock (&owners_lock);
  join (&other, 1);
  /* The other thread's wait, the turns, the main thread's last four
     locks and the other thread's wait.  */
  printf ("acquisitions %d\ncontended 2\nowner_changes %d\n",
          1 + 2 * OWNERS_ROUNDS * OWNERS_RUN + 2 * OWNERS_RUN + 1,
          1 + 2 * OWNERS_ROUNDS + 1 + 1);
  return 0;
}

/* --- exec: a child runs "contend" in a new program image.  */
static __attribute__ ((noinline)) int
exec_case (const char *self)
{
  pid_t pid = fork ();
  if (pid == 0)
    {
      execl (self, self, "contend", (char *) NULL);
      _exit (127);
    }
  int status;
  waitpid (pid, &status, 0);
  printf ("child %d\n", (int) pid);
  return WIFEXITED (status) && WEXITSTATUS (status) == 0 ? 0 : 1;
}

/* --- signal: contention, then a signal that asks for a report, then
   more contention: two reports, the one at exit counting more.  */
static __attribute__ ((noinline)) int
signal_case (void)
{
  contend_on (&parent_lock);
  raise (SIGUSR2);
  sleep_ns (300000000);
  contend_on (&parent_lock);
  return 0;
}

/* --- interval: contention that lasts over 2 s of reports every second.  */
static __attribute__ ((noinline)) int
interval_case (void)
{
  long long end = now_ns () + 2500000000LL;
  while (now_ns () < end)
    contend_on (&parent_lock);
  return 0;
}

/* The main thread ends with pthread_exit after its one thread: the
   process must end then, with status 0, though the profiler's reporter
   thread runs (XPTHREAD_PROF_INTERVAL).  */
static void *
ending_thread (void *arg)
{
  return arg;
}

static int
main_exits_case (void)
{
  pthread_t t;
  if (pthread_create (&t, NULL, ending_thread, NULL) != 0
      || pthread_join (t, NULL) != 0)
    return 1;
  pthread_exit (NULL);
}

int
main (int argc, char **argv)
{
  const char *c = argc > 1 ? argv[1] : "";
  if (strcmp (c, "truth") == 0)
    return truth ();
  if (strcmp (c, "rwlock") == 0)
    return rwlock ();
  if (strcmp (c, "cond") == 0)
    return cond ();
  if (strcmp (c, "million") == 0)
    return million ();
  if (strcmp (c, "kinds") == 0)
    return kinds ();
  if (strcmp (c, "owners") == 0)
    return owners ();
  if (strcmp (c, "contend") == 0)
    return contend ();
  if (strcmp (c, "brief") == 0)
    return brief ();
  if (strcmp (c, "timeout") == 0)
    return timeout_case ();
  if (strcmp (c, "slower") == 0)
    {
      extra_hold_ns = 1000000;
      return contend ();
    }
  if (strcmp (c, "fork") == 0)
    return fork_case ();
  if (strcmp (c, "exec") == 0)
    return exec_case (argv[0]);
  if (strcmp (c, "signal") == 0)
    return signal_case ();
  if (strcmp (c, "interval") == 0)
    return interval_case ();
  if (strcmp (c, "main-exits") == 0)
    return main_exits_case ();
  fprintf (stderr, "usage: %s truth|rwlock|cond|million|kinds|owners|"
           "contend|brief|timeout|slower|fork|exec|signal|interval|"
           "main-exits\n",
           argv[0]);
  return 2;
}
