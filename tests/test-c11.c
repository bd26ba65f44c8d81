/* C11 <threads.h>: every function bound to libxpthread under both of
   glibc's versions, its results including the error cases, and the
   behaviours that come from the pthread functions underneath: int thread
   results (also through pthread_join), thrd_exit from a nested function
   running cleanup handlers, tss destructors at thread exit, call_once
   among many threads, thrd_sleep cut short by a signal.  Where glibc's
   behaviour is a choice (mtx_init's unchecked type, thrd_sleep's -2), the
   suite compares with glibc's own function or states glibc's value.  */
#define _GNU_SOURCE
#include "sync-helpers.h"
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <threads.h>

#define TIMEOUT 60

static long
elapsed_ms (const struct timespec *since)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (now.tv_sec - since->tv_sec) * 1000
         + (now.tv_nsec - since->tv_nsec) / 1000000;
}

/* --- binding ------------------------------------------------------------ */

static const char *const c11_names[] = {
  "thrd_create", "thrd_current", "thrd_detach", "thrd_equal", "thrd_exit",
  "thrd_join", "thrd_sleep", "thrd_yield", "mtx_init", "mtx_lock",
  "mtx_timedlock", "mtx_trylock", "mtx_unlock", "mtx_destroy", "cnd_init",
  "cnd_signal", "cnd_broadcast", "cnd_wait", "cnd_timedwait", "cnd_destroy",
  "tss_create", "tss_delete", "tss_get", "tss_set", "call_once",
};

/* Only these four have no GLIBC_2.34 version in glibc.  */
static bool
only_in_2_28 (const char *name)
{
  return strcmp (name, "thrd_current") == 0
         || strcmp (name, "thrd_equal") == 0
         || strcmp (name, "thrd_sleep") == 0
         || strcmp (name, "thrd_yield") == 0;
}

static void
require_in_xpthread (const char *what, void *address)
{
  Dl_info info;
  ck_assert_msg (address != NULL, "%s: not found", what);
  ck_assert_msg (dladdr (address, &info) != 0 && info.dli_fname != NULL,
                 "%s: no object contains it", what);
  ck_assert_msg (strstr (info.dli_fname, "libxpthread") != NULL,
                 "%s is bound to %s, not libxpthread", what, info.dli_fname);
}

/* The program's own references, and both versions a binary may ask for
   (built before or after glibc 2.34 moved the functions into libc).  */
START_TEST (test_binding)
{
  require_in_xpthread ("thrd_create", (void *) &thrd_create);
  require_in_xpthread ("thrd_current", (void *) &thrd_current);
  require_in_xpthread ("mtx_lock", (void *) &mtx_lock);
  require_in_xpthread ("cnd_wait", (void *) &cnd_wait);
  require_in_xpthread ("tss_get", (void *) &tss_get);
  require_in_xpthread ("call_once", (void *) &call_once);
  for (size_t i = 0; i < sizeof c11_names / sizeof c11_names[0]; i++)
    {
      const char *name = c11_names[i];
      char what[64];
      snprintf (what, sizeof what, "%s@GLIBC_2.28", name);
      require_in_xpthread (what, dlvsym (RTLD_DEFAULT, name, "GLIBC_2.28"));
      if (only_in_2_28 (name))
        continue;
      snprintf (what, sizeof what, "%s@GLIBC_2.34", name);
      require_in_xpthread (what, dlvsym (RTLD_DEFAULT, name, "GLIBC_2.34"));
    }
}
END_TEST

/* --- threads ------------------------------------------------------------ */

struct seen
{
  thrd_t self;
  pthread_t pthread_self;
};

static int
record_self (void *arg)
{
  struct seen *s = arg;
  s->self = thrd_current ();
  s->pthread_self = pthread_self ();
  return 7;
}

/* A C11 thread is an xpthread thread: it knows itself by the thrd_t its
   creator got, which is its pthread_t.  */
START_TEST (test_create_current_equal)
{
  struct seen s;
  thrd_t t;
  ck_assert_int_eq (thrd_create (&t, record_self, &s), thrd_success);
  int res = 0;
  ck_assert_int_eq (thrd_join (t, &res), thrd_success);
  ck_assert_int_eq (res, 7);
  ck_assert (thrd_equal (s.self, t));
  ck_assert (pthread_equal (s.pthread_self, t));
  ck_assert (!thrd_equal (t, thrd_current ()));
  ck_assert (thrd_equal (thrd_current (), thrd_current ()));
  ck_assert (pthread_equal (thrd_current (), pthread_self ()));
}
END_TEST

static int
return_arg (void *arg)
{
  return (int) (intptr_t) arg;
}

static const int results[] = { 0, 1, 42, -1, -42, INT_MAX, INT_MIN };

START_TEST (test_join_result)
{
  for (size_t i = 0; i < sizeof results / sizeof results[0]; i++)
    {
      thrd_t t;
      ck_assert_int_eq (thrd_create (&t, return_arg,
                                     (void *) (intptr_t) results[i]),
                        thrd_success);
      int res = results[i] + 1;
      ck_assert_int_eq (thrd_join (t, &res), thrd_success);
      ck_assert_int_eq (res, results[i]);
    }
  thrd_t t;
  ck_assert_int_eq (thrd_create (&t, return_arg, (void *) 5), thrd_success);
  ck_assert_int_eq (thrd_join (t, NULL), thrd_success);
}
END_TEST

/* The int travels sign-extended in the pthread result, as in glibc.  */
START_TEST (test_result_through_pthread_join)
{
  thrd_t t;
  ck_assert_int_eq (thrd_create (&t, return_arg, (void *) (intptr_t) -5),
                    thrd_success);
  void *result;
  ck_assert_int_eq (pthread_join (t, &result), 0);
  ck_assert_ptr_eq (result, (void *) (intptr_t) -5);
}
END_TEST

static _Atomic int cleanup_ran;
static _Atomic int after_exit_ran;

static void
note_cleanup (void *arg)
{
  atomic_store (&cleanup_ran, (int) (intptr_t) arg);
}

static void __attribute__ ((noinline))
leave_innermost (int res)
{
  thrd_exit (res);
}

static void __attribute__ ((noinline))
leave_inner (int res)
{
  leave_innermost (res);
  atomic_store (&after_exit_ran, 1);
}

static void __attribute__ ((noinline))
leave_outer (int res)
{
  leave_inner (res);
  atomic_store (&after_exit_ran, 1);
}

static int
exit_nested (void *arg)
{
  int res = (int) (intptr_t) arg;
  pthread_cleanup_push (note_cleanup, (void *) (intptr_t) res);
  leave_outer (res);
  pthread_cleanup_pop (0);
  atomic_store (&after_exit_ran, 1);
  return 0;
}

/* thrd_exit is pthread_exit: its value is the thread's result, nothing
   after it runs, and the cleanup handlers on the way out do.  */
START_TEST (test_exit_nested)
{
  const int values[] = { 77, -3, INT_MIN };
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
    {
      atomic_store (&cleanup_ran, 0);
      thrd_t t;
      ck_assert_int_eq (thrd_create (&t, exit_nested,
                                     (void *) (intptr_t) values[i]),
                        thrd_success);
      int res = 0;
      ck_assert_int_eq (thrd_join (t, &res), thrd_success);
      ck_assert_int_eq (res, values[i]);
      ck_assert_int_eq (atomic_load (&cleanup_ran), values[i]);
      ck_assert_int_eq (atomic_load (&after_exit_ran), 0);
    }
}
END_TEST

static int
wait_for_release (void *arg)
{
  mtx_t *gate = arg;
  mtx_lock (gate);
  mtx_unlock (gate);
  return 0;
}

/* The thread is kept alive on a mutex while it is detached twice and
   joined, so that both failures are about a live, detached thread.  */
START_TEST (test_detach)
{
  mtx_t gate;
  ck_assert_int_eq (mtx_init (&gate, mtx_plain), thrd_success);
  ck_assert_int_eq (mtx_lock (&gate), thrd_success);
  thrd_t t;
  ck_assert_int_eq (thrd_create (&t, wait_for_release, &gate), thrd_success);
  ck_assert_int_eq (thrd_detach (t), thrd_success);
  ck_assert_int_eq (thrd_detach (t), thrd_error);
  int res = 99;
  ck_assert_int_eq (thrd_join (t, &res), thrd_error);
  ck_assert_int_eq (res, 99);
  ck_assert_int_eq (mtx_unlock (&gate), thrd_success);
}
END_TEST

/* thrd_create uses the default attributes, and a thread that cannot get
   its stack (1 PiB: more than the address space) is EAGAIN, which C11
   can only call thrd_error.  */
START_TEST (test_create_fails)
{
  pthread_attr_t attr;
  ck_assert_int_eq (pthread_attr_init (&attr), 0);
  ck_assert_int_eq (pthread_attr_setstacksize (&attr, (size_t) 1 << 50), 0);
  ck_assert_int_eq (pthread_setattr_default_np (&attr), 0);
  thrd_t t;
  ck_assert_int_eq (thrd_create (&t, return_arg, NULL), thrd_error);
  pthread_attr_destroy (&attr);
}
END_TEST

static int
yield_a_while (void *arg)
{
  for (int i = 0; i < 1000; i++)
    thrd_yield ();
  return (int) (intptr_t) arg;
}

START_TEST (test_yield)
{
  thrd_t t;
  ck_assert_int_eq (thrd_create (&t, yield_a_while, (void *) 3), thrd_success);
  yield_a_while (NULL);
  int res;
  ck_assert_int_eq (thrd_join (t, &res), thrd_success);
  ck_assert_int_eq (res, 3);
}
END_TEST

/* --- thrd_sleep --------------------------------------------------------- */

START_TEST (test_sleep)
{
  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  struct timespec d = { 0, 20 * 1000000 }, rem = { 5, 5 };
  ck_assert_int_eq (thrd_sleep (&d, &rem), 0);
  ck_assert_int_ge (elapsed_ms (&start), 20);
  d = (struct timespec) { 0, 0 };
  ck_assert_int_eq (thrd_sleep (&d, NULL), 0);

  /* Other failures: "a negative value", -2 in glibc.  */
  d = (struct timespec) { 0, -1 };
  ck_assert_int_eq (thrd_sleep (&d, &rem), -2);
  d = (struct timespec) { 0, 1000000000 };
  ck_assert_int_eq (thrd_sleep (&d, &rem), -2);
  d = (struct timespec) { -1, 0 };
  ck_assert_int_eq (thrd_sleep (&d, NULL), -2);
}
END_TEST

static _Atomic int sleeper_tid;
static _Atomic int handler_ran;

static void
count_signal (int sig)
{
  (void) sig;
  atomic_fetch_add (&handler_ran, 1);
}

struct sleep_outcome
{
  int result;
  struct timespec remaining;
};

static int
sleep_long (void *arg)
{
  struct sleep_outcome *o = arg;
  struct timespec d = { 10, 0 };
  atomic_store (&sleeper_tid, current_tid ());
  o->result = thrd_sleep (&d, &o->remaining);
  return 0;
}

START_TEST (test_sleep_interrupted)
{
  struct sigaction sa = { .sa_handler = count_signal };
  sigemptyset (&sa.sa_mask);
  ck_assert_int_eq (sigaction (SIGUSR1, &sa, NULL), 0);
  struct sleep_outcome o = { .result = 99 };
  thrd_t t;
  ck_assert_int_eq (thrd_create (&t, sleep_long, &o), thrd_success);
  while (atomic_load (&sleeper_tid) == 0)
    usleep (100);
  wait_until_sleeping (atomic_load (&sleeper_tid));
  ck_assert_int_eq (pthread_kill (t, SIGUSR1), 0);
  ck_assert_int_eq (thrd_join (t, NULL), thrd_success);
  ck_assert_int_eq (atomic_load (&handler_ran), 1);
  ck_assert_int_eq (o.result, -1);
  ck_assert_int_ge (o.remaining.tv_sec, 0);
  ck_assert (o.remaining.tv_nsec >= 0 && o.remaining.tv_nsec < 1000000000);
  ck_assert (o.remaining.tv_sec > 0 || o.remaining.tv_nsec > 0);
  ck_assert (o.remaining.tv_sec < 10);
}
END_TEST

/* --- mutexes ------------------------------------------------------------ */

/* Leaves the mutex as it found it.  */
static int
try_from_other_thread (void *arg)
{
  int res = mtx_trylock (arg);
  if (res == thrd_success)
    mtx_unlock (arg);
  return res;
}

static int
other_thread_trylock (mtx_t *m)
{
  thrd_t t;
  ck_assert_int_eq (thrd_create (&t, try_from_other_thread, m), thrd_success);
  int res;
  ck_assert_int_eq (thrd_join (t, &res), thrd_success);
  return res;
}

static void
check_plain (mtx_t *m)
{
  ck_assert_int_eq (mtx_trylock (m), thrd_success);
  ck_assert_int_eq (mtx_trylock (m), thrd_busy);
  ck_assert_int_eq (other_thread_trylock (m), thrd_busy);
  ck_assert_int_eq (mtx_unlock (m), thrd_success);
  ck_assert_int_eq (mtx_lock (m), thrd_success);
  ck_assert_int_eq (mtx_trylock (m), thrd_busy);
  ck_assert_int_eq (mtx_unlock (m), thrd_success);
}

static void
check_recursive (mtx_t *m)
{
  ck_assert_int_eq (mtx_lock (m), thrd_success);
  ck_assert_int_eq (mtx_lock (m), thrd_success);
  ck_assert_int_eq (mtx_trylock (m), thrd_success);
  ck_assert_int_eq (other_thread_trylock (m), thrd_busy);
  for (int i = 0; i < 3; i++)
    ck_assert_int_eq (mtx_unlock (m), thrd_success);
  /* Unlocking a recursive mutex one does not hold is EPERM.  */
  ck_assert_int_eq (mtx_unlock (m), thrd_error);
  ck_assert_int_eq (other_thread_trylock (m), thrd_success);
}

START_TEST (test_mtx_types)
{
  mtx_t m;
  ck_assert_int_eq (mtx_init (&m, mtx_plain), thrd_success);
  check_plain (&m);
  mtx_destroy (&m);
  ck_assert_int_eq (mtx_init (&m, mtx_timed), thrd_success);
  check_plain (&m);
  mtx_destroy (&m);
  ck_assert_int_eq (mtx_init (&m, mtx_plain | mtx_recursive), thrd_success);
  check_recursive (&m);
  mtx_destroy (&m);
  ck_assert_int_eq (mtx_init (&m, mtx_timed | mtx_recursive), thrd_success);
  check_recursive (&m);
  struct timespec soon = in_ms (CLOCK_REALTIME, 10);
  ck_assert_int_eq (mtx_timedlock (&m, &soon), thrd_success);
  ck_assert_int_eq (mtx_timedlock (&m, &soon), thrd_success);
  ck_assert_int_eq (mtx_unlock (&m), thrd_success);
  ck_assert_int_eq (mtx_unlock (&m), thrd_success);
  mtx_destroy (&m);
}
END_TEST

/* The mutex type bits glibc keeps in __kind.  */
static int
kind_of (const mtx_t *m)
{
  return ((const pthread_mutex_t *) m)->__data.__kind & 3;
}

/* glibc does not validate the type: any other value makes a normal
   mutex and succeeds, and so must xpthread, or a program that works with
   glibc would break.  Compared with glibc's own mtx_init, which only
   writes the object.  */
START_TEST (test_mtx_init_unchecked_type)
{
  void *libc = dlopen ("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ck_assert (libc != NULL);
  int (*glibc_init) (mtx_t *, int)
    = (int (*) (mtx_t *, int)) dlvsym (libc, "mtx_init", "GLIBC_2.34");
  ck_assert (glibc_init != NULL);
  ck_assert_ptr_ne ((void *) glibc_init, (void *) &mtx_init);
  const int types[] = { mtx_plain, mtx_recursive, mtx_timed,
                        mtx_timed | mtx_recursive, -1, 4, 5, 7, 42, INT_MIN,
                        INT_MAX };
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    {
      mtx_t ours, theirs;
      memset (&ours, 0xa5, sizeof ours);
      memset (&theirs, 0xa5, sizeof theirs);
      int want = glibc_init (&theirs, types[i]);
      ck_assert_int_eq (want, thrd_success);
      ck_assert_int_eq (mtx_init (&ours, types[i]), want);
      ck_assert_int_eq (kind_of (&ours), kind_of (&theirs));
      if (kind_of (&ours) == PTHREAD_MUTEX_RECURSIVE)
        check_recursive (&ours);
      else
        check_plain (&ours);
      mtx_destroy (&ours);
    }
  dlclose (libc);
}
END_TEST

struct holder
{
  mtx_t *m;
  mtx_t release;
  _Atomic int holding;
};

static int
hold_until_released (void *arg)
{
  struct holder *h = arg;
  mtx_lock (h->m);
  atomic_store (&h->holding, 1);
  mtx_lock (&h->release);
  mtx_unlock (&h->release);
  mtx_unlock (h->m);
  return 0;
}

static void
start_holder (struct holder *h, mtx_t *m, thrd_t *t)
{
  h->m = m;
  atomic_store (&h->holding, 0);
  ck_assert_int_eq (mtx_init (&h->release, mtx_plain), thrd_success);
  ck_assert_int_eq (mtx_lock (&h->release), thrd_success);
  ck_assert_int_eq (thrd_create (t, hold_until_released, h), thrd_success);
  while (!atomic_load (&h->holding))
    usleep (100);
}

static void
stop_holder (struct holder *h, thrd_t t)
{
  ck_assert_int_eq (mtx_unlock (&h->release), thrd_success);
  ck_assert_int_eq (thrd_join (t, NULL), thrd_success);
  mtx_destroy (&h->release);
}

START_TEST (test_mtx_timedlock)
{
  const int types[] = { mtx_timed, mtx_timed | mtx_recursive };
  for (size_t i = 0; i < 2; i++)
    {
      mtx_t m;
      ck_assert_int_eq (mtx_init (&m, types[i]), thrd_success);
      struct holder h;
      thrd_t t;
      start_holder (&h, &m, &t);

      struct timespec start;
      clock_gettime (CLOCK_MONOTONIC, &start);
      struct timespec deadline = in_ms (CLOCK_REALTIME, 50);
      ck_assert_int_eq (mtx_timedlock (&m, &deadline), thrd_timedout);
      ck_assert_int_ge (elapsed_ms (&start), 49);
      struct timespec past = in_ms (CLOCK_REALTIME, -1000);
      ck_assert_int_eq (mtx_timedlock (&m, &past), thrd_timedout);
      /* EINVAL, for a time point that must be looked at.  */
      struct timespec bad = { 0, -5 };
      ck_assert_int_eq (mtx_timedlock (&m, &bad), thrd_error);
      bad.tv_nsec = 1000000000;
      ck_assert_int_eq (mtx_timedlock (&m, &bad), thrd_error);
      ck_assert_int_eq (mtx_trylock (&m), thrd_busy);

      stop_holder (&h, t);
      deadline = in_ms (CLOCK_REALTIME, 1000);
      ck_assert_int_eq (mtx_timedlock (&m, &deadline), thrd_success);
      ck_assert_int_eq (mtx_unlock (&m), thrd_success);
      mtx_destroy (&m);
    }
}
END_TEST

#define COUNT_THREADS 4
#define COUNT_ROUNDS 100000

struct counter
{
  mtx_t m;
  long value;
};

static int
count_up (void *arg)
{
  struct counter *c = arg;
  for (int i = 0; i < COUNT_ROUNDS; i++)
    {
      if (mtx_lock (&c->m) != thrd_success)
        return 1;
      c->value++;
      mtx_unlock (&c->m);
    }
  return 0;
}

START_TEST (test_mtx_no_lost_update)
{
  static struct counter c;
  ck_assert_int_eq (mtx_init (&c.m, mtx_plain), thrd_success);
  thrd_t t[COUNT_THREADS];
  for (int i = 0; i < COUNT_THREADS; i++)
    ck_assert_int_eq (thrd_create (&t[i], count_up, &c), thrd_success);
  for (int i = 0; i < COUNT_THREADS; i++)
    {
      int res = -1;
      ck_assert_int_eq (thrd_join (t[i], &res), thrd_success);
      ck_assert_int_eq (res, 0);
    }
  ck_assert_int_eq (c.value, (long) COUNT_THREADS * COUNT_ROUNDS);
  mtx_destroy (&c.m);
}
END_TEST

/* --- condition variables ------------------------------------------------ */

START_TEST (test_cnd_timedwait_timeout)
{
  cnd_t c;
  mtx_t m;
  ck_assert_int_eq (cnd_init (&c), thrd_success);
  ck_assert_int_eq (mtx_init (&m, mtx_timed), thrd_success);
  ck_assert_int_eq (mtx_lock (&m), thrd_success);
  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  struct timespec deadline = in_ms (CLOCK_REALTIME, 50);
  ck_assert_int_eq (cnd_timedwait (&c, &m, &deadline), thrd_timedout);
  ck_assert_int_ge (elapsed_ms (&start), 49);
  /* The mutex is held again after the timeout.  */
  ck_assert_int_eq (other_thread_trylock (&m), thrd_busy);
  struct timespec bad = { 0, 1000000000 };
  ck_assert_int_eq (cnd_timedwait (&c, &m, &bad), thrd_error);
  ck_assert_int_eq (mtx_unlock (&m), thrd_success);
  /* Nobody waits: signal and broadcast still succeed.  */
  ck_assert_int_eq (cnd_signal (&c), thrd_success);
  ck_assert_int_eq (cnd_broadcast (&c), thrd_success);
  cnd_destroy (&c);
  mtx_destroy (&m);
}
END_TEST

#define WAITERS 6

struct rendezvous
{
  mtx_t m;
  cnd_t c;
  int waiting;
  int tickets;
  int woken;
  bool timed;
};

static int
take_ticket (void *arg)
{
  struct rendezvous *r = arg;
  mtx_lock (&r->m);
  r->waiting++;
  while (r->tickets == 0)
    {
      int res;
      if (r->timed)
        {
          struct timespec deadline = in_ms (CLOCK_REALTIME, 30000);
          res = cnd_timedwait (&r->c, &r->m, &deadline);
        }
      else
        res = cnd_wait (&r->c, &r->m);
      if (res != thrd_success)
        {
          mtx_unlock (&r->m);
          return res;
        }
    }
  r->tickets--;
  r->woken++;
  mtx_unlock (&r->m);
  return thrd_success;
}

static void
wait_for_waiters (struct rendezvous *r, int n)
{
  for (;;)
    {
      mtx_lock (&r->m);
      int waiting = r->waiting;
      mtx_unlock (&r->m);
      if (waiting == n)
        return;
      usleep (1000);
    }
}

static void
hand_out (struct rendezvous *r, int n, bool all)
{
  mtx_lock (&r->m);
  r->tickets += n;
  ck_assert_int_eq (all ? cnd_broadcast (&r->c) : cnd_signal (&r->c),
                    thrd_success);
  mtx_unlock (&r->m);
}

static void
run_rendezvous (bool timed)
{
  static struct rendezvous r;
  memset (&r, 0, sizeof r);
  r.timed = timed;
  ck_assert_int_eq (mtx_init (&r.m, mtx_plain), thrd_success);
  ck_assert_int_eq (cnd_init (&r.c), thrd_success);
  thrd_t t[WAITERS];
  for (int i = 0; i < WAITERS; i++)
    ck_assert_int_eq (thrd_create (&t[i], take_ticket, &r), thrd_success);
  wait_for_waiters (&r, WAITERS);
  /* One ticket per signal, then the rest at once.  */
  for (int i = 0; i < 2; i++)
    hand_out (&r, 1, false);
  hand_out (&r, WAITERS - 2, true);
  for (int i = 0; i < WAITERS; i++)
    {
      int res = -1;
      ck_assert_int_eq (thrd_join (t[i], &res), thrd_success);
      ck_assert_int_eq (res, thrd_success);
    }
  ck_assert_int_eq (r.woken, WAITERS);
  ck_assert_int_eq (r.tickets, 0);
  cnd_destroy (&r.c);
  mtx_destroy (&r.m);
}

START_TEST (test_cnd_signal_broadcast)
{
  run_rendezvous (false);
}
END_TEST

START_TEST (test_cnd_timedwait_woken)
{
  run_rendezvous (true);
}
END_TEST

/* --- thread-specific storage -------------------------------------------- */

static tss_t key;
static _Atomic int dtor_runs;
static _Atomic (void *) dtor_value;
static _Atomic (pthread_t) dtor_thread;
static _Atomic int dtor_refill;

static void
record_dtor (void *value)
{
  atomic_fetch_add (&dtor_runs, 1);
  atomic_store (&dtor_value, value);
  atomic_store (&dtor_thread, pthread_self ());
  /* A destructor that stores again is called again, up to
     TSS_DTOR_ITERATIONS times in all.  */
  if (atomic_load (&dtor_refill))
    tss_set (key, value);
}

static int
set_and_return (void *arg)
{
  if (tss_get (key) != NULL)
    return 1;
  if (tss_set (key, arg) != thrd_success || tss_get (key) != arg)
    return 2;
  return 0;
}

static int
set_and_exit (void *arg)
{
  tss_set (key, arg);
  thrd_exit (3);
}

static void
run_with_key (thrd_start_t func, void *value, int want)
{
  atomic_store (&dtor_runs, 0);
  atomic_store (&dtor_value, NULL);
  thrd_t t;
  ck_assert_int_eq (thrd_create (&t, func, value), thrd_success);
  int res = -1;
  ck_assert_int_eq (thrd_join (t, &res), thrd_success);
  ck_assert_int_eq (res, want);
}

START_TEST (test_tss_destructor)
{
  static int a, b;
  ck_assert_int_eq (tss_create (&key, record_dtor), thrd_success);
  ck_assert_ptr_null (tss_get (key));
  ck_assert_int_eq (tss_set (key, &a), thrd_success);
  ck_assert_ptr_eq (tss_get (key), &a);

  /* Each thread has its own value, and its destructor runs in it.  */
  atomic_store (&dtor_thread, (pthread_t) 0);
  thrd_t t;
  ck_assert_int_eq (thrd_create (&t, set_and_return, &b), thrd_success);
  int res = -1;
  ck_assert_int_eq (thrd_join (t, &res), thrd_success);
  ck_assert_int_eq (res, 0);
  ck_assert_int_eq (atomic_load (&dtor_runs), 1);
  ck_assert_ptr_eq (atomic_load (&dtor_value), &b);
  ck_assert (thrd_equal (atomic_load (&dtor_thread), t));
  ck_assert_ptr_eq (tss_get (key), &a);

  /* thrd_exit runs them too.  */
  run_with_key (set_and_exit, &b, 3);
  ck_assert_int_eq (atomic_load (&dtor_runs), 1);
  ck_assert_ptr_eq (atomic_load (&dtor_value), &b);

  /* No destructor for a NULL value.  */
  run_with_key (set_and_return, NULL, 0);
  ck_assert_int_eq (atomic_load (&dtor_runs), 0);

  atomic_store (&dtor_refill, 1);
  run_with_key (set_and_return, &b, 0);
  ck_assert_int_eq (atomic_load (&dtor_runs), TSS_DTOR_ITERATIONS);
  atomic_store (&dtor_refill, 0);

  /* Deleting runs no destructor.  */
  atomic_store (&dtor_runs, 0);
  tss_delete (key);
  ck_assert_int_eq (atomic_load (&dtor_runs), 0);
}
END_TEST

START_TEST (test_tss_errors)
{
  tss_t k;
  ck_assert_int_eq (tss_create (&k, NULL), thrd_success);
  static int v;
  ck_assert_int_eq (tss_set (k, &v), thrd_success);
  tss_delete (k);
  ck_assert_int_eq (tss_set (k, &v), thrd_error);
  ck_assert_ptr_null (tss_get (k));
  ck_assert_int_eq (tss_set (100000, &v), thrd_error);
  ck_assert_ptr_null (tss_get (100000));

  /* Out of keys is EAGAIN, thrd_error to C11.  */
  int created = 0, res;
  while ((res = tss_create (&k, NULL)) == thrd_success)
    created++;
  ck_assert_int_eq (res, thrd_error);
  ck_assert_int_ge (created, PTHREAD_KEYS_MAX - 16);
}
END_TEST

/* --- call_once ---------------------------------------------------------- */

#define ONCE_THREADS 16

static once_flag flag = ONCE_FLAG_INIT;
static _Atomic int once_runs;
static int once_data;
static _Atomic int go;

static void
init_once (void)
{
  atomic_fetch_add (&once_runs, 1);
  /* Long enough for the others to arrive and wait.  */
  usleep (20000);
  once_data = 1234;
}

static int
race_to_once (void *arg)
{
  (void) arg;
  while (!atomic_load (&go))
    thrd_yield ();
  call_once (&flag, init_once);
  /* The routine's effects are visible to every caller that returns.  */
  return once_data == 1234 ? 0 : 1;
}

START_TEST (test_call_once)
{
  once_flag fresh = ONCE_FLAG_INIT;
  pthread_once_t posix = PTHREAD_ONCE_INIT;
  ck_assert_int_eq (memcmp (&fresh, &posix, sizeof posix), 0);

  thrd_t t[ONCE_THREADS];
  for (int i = 0; i < ONCE_THREADS; i++)
    ck_assert_int_eq (thrd_create (&t[i], race_to_once, NULL), thrd_success);
  atomic_store (&go, 1);
  for (int i = 0; i < ONCE_THREADS; i++)
    {
      int res = -1;
      ck_assert_int_eq (thrd_join (t[i], &res), thrd_success);
      ck_assert_int_eq (res, 0);
    }
  ck_assert_int_eq (atomic_load (&once_runs), 1);
  call_once (&flag, init_once);
  ck_assert_int_eq (atomic_load (&once_runs), 1);
}
END_TEST

int
main (void)
{
  Suite *s = suite_create ("c11");
  TCase *tc = tcase_create ("binding");
  tcase_add_test (tc, test_binding);
  suite_add_tcase (s, tc);

  tc = tcase_create ("thrd");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_create_current_equal);
  tcase_add_test (tc, test_join_result);
  tcase_add_test (tc, test_result_through_pthread_join);
  tcase_add_test (tc, test_exit_nested);
  tcase_add_test (tc, test_detach);
  tcase_add_test (tc, test_create_fails);
  tcase_add_test (tc, test_yield);
  tcase_add_test (tc, test_sleep);
  tcase_add_test (tc, test_sleep_interrupted);
  suite_add_tcase (s, tc);

  tc = tcase_create ("mtx");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_mtx_types);
  tcase_add_test (tc, test_mtx_init_unchecked_type);
  tcase_add_test (tc, test_mtx_timedlock);
  tcase_add_test (tc, test_mtx_no_lost_update);
  suite_add_tcase (s, tc);

  tc = tcase_create ("cnd");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_cnd_timedwait_timeout);
  tcase_add_test (tc, test_cnd_signal_broadcast);
  tcase_add_test (tc, test_cnd_timedwait_woken);
  suite_add_tcase (s, tc);

  tc = tcase_create ("tss");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_tss_destructor);
  tcase_add_test (tc, test_tss_errors);
  suite_add_tcase (s, tc);

  tc = tcase_create ("once");
  tcase_set_timeout (tc, TIMEOUT);
  tcase_add_test (tc, test_call_once);
  suite_add_tcase (s, tc);
  return xp_test_run (s);
}
