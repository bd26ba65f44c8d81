/* The IDs of threads glibc started behind xpthread's back (with the
   pthread_create a library finds through dlsym, as jemalloc does), handed
   to xpthread's functions: every call that takes a pthread_t gives glibc's
   answer, whether the thread has called into xpthread (and has a
   descriptor) or not.  A thread that must not call into xpthread waits on
   a futex with the raw system call.  */
#define _GNU_SOURCE
#include "common.h"
#include "foreign-start.h"
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TIMEOUT 30

/* --- a gate the threads wait at without calling xpthread ---------------- */

struct gate
{
  int open;
  int tid;                  /* the thread's, published when it arrives */
  pthread_t self_seen;      /* what pthread_self answered in the thread */
  int adopt;                /* call into xpthread before waiting */
};

static void
gate_wait (struct gate *g)
{
  while (__atomic_load_n (&g->open, __ATOMIC_ACQUIRE) == 0)
    syscall (SYS_futex, &g->open, FUTEX_WAIT, 0, NULL, NULL, 0);
}

static void
gate_open (struct gate *g)
{
  __atomic_store_n (&g->open, 1, __ATOMIC_RELEASE);
  syscall (SYS_futex, &g->open, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static void
wait_for_arrival (struct gate *g)
{
  while (__atomic_load_n (&g->tid, __ATOMIC_ACQUIRE) == 0)
    sched_yield ();
}

static void *
wait_at_gate (void *arg)
{
  struct gate *g = arg;
  if (g->adopt)
    g->self_seen = pthread_self ();
  __atomic_store_n (&g->tid, (int) syscall (SYS_gettid), __ATOMIC_RELEASE);
  gate_wait (g);
  return g;
}

static pthread_t
start_at_gate (struct gate *g, int adopt)
{
  memset (g, 0, sizeof *g);
  g->adopt = adopt;
  pthread_t t;
  ck_assert_int_eq (xp_foreign_start (&t, wait_at_gate, g), 0);
  wait_for_arrival (g);
  return t;
}

static void
finish (pthread_t t, struct gate *g)
{
  gate_open (g);
  void *result;
  ck_assert_int_eq (pthread_join (t, &result), 0);
  ck_assert_ptr_eq (result, g);
}

static void
deadline_in (struct timespec *ts, clockid_t clock, long ms)
{
  clock_gettime (clock, ts);
  ts->tv_sec += ms / 1000;
  ts->tv_nsec += (ms % 1000) * 1000000;
  if (ts->tv_nsec >= 1000000000)
    {
      ts->tv_sec++;
      ts->tv_nsec -= 1000000000;
    }
}

/* --- join, detach ------------------------------------------------------- */

START_TEST (join_waits_and_returns_the_value)
{
  for (int adopt = 0; adopt < 2; adopt++)
    {
      struct gate g;
      pthread_t t = start_at_gate (&g, adopt);
      void *result;
      ck_assert_int_eq (pthread_tryjoin_np (t, &result), EBUSY);
      struct timespec soon;
      deadline_in (&soon, CLOCK_REALTIME, 20);
      ck_assert_int_eq (pthread_timedjoin_np (t, &result, &soon), ETIMEDOUT);
      deadline_in (&soon, CLOCK_MONOTONIC, 20);
      ck_assert_int_eq (pthread_clockjoin_np (t, &result, CLOCK_MONOTONIC,
                                              &soon), ETIMEDOUT);
      ck_assert_int_eq (pthread_clockjoin_np (t, &result, CLOCK_PROCESS_CPUTIME_ID,
                                              &soon), EINVAL);
      /* Still joinable after all that: the join waits for the gate.  */
      finish (t, &g);
    }
}
END_TEST

START_TEST (join_of_a_finished_thread)
{
  struct gate g;
  pthread_t t = start_at_gate (&g, 1);
  gate_open (&g);
  void *result = NULL;
  /* tryjoin answers EBUSY until the kernel has cleared the tid.  */
  int err;
  while ((err = pthread_tryjoin_np (t, &result)) == EBUSY)
    sched_yield ();
  ck_assert_int_eq (err, 0);
  ck_assert_ptr_eq (result, &g);
}
END_TEST

static void *
join_self (void *arg)
{
  (void) arg;
  return (void *) (intptr_t) pthread_join (pthread_self (), NULL);
}

START_TEST (foreign_thread_joining_itself_is_edeadlk)
{
  pthread_t t;
  ck_assert_int_eq (xp_foreign_start (&t, join_self, NULL), 0);
  void *result;
  ck_assert_int_eq (pthread_join (t, &result), 0);
  ck_assert_int_eq ((int) (intptr_t) result, EDEADLK);
}
END_TEST

START_TEST (detach_then_join_is_einval)
{
  for (int adopt = 0; adopt < 2; adopt++)
    {
      struct gate g;
      pthread_t t = start_at_gate (&g, adopt);
      ck_assert_int_eq (pthread_detach (t), 0);
      ck_assert_int_eq (pthread_join (t, NULL), EINVAL);
      ck_assert_int_eq (pthread_detach (t), EINVAL);
      pthread_attr_t attr;
      ck_assert_int_eq (pthread_getattr_np (t, &attr), 0);
      int state;
      ck_assert_int_eq (pthread_attr_getdetachstate (&attr, &state), 0);
      ck_assert_int_eq (state, PTHREAD_CREATE_DETACHED);
      pthread_attr_destroy (&attr);
      gate_open (&g);
    }
}
END_TEST

START_TEST (glibc_joins_what_xpthread_waited_for)
{
  struct gate g;
  pthread_t t = start_at_gate (&g, 1);
  struct timespec soon;
  deadline_in (&soon, CLOCK_REALTIME, 10);
  ck_assert_int_eq (pthread_timedjoin_np (t, NULL, &soon), ETIMEDOUT);
  gate_open (&g);
  void *result;
  ck_assert_int_eq (xp_foreign_join (t, &result), 0);
  ck_assert_ptr_eq (result, &g);
}
END_TEST

/* --- the ID itself ------------------------------------------------------ */

START_TEST (self_in_the_thread_is_the_creators_id)
{
  struct gate g;
  pthread_t t = start_at_gate (&g, 1);
  ck_assert (pthread_equal (g.self_seen, t));
  finish (t, &g);
}
END_TEST

/* --- signals ------------------------------------------------------------ */

static int handled_in;
static int queued_value;

static void
note_handler (int sig, siginfo_t *info, void *context)
{
  (void) context;
  /* The value first: the main thread reads it once it sees handled_in.  */
  if (info->si_code == SI_QUEUE)
    queued_value = info->si_value.sival_int + sig - SIGUSR1;
  __atomic_store_n (&handled_in, (int) syscall (SYS_gettid), __ATOMIC_RELEASE);
}

static void
await_handler (void)
{
  for (int i = 0; i < 2000 && __atomic_load_n (&handled_in, __ATOMIC_ACQUIRE) == 0; i++)
    usleep (1000);
}

START_TEST (signals_reach_the_thread)
{
  struct sigaction sa = { .sa_sigaction = note_handler, .sa_flags = SA_SIGINFO };
  sigemptyset (&sa.sa_mask);
  ck_assert_int_eq (sigaction (SIGUSR1, &sa, NULL), 0);
  for (int adopt = 0; adopt < 2; adopt++)
    {
      struct gate g;
      pthread_t t = start_at_gate (&g, adopt);
      ck_assert_int_eq (pthread_kill (t, 0), 0);
      ck_assert_int_eq (pthread_kill (t, 32), EINVAL);
      handled_in = 0;
      ck_assert_int_eq (pthread_kill (t, SIGUSR1), 0);
      await_handler ();
      ck_assert_int_eq (handled_in, g.tid);
      handled_in = 0;
      queued_value = 0;
      ck_assert_int_eq (pthread_sigqueue (t, SIGUSR1,
                                          (union sigval) { .sival_int = 41 }), 0);
      await_handler ();
      ck_assert_int_eq (handled_in, g.tid);
      ck_assert_int_eq (queued_value, 41);
      finish (t, &g);
    }
}
END_TEST

/* --- attributes, name, scheduling, affinity, clock ---------------------- */

START_TEST (attributes_are_the_threads)
{
  struct gate g;
  pthread_t t = start_at_gate (&g, 0);
  pthread_attr_t attr;
  ck_assert_int_eq (pthread_getattr_np (t, &attr), 0);
  void *low;
  size_t size;
  ck_assert_int_eq (pthread_attr_getstack (&attr, &low, &size), 0);
  /* The gate lies on the creator's stack; the thread's stack holds the
     thread's own frames, among them the address glibc calls it with.  */
  ck_assert (size >= 16384);
  int state;
  ck_assert_int_eq (pthread_attr_getdetachstate (&attr, &state), 0);
  ck_assert_int_eq (state, PTHREAD_CREATE_JOINABLE);
  cpu_set_t set;
  ck_assert_int_eq (pthread_attr_getaffinity_np (&attr, sizeof set, &set), 0);
  ck_assert_int_gt (CPU_COUNT (&set), 0);
  pthread_attr_destroy (&attr);
  finish (t, &g);
}
END_TEST

START_TEST (names_scheduling_affinity_and_clock)
{
  for (int adopt = 0; adopt < 2; adopt++)
    {
      struct gate g;
      pthread_t t = start_at_gate (&g, adopt);
      ck_assert_int_eq (pthread_setname_np (t, "foreign-named"), 0);
      char name[16];
      ck_assert_int_eq (pthread_getname_np (t, name, sizeof name), 0);
      ck_assert_str_eq (name, "foreign-named");
      ck_assert_int_eq (pthread_setname_np (t, "a name far too long"), ERANGE);

      int policy;
      struct sched_param param;
      ck_assert_int_eq (pthread_getschedparam (t, &policy, &param), 0);
      ck_assert_int_eq (policy, SCHED_OTHER);
      ck_assert_int_eq (pthread_setschedparam (t, SCHED_BATCH, &param), 0);
      ck_assert_int_eq (sched_getscheduler (g.tid), SCHED_BATCH);
      ck_assert_int_eq (pthread_setschedprio (t, 0), 0);
      ck_assert_int_eq (sched_getscheduler (g.tid), SCHED_BATCH);

      cpu_set_t set;
      ck_assert_int_eq (pthread_getaffinity_np (t, sizeof set, &set), 0);
      ck_assert_int_eq (pthread_setaffinity_np (t, sizeof set, &set), 0);

      clockid_t clock;
      struct timespec used;
      ck_assert_int_eq (pthread_getcpuclockid (t, &clock), 0);
      ck_assert_int_eq (clock_gettime (clock, &used), 0);
      finish (t, &g);
    }
}
END_TEST

/* --- cancellation ------------------------------------------------------- */

static int cleanups;

static void
count_cleanup (void *arg)
{
  (void) arg;
  __atomic_fetch_add (&cleanups, 1, __ATOMIC_RELAXED);
}

/* Blocked in a cancellation point of xpthread's: the cancel interrupts it
   and runs the cleanup handler.  */
static void *
read_forever (void *arg)
{
  int *fds = arg;
  char c;
  pthread_cleanup_push (count_cleanup, NULL);
  __atomic_store_n (&fds[2], 1, __ATOMIC_RELEASE);
  while (read (fds[0], &c, 1) != 0)
    ;
  pthread_cleanup_pop (0);
  return NULL;
}

START_TEST (cancel_interrupts_a_blocked_thread)
{
  int fds[3] = { 0, 0, 0 };
  ck_assert_int_eq (pipe (fds), 0);
  pthread_t t;
  ck_assert_int_eq (xp_foreign_start (&t, read_forever, fds), 0);
  while (__atomic_load_n (&fds[2], __ATOMIC_ACQUIRE) == 0)
    sched_yield ();
  usleep (20000);
  cleanups = 0;
  ck_assert_int_eq (pthread_cancel (t), 0);
  void *result;
  ck_assert_int_eq (pthread_join (t, &result), 0);
  ck_assert_ptr_eq (result, PTHREAD_CANCELED);
  ck_assert_int_eq (cleanups, 1);
}
END_TEST

/* Cancelled before it ever called into xpthread: the request waits for
   its first cancellation point.  */
static void *
test_after_gate (void *arg)
{
  struct gate *g = arg;
  __atomic_store_n (&g->tid, (int) syscall (SYS_gettid), __ATOMIC_RELEASE);
  gate_wait (g);
  pthread_testcancel ();
  return NULL;
}

START_TEST (cancel_before_the_thread_knows_xpthread)
{
  struct gate g;
  memset (&g, 0, sizeof g);
  pthread_t t;
  ck_assert_int_eq (xp_foreign_start (&t, test_after_gate, &g), 0);
  wait_for_arrival (&g);
  ck_assert_int_eq (pthread_cancel (t), 0);
  usleep (20000);
  gate_open (&g);
  void *result;
  ck_assert_int_eq (pthread_join (t, &result), 0);
  ck_assert_ptr_eq (result, PTHREAD_CANCELED);
}
END_TEST

/* A thread cancelled while joining a thread glibc started leaves it
   joinable.  */
static void *
join_target (void *arg)
{
  pthread_t *target = arg;
  pthread_join (*target, NULL);
  return "join returned";
}

START_TEST (cancelled_joiner_leaves_the_thread_joinable)
{
  struct gate g;
  pthread_t target = start_at_gate (&g, 0);
  pthread_t joiner;
  ck_assert_int_eq (pthread_create (&joiner, NULL, join_target, &target), 0);
  usleep (20000);
  ck_assert_int_eq (pthread_cancel (joiner), 0);
  void *result;
  ck_assert_int_eq (pthread_join (joiner, &result), 0);
  ck_assert_ptr_eq (result, PTHREAD_CANCELED);
  finish (target, &g);
}
END_TEST

int
main (void)
{
  Suite *suite = suite_create ("foreign-ids");
  TCase *tc = tcase_create ("ids");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, join_waits_and_returns_the_value);
  tcase_add_test (tc, join_of_a_finished_thread);
  tcase_add_test (tc, foreign_thread_joining_itself_is_edeadlk);
  tcase_add_test (tc, detach_then_join_is_einval);
  tcase_add_test (tc, glibc_joins_what_xpthread_waited_for);
  tcase_add_test (tc, self_in_the_thread_is_the_creators_id);
  tcase_add_test (tc, signals_reach_the_thread);
  tcase_add_test (tc, attributes_are_the_threads);
  tcase_add_test (tc, names_scheduling_affinity_and_clock);
  tcase_add_test (tc, cancel_interrupts_a_blocked_thread);
  tcase_add_test (tc, cancel_before_the_thread_knows_xpthread);
  tcase_add_test (tc, cancelled_joiner_leaves_the_thread_joinable);
  suite_add_tcase (suite, tc);
  return xp_test_run (suite);
}
