/* Programs for tests/lockdep.sh, one per argument: lock-order bugs that
   lockdep must report the first time their orders are seen, although
   none of these runs ever hangs, and correct patterns it must not report.
   A plain pthread program, run under the preload and linked with
   -lxpthread.  Built with debug information: the reports name the lines
   marked "line:NAME", whose numbers tests/lockdep.sh reads from here.  */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_c = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_g = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t forks[5] = {
  PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
  PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
  PTHREAD_MUTEX_INITIALIZER
};
static pthread_rwlock_t table = PTHREAD_RWLOCK_INITIALIZER;
static pthread_rwlock_t wp_table
  = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;

/* Not inlined, so that reports name it with any compiler.  */
static __attribute__ ((noinline)) void
take_in_order (pthread_mutex_t *first, pthread_mutex_t *second)
{
  pthread_mutex_lock (first); /* line:take-first */
  pthread_mutex_lock (second); /* line:take-second */
  pthread_mutex_unlock (second);
  pthread_mutex_unlock (first);
}

struct pair
{
  pthread_mutex_t *first, *second;
};

static void *
pair_thread (void *arg)
{
  struct pair *p = arg;
  take_in_order (p->first, p->second);
  return NULL;
}

/* The same inside lock_g.  */
static void *
gated_pair_thread (void *arg)
{
  pthread_mutex_lock (&lock_g);
  pair_thread (arg);
  pthread_mutex_unlock (&lock_g);
  return NULL;
}

/* Each order in its own thread running ROUTINE, one after the other:
   never a hang.  */
static void
threads_taking (void *(*routine) (void *), const struct pair *pairs, int n)
{
  for (int i = 0; i < n; i++)
    {
      pthread_t t;
      if (pthread_create (&t, NULL, routine, (void *) &pairs[i]) != 0
          || pthread_join (t, NULL) != 0)
        exit (2);
    }
}

static void
orders_in_threads (const struct pair *pairs, int n)
{
  threads_taking (pair_thread, pairs, n);
}

static void
ab_ba (void)
{
  struct pair pairs[] = { { &lock_a, &lock_b }, { &lock_b, &lock_a } };
  orders_in_threads (pairs, 2);
}

/* The AB-BA inversion, after the program closed standard error and its
   number went to a data file ($LOCKDEP_DATA): the report and the summary
   must not land in the data.  */
static void
stderr_reused (void)
{
  close (STDERR_FILENO);
  int fd = open (getenv ("LOCKDEP_DATA"), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd != STDERR_FILENO || write (fd, "data\n", 5) != 5)
    exit (99);
  ab_ba ();
}

/* The inversion taken by a thread with a deferred cancel pending: the
   report is written whole, and the cancel acts only at the thread's next
   cancellation point, after it let go of both locks.  */
static void *
cancelled_inverter (void *arg)
{
  (void) arg;
  pthread_cancel (pthread_self ());
  take_in_order (&lock_b, &lock_a);
  pthread_testcancel ();
  return NULL;
}

static void
cancel_pending (void)
{
  take_in_order (&lock_a, &lock_b);
  pthread_t t;
  void *result = NULL;
  if (pthread_create (&t, NULL, cancelled_inverter, NULL) != 0
      || pthread_join (t, &result) != 0 || result != PTHREAD_CANCELED)
    exit (2);
  /* Every lock still works for every thread.  */
  take_in_order (&lock_a, &lock_c);
}

/* Eight inversions, each of two locks of its own, in the calling thread:
   eight reports, during which tests below make other things happen.  */
#define INVERTED_PAIRS 8
#define M PTHREAD_MUTEX_INITIALIZER
static pthread_mutex_t paired[2 * INVERTED_PAIRS] = { M, M, M, M, M, M, M,
                                                      M, M, M, M, M, M, M,
                                                      M, M };
#undef M

static void
eight_reports (void)
{
  for (int i = 0; i < INVERTED_PAIRS; i++)
    {
      take_in_order (&paired[2 * i], &paired[2 * i + 1]);
      take_in_order (&paired[2 * i + 1], &paired[2 * i]);
    }
}

static int stop_storm;
static int storm_events;

static bool
storm_on (void)
{
  return !__atomic_load_n (&stop_storm, __ATOMIC_ACQUIRE);
}

static void
storm_event (void)
{
  __atomic_fetch_add (&storm_events, 1, __ATOMIC_RELEASE);
}

/* Run STORM in a thread (its argument: the calling thread) while the
   calling thread writes eight reports, from the storm's first event on:
   a thread that starts during a report waits for it to end.  */
static void
reports_during (void *(*storm) (void *))
{
  pthread_t t, self = pthread_self ();
  if (pthread_create (&t, NULL, storm, &self) != 0)
    exit (2);
  while (__atomic_load_n (&storm_events, __ATOMIC_ACQUIRE) == 0)
    sched_yield ();
  eight_reports ();
  __atomic_store_n (&stop_storm, 1, __ATOMIC_RELEASE);
  if (pthread_join (t, NULL) != 0)
    exit (2);
}

/* A signal handler that locks, landing while its thread writes a report:
   the lock works, and so does every lock after the reports.  */
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t handled;

static void
lock_in_handler (int sig)
{
  (void) sig;
  pthread_mutex_lock (&handler_lock);
  handled++;
  pthread_mutex_unlock (&handler_lock);
  storm_event ();
}

static void *
signal_storm (void *arg)
{
  pthread_t target = *(pthread_t *) arg;
  /* Paced, so that a loaded machine still lets the target get on.  */
  while (storm_on ())
    {
      pthread_kill (target, SIGUSR1);
      usleep (50);
    }
  return NULL;
}

static void
signal_during_report (void)
{
  struct sigaction sa = { .sa_handler = lock_in_handler,
                          .sa_flags = SA_RESTART };
  sigemptyset (&sa.sa_mask);
  if (sigaction (SIGUSR1, &sa, NULL) != 0)
    exit (2);
  reports_during (signal_storm);
  take_in_order (&handler_lock, &lock_c);
  printf ("%d signals handled\n", (int) handled);
}

/* Forks while another thread writes a report: every child can lock, and
   so can the parent afterwards.  */
static void *
fork_storm (void *arg)
{
  (void) arg;
  int forks_done = 0;
  while (storm_on ())
    {
      pid_t pid = fork ();
      if (pid == 0)
        {
          take_in_order (&lock_c, &lock_g);
          _exit (0);
        }
      int status;
      if (pid < 0 || waitpid (pid, &status, 0) != pid || status != 0)
        exit (3);
      forks_done++;
      storm_event ();
    }
  printf ("%d children locked\n", forks_done);
  return NULL;
}

static void
fork_during_report (void)
{
  reports_during (fork_storm);
  take_in_order (&lock_c, &lock_g);
}

/* Loads, again and again, an object whose constructor locks, while
   another thread writes reports: the constructor runs inside dlopen,
   which holds the dynamic linker's lock, and naming a report's
   addresses waits for that lock.  Both go on.  */
static void *
dlopen_storm (void *arg)
{
  (void) arg;
  int loads = 0;
  while (storm_on ())
    {
      void *object = dlopen (XP_TEST_MODULE_DIR "/lockdep-ctor.so",
                             RTLD_NOW);
      if (object == NULL)
        {
          fprintf (stderr, "lockdep-ctor.so: %s\n", dlerror ());
          exit (2);
        }
      dlclose (object);
      loads++;
      storm_event ();
      /* Paced: the dynamic linker's lock is no fair one, and a
         reporter waiting for it would starve.  */
      usleep (5000);
    }
  printf ("%d objects loaded\n", loads);
  return NULL;
}

static void
dlopen_during_report (void)
{
  reports_during (dlopen_storm);
  take_in_order (&lock_c, &lock_g);
}

/* Not reported: both orders are always taken inside lock_g, so the two
   threads can never each hold one of the pair.  */
static const struct pair inverted[] = { { &lock_a, &lock_b },
                                         { &lock_b, &lock_a } };

static void
gated_inversion (void)
{
  threads_taking (gated_pair_thread, inverted, 2);
}

/* Reported: a third thread takes one of the orders outside the gate.  */
static void
gate_dropped (void)
{
  threads_taking (gated_pair_thread, inverted, 2);
  orders_in_threads (inverted, 1);
}

/* Reported although one thread can never deadlock with itself: another
   run may take the orders in two threads.  */
static void
one_thread (void)
{
  take_in_order (&lock_a, &lock_b);
  take_in_order (&lock_b, &lock_a);
}

static void
three_cycle (void)
{
  struct pair pairs[] = { { &lock_a, &lock_b }, { &lock_b, &lock_c },
                          { &lock_c, &lock_a } };
  orders_in_threads (pairs, 3);
}

static void
philosophers (void)
{
  struct pair pairs[5];
  for (int i = 0; i < 5; i++)
    pairs[i] = (struct pair) { &forks[i], &forks[(i + 1) % 5] };
  orders_in_threads (pairs, 5);
}

/* Re-locking a normal mutex: reported before the wait, which a timed
   lock ends.  */
static void
self_deadlock (void)
{
  struct timespec soon;
  clock_gettime (CLOCK_REALTIME, &soon);
  soon.tv_nsec += 20 * 1000 * 1000;
  if (soon.tv_nsec >= 1000000000)
    {
      soon.tv_sec++;
      soon.tv_nsec -= 1000000000;
    }
  pthread_mutex_lock (&lock_a); /* line:self-first */
  int err = pthread_mutex_timedlock (&lock_a, &soon); /* line:self-again */
  pthread_mutex_unlock (&lock_a);
  printf ("timedlock: %s\n", strerror (err));
}

/* Reported: a cycle through every kind of lock, each a static variable
   named after its kind, taken pair by pair in one thread: a
   priority-inheritance, a robust and a process-shared mutex, a spinlock
   and a C11 mutex.  (A priority-protection mutex needs the right to run
   SCHED_FIFO, which a container may lack.)  Run with a class per lock,
   which the variable names.  */
static pthread_mutex_t pi_mutex, robust_mutex, shared_mutex;
static pthread_spinlock_t spin;
static mtx_t c11_mutex;
#define KINDS 5

static void
init_kind (pthread_mutex_t *m, int protocol, int robust, int pshared)
{
  pthread_mutexattr_t attr;
  pthread_mutexattr_init (&attr);
  pthread_mutexattr_setprotocol (&attr, protocol);
  pthread_mutexattr_setrobust (&attr, robust);
  pthread_mutexattr_setpshared (&attr, pshared);
  pthread_mutex_init (m, &attr);
  pthread_mutexattr_destroy (&attr);
}

static void
lock_kind (int k)
{
  switch (k % KINDS)
    {
    case 0: pthread_mutex_lock (&pi_mutex); break;
    case 1: pthread_mutex_lock (&robust_mutex); break;
    case 2: pthread_spin_lock (&spin); break;
    case 3: mtx_lock (&c11_mutex); break;
    default: pthread_mutex_lock (&shared_mutex); break;
    }
}

static void
unlock_kind (int k)
{
  switch (k % KINDS)
    {
    case 0: pthread_mutex_unlock (&pi_mutex); break;
    case 1: pthread_mutex_unlock (&robust_mutex); break;
    case 2: pthread_spin_unlock (&spin); break;
    case 3: mtx_unlock (&c11_mutex); break;
    default: pthread_mutex_unlock (&shared_mutex); break;
    }
}

static void
every_kind (void)
{
  init_kind (&pi_mutex, PTHREAD_PRIO_INHERIT, PTHREAD_MUTEX_STALLED,
             PTHREAD_PROCESS_PRIVATE);
  init_kind (&robust_mutex, PTHREAD_PRIO_NONE, PTHREAD_MUTEX_ROBUST,
             PTHREAD_PROCESS_PRIVATE);
  init_kind (&shared_mutex, PTHREAD_PRIO_NONE, PTHREAD_MUTEX_STALLED,
             PTHREAD_PROCESS_SHARED);
  pthread_spin_init (&spin, PTHREAD_PROCESS_PRIVATE);
  mtx_init (&c11_mutex, mtx_plain);
  for (int k = 0; k < KINDS; k++)
    {
      lock_kind (k); /* line:kinds-first */
      lock_kind (k + 1); /* line:kinds-second */
      unlock_kind (k + 1);
      unlock_kind (k);
    }
}

/* Reported: unlocking lock_a twice; the second unlock releases a lock
   the thread does not hold.  Not reported: the same on an errorcheck
   mutex, which answers EPERM.  */
static void
double_unlock (void)
{
  pthread_mutex_lock (&lock_a);
  pthread_mutex_unlock (&lock_a);
  pthread_mutex_unlock (&lock_a); /* line:unlock-again */
  pthread_mutex_t checked;
  pthread_mutexattr_t attr;
  pthread_mutexattr_init (&attr);
  pthread_mutexattr_settype (&attr, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_init (&checked, &attr);
  pthread_mutex_lock (&checked);
  pthread_mutex_unlock (&checked);
  int err = pthread_mutex_unlock (&checked);
  printf ("errorcheck unlock again: %s\n", strerror (err));
  pthread_mutex_destroy (&checked);
}

/* Reported: destroying a mutex the thread holds (glibc answers EBUSY,
   as xpthread does).  */
static void
destroy_held (void)
{
  pthread_mutex_t m;
  pthread_mutex_init (&m, NULL); /* line:destroy-init */
  pthread_mutex_lock (&m); /* line:destroy-lock */
  int err = pthread_mutex_destroy (&m); /* line:destroy-held */
  printf ("destroy held: %s\n", strerror (err));
  pthread_mutex_unlock (&m);
  pthread_mutex_destroy (&m);
}

/* Reported: a thread that returns holding lock_b, which nobody can
   unlock after it.  */
static void *
leave_locked (void *arg)
{
  pthread_mutex_lock (&lock_b); /* line:exit-lock-b */
  return arg;
}

static void
exit_holding (void)
{
  pthread_t t;
  pthread_create (&t, NULL, leave_locked, NULL);
  pthread_join (t, NULL);
}

/* Not reported: an errorcheck mutex answers EDEADLK, a recursive one
   counts.  */
static void
errorcheck_and_recursive (void)
{
  pthread_mutexattr_t attr;
  pthread_mutex_t check, rec;
  pthread_mutexattr_init (&attr);
  pthread_mutexattr_settype (&attr, PTHREAD_MUTEX_ERRORCHECK);
  pthread_mutex_init (&check, &attr);
  pthread_mutexattr_settype (&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init (&rec, &attr);
  pthread_mutex_lock (&check);
  printf ("errorcheck: %s\n", strerror (pthread_mutex_lock (&check)));
  pthread_mutex_unlock (&check);
  pthread_mutex_lock (&rec);
  pthread_mutex_lock (&rec);
  pthread_mutex_unlock (&rec);
  pthread_mutex_unlock (&rec);
}

/* Not reported: a trylock cannot wait.  */
static void
trylock_inversion (void)
{
  take_in_order (&lock_a, &lock_b);
  pthread_mutex_lock (&lock_b);
  if (pthread_mutex_trylock (&lock_a) == 0)
    pthread_mutex_unlock (&lock_a);
  pthread_mutex_unlock (&lock_b);
}

/* Not reported: readers of glibc's default rwlock never wait for
   readers, so read-read orders are no deadlock.  */
static void *
read_then_lock (void *rw)
{
  pthread_rwlock_rdlock (rw); /* line:reader-table */
  pthread_mutex_lock (&lock_a); /* line:reader-lock-a */
  pthread_mutex_unlock (&lock_a);
  pthread_rwlock_unlock (rw);
  return NULL;
}

static void
in_a_thread (void *(*routine) (void *), pthread_rwlock_t *rw)
{
  pthread_t t;
  pthread_create (&t, NULL, routine, rw);
  pthread_join (t, NULL);
}

/* Not inlined, so that reports name it with any compiler.  */
static __attribute__ ((noinline)) void
lock_then_read (pthread_rwlock_t *rw)
{
  pthread_mutex_lock (&lock_a); /* line:lock-a-then-read */
  pthread_rwlock_rdlock (rw); /* line:read-after-lock-a */
  pthread_rwlock_unlock (rw);
  pthread_mutex_unlock (&lock_a);
}

/* In a thread of its own, ROUTINE (RW), then lock_a and a read lock of
   RW.  */
static void
lock_then_read_after (void *(*routine) (void *), pthread_rwlock_t *rw)
{
  in_a_thread (routine, rw);
  lock_then_read (rw);
}

static void
readers_share (void)
{
  lock_then_read_after (read_then_lock, &table);
}

/* The same orders seen the other way round: the cycle closes at the
   other end of the recursive read.  */
static void
readers_share_reversed (void)
{
  lock_then_read (&table);
  in_a_thread (read_then_lock, &table);
}

/* Reported: with a writer-preferring rwlock the read behind lock_a
   waits for a writer that waits for the first reader, which waits for
   lock_a.  */
static void
writer_preferring_readers (void)
{
  lock_then_read_after (read_then_lock, &wp_table);
}

/* Reported: a reader waits for the writer, which waits for lock_a.  */
static void *
write_then_lock (void *rw)
{
  pthread_rwlock_wrlock (rw); /* line:writer-first */
  pthread_mutex_lock (&lock_a); /* line:writer-then-lock-a */
  pthread_mutex_unlock (&lock_a);
  pthread_rwlock_unlock (rw);
  return NULL;
}

static void
reader_against_writer (void)
{
  lock_then_read_after (write_then_lock, &table);
}

/* Reported: a writer waits for the reader, which waits for lock_a.  */
static void
writer_against_reader (void)
{
  pthread_t t;
  pthread_create (&t, NULL, read_then_lock, &table);
  pthread_join (t, NULL);
  pthread_mutex_lock (&lock_a); /* line:writer-lock-a */
  pthread_rwlock_wrlock (&table); /* line:writer-table */
  pthread_rwlock_unlock (&table);
  pthread_mutex_unlock (&lock_a);
}

/* Reported: a reader of a writer-preferring rwlock taking it again
   waits behind any writer that waits for the reader.  */
static void
writer_preferring_read_twice (void)
{
  pthread_rwlockattr_t attr;
  pthread_rwlock_t rw;
  pthread_rwlockattr_init (&attr);
  pthread_rwlockattr_setkind_np (&attr,
                                 PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  pthread_rwlock_init (&rw, &attr); /* line:wp-init */
  pthread_rwlock_rdlock (&rw); /* line:wp-first */
  pthread_rwlock_rdlock (&rw); /* line:wp-again */
  pthread_rwlock_unlock (&rw);
  pthread_rwlock_unlock (&rw);
  pthread_rwlock_destroy (&rw);
}

/* Reported: joining while holding lock_a a thread whose kind takes
   lock_a.  This run never hangs (the second worker does not take the
   lock), but one whose worker did would; no two mutexes are ever taken
   in opposite orders, so a checker of mutex orders alone sees nothing.  */
static void *
worker (void *take)
{
  if (take != NULL)
    {
      pthread_mutex_lock (&lock_a); /* line:worker-lock-a */
      pthread_mutex_unlock (&lock_a);
    }
  return NULL;
}

static void
join_while_holding (void)
{
  pthread_t t;
  pthread_create (&t, NULL, worker, &lock_a);
  pthread_join (t, NULL);
  pthread_mutex_lock (&lock_a); /* line:joiner-lock-a */
  pthread_create (&t, NULL, worker, NULL);
  pthread_join (t, NULL); /* line:joiner-join */
  pthread_mutex_unlock (&lock_a);
}

/* Warned of: a condition wait that keeps lock_b while it releases
   lock_a.  */
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;

static void
cond_wait_keeps_lock (void)
{
  struct timespec soon;
  clock_gettime (CLOCK_REALTIME, &soon);
  pthread_mutex_lock (&lock_b); /* line:waiter-lock-b */
  pthread_mutex_lock (&lock_a);
  pthread_cond_timedwait (&ready, &lock_a, &soon); /* line:waiter-wait */
  pthread_mutex_unlock (&lock_a);
  pthread_mutex_unlock (&lock_b);
}

/* Not reported: a zero-filled mutex that was never destroyed (as a
   std::mutex is not) is freed, and its memory becomes another object's
   mutex, which is a new lock with a class of its own: the connections'
   mutexes are taken inside lock_c, the job's outside it.  */
static __attribute__ ((noinline)) void
lock_connection (pthread_mutex_t *m)
{
  pthread_mutex_lock (m);
  pthread_mutex_unlock (m);
}

static __attribute__ ((noinline)) void
run_job (pthread_mutex_t *m)
{
  take_in_order (m, &lock_c);
}

/* A zero-filled mutex, as a std::mutex member's constructor leaves it.
   Not calloc, which would not reuse the freed memory (nor malloc and
   memset, which the compiler turns into calloc).  */
static pthread_mutex_t *
zeroed_mutex (void)
{
  pthread_mutex_t *m = malloc (sizeof *m);
  explicit_bzero (m, sizeof *m);
  return m;
}

static void
reused_memory (void)
{
  pthread_mutex_t *first = zeroed_mutex ();
  uintptr_t where = (uintptr_t) first;
  lock_connection (first);
  free (first);
  pthread_mutex_t *job = zeroed_mutex ();
  if ((uintptr_t) job != where)
    printf ("reused-memory: the memory was not reused\n");
  run_job (job);
  pthread_mutex_t *second = zeroed_mutex ();
  pthread_mutex_lock (&lock_c);
  lock_connection (second);
  pthread_mutex_unlock (&lock_c);
  free (second);
  free (job);
}

/* Not reported: the same memory initialised again is a new lock.  */
static void
reinit_opposite_order (void)
{
  pthread_mutex_t *m = malloc (2 * sizeof *m);
  pthread_mutex_init (&m[0], NULL);
  pthread_mutex_init (&m[1], NULL);
  take_in_order (&m[0], &m[1]);
  pthread_mutex_destroy (&m[0]);
  pthread_mutex_destroy (&m[1]);
  pthread_mutex_init (&m[1], NULL);
  pthread_mutex_init (&m[0], NULL);
  take_in_order (&m[1], &m[0]);
  free (m);
}

/* Two kinds of object, each with a mutex initialised in its constructor:
   the orders of one pair of objects hold for every pair, so lockdep
   reports the inversion on other objects (classes by init site), which
   XPTHREAD_LOCKDEP_CLASSES=instance does not.  */
struct account
{
  pthread_mutex_t mu;
};

struct ledger
{
  pthread_mutex_t mu;
  long entries;
};

/* Not inlined: each constructor is one init site.  */
static __attribute__ ((noinline)) struct account *
new_account (void)
{
  struct account *a = malloc (sizeof *a);
  pthread_mutex_init (&a->mu, NULL); /* line:account-init */
  return a;
}

static __attribute__ ((noinline)) struct ledger *
new_ledger (void)
{
  struct ledger *l = malloc (sizeof *l);
  l->entries = 0;
  pthread_mutex_init (&l->mu, NULL); /* line:ledger-init */
  return l;
}

static void
objects_of_a_kind (void)
{
  struct account *a1 = new_account (), *a2 = new_account ();
  struct ledger *l1 = new_ledger (), *l2 = new_ledger ();
  struct pair pairs[] = { { &a1->mu, &l1->mu }, { &l2->mu, &a2->mu } };
  orders_in_threads (pairs, 2);
}

/* Classes of an unloaded object are retired: loading it again and
   again, each time at its old place or another, leaves the count of
   classes in use where it was.  */
static void
load_and_unload (int times)
{
  for (int i = 0; i < times; i++)
    {
      void *object = dlopen (XP_TEST_MODULE_DIR "/lockdep-object.so",
                             RTLD_NOW);
      void (*use) (void) = NULL;
      if (object != NULL)
        *(void **) &use = dlsym (object, "xp_lockdep_object_use");
      if (use == NULL)
        {
          fprintf (stderr, "lockdep-object.so: %s\n", dlerror ());
          exit (2);
        }
      use ();
      dlclose (object);
    }
}

static void
dlclose_once (void)
{
  load_and_unload (1);
}

static void
dlclose_1000 (void)
{
  load_and_unload (1000);
}

static const struct
{
  const char *name;
  void (*run) (void);
} cases[] = {
  { "ab-ba", ab_ba },
  { "stderr-reused", stderr_reused },
  { "cancel-pending", cancel_pending },
  { "signal-during-report", signal_during_report },
  { "fork-during-report", fork_during_report },
  { "dlopen-during-report", dlopen_during_report },
  { "gated-inversion", gated_inversion },
  { "gate-dropped", gate_dropped },
  { "one-thread", one_thread },
  { "three-cycle", three_cycle },
  { "philosophers", philosophers },
  { "self-deadlock", self_deadlock },
  { "double-unlock", double_unlock },
  { "every-kind", every_kind },
  { "destroy-held", destroy_held },
  { "exit-holding", exit_holding },
  { "errorcheck-recursive", errorcheck_and_recursive },
  { "trylock-inversion", trylock_inversion },
  { "readers-share", readers_share },
  { "readers-share-reversed", readers_share_reversed },
  { "writer-against-reader", writer_against_reader },
  { "reader-against-writer", reader_against_writer },
  { "writer-preferring-readers", writer_preferring_readers },
  { "reinit-opposite-order", reinit_opposite_order },
  { "objects-of-a-kind", objects_of_a_kind },
  { "writer-preferring-read-twice", writer_preferring_read_twice },
  { "join-while-holding", join_while_holding },
  { "reused-memory", reused_memory },
  { "cond-wait-keeps-lock", cond_wait_keeps_lock },
  { "dlclose-once", dlclose_once },
  { "dlclose-1000", dlclose_1000 },
};

int
main (int argc, char **argv)
{
  for (size_t i = 0; argc == 2 && i < sizeof cases / sizeof cases[0]; i++)
    if (strcmp (argv[1], cases[i].name) == 0)
      {
        cases[i].run ();
        printf ("%s: done\n", cases[i].name);
        return 0;
      }
  fprintf (stderr, "usage: %s CASE\n", argv[0]);
  return 2;
}
