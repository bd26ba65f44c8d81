/* Cancellation and pthread_exit: pthread_cancel with deferred and
   asynchronous cancellation, the cancel state and type and their errors,
   cleanup handlers (nested across frames, pop(1) and pop(0), the _defer
   and _restore forms, the old _pthread_cleanup_push ABI interleaved with
   the macros), the order of cleanup handlers and thread-specific data
   destructors, the main thread's pthread_exit, the waits that are
   cancellation points (condition variables, semaphores, joins), and a
   cancel storm over pipes and a condition-variable queue.

   The same source is built twice: without -fexceptions, where <pthread.h>'s
   cleanup macros are setjmp-based (__pthread_register_cancel and
   __pthread_unwind_next), and with -fexceptions, where they are
   __attribute__ ((cleanup)) frames run by the unwinder.

   Every test also passes as a plain glibc program without xpthread (except
   the binding checks).  Three checks are made only with xpthread, where it
   promises more than glibc 2.36 does: a cancel never discards a completed
   read or write (the storm; DESIGN.md section 6), a waiter cancelled in
   sem_wait never swallows a post's wake-up (lib/sync/sem.c), and a cancel
   acted on by pthread_setcancelstate ends the thread with PTHREAD_CANCELED
   (glibc 2.36 leaves a null result, a glibc bug).

   Worker threads never assert: they record what they saw and the main
   thread checks it.  Deadlines only serve as watchdogs.  */
#define _GNU_SOURCE
#include "sync-helpers.h"
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef __EXCEPTIONS
# define CLEANUP_BY_UNWINDER 1
#else
# define CLEANUP_BY_UNWINDER 0
#endif

/* The old cleanup ABI, exported by libc (and libxpthread) but no longer
   declared by <pthread.h>.  */
extern void _pthread_cleanup_push (struct _pthread_cleanup_buffer *,
                                   void (*) (void *), void *);
extern void _pthread_cleanup_pop (struct _pthread_cleanup_buffer *, int);

#define NOINLINE __attribute__ ((noinline))

/* ---- helpers -------------------------------------------------------- */

/* The events of a test, in order, as letters; read by the main thread
   after the join that ends the writers.  */
enum { LOG_MAX = 63 };
static char event_log[LOG_MAX + 1];
static int event_len;

static void
record (char c)
{
  int i = __atomic_fetch_add (&event_len, 1, __ATOMIC_ACQ_REL);
  if (i < LOG_MAX)
    event_log[i] = c;
}

static void
record_handler (void *arg)
{
  record ((char) (uintptr_t) arg);
}

/* The argument of record_handler that records c.  */
#define EV(c) ((void *) (uintptr_t) (c))

static int
load (const int *p)
{
  return __atomic_load_n (p, __ATOMIC_ACQUIRE);
}

static void
store (int *p, int v)
{
  __atomic_store_n (p, v, __ATOMIC_RELEASE);
}

/* Wait until *p is at least want, without a cancellation point.  */
static void
wait_for (const int *p, int want)
{
  while (load (p) < want)
    sched_yield ();
}

/* How far a worker got: the main thread checks which steps it passed.  */
static int progress;
/* Set by the main thread once its pthread_cancel has returned.  */
static int cancel_sent;
/* Set by a worker once it is ready to be cancelled.  */
static int ready;

static void *
join_result (pthread_t t)
{
  void *result = (void *) 0xdead;
  ck_assert_int_eq (pthread_join (t, &result), 0);
  return result;
}

static void
cancel_and_expect_cancelled (pthread_t t)
{
  ck_assert_int_eq (pthread_cancel (t), 0);
  store (&cancel_sent, 1);
  ck_assert_ptr_eq (join_result (t), PTHREAD_CANCELED);
}

static bool
is_xpthread (void)
{
  return dlsym (RTLD_DEFAULT, "xpthread_mode_np") != NULL;
}

static void
require_bound_to_xpthread (const char *name, void *address)
{
  Dl_info info;
  ck_assert_msg (dladdr (address, &info) != 0 && info.dli_fname != NULL,
                 "%s: no object contains it", name);
  ck_assert_msg (strstr (info.dli_fname, "libxpthread") != NULL,
                 "%s is bound to %s, not libxpthread", name, info.dli_fname);
}

/* ---- binding -------------------------------------------------------- */

START_TEST (cancel_functions_are_xpthread)
{
  require_bound_to_xpthread ("pthread_cancel", (void *) &pthread_cancel);
  require_bound_to_xpthread ("pthread_testcancel",
                             (void *) &pthread_testcancel);
  require_bound_to_xpthread ("pthread_setcancelstate",
                             (void *) &pthread_setcancelstate);
  require_bound_to_xpthread ("pthread_setcanceltype",
                             (void *) &pthread_setcanceltype);
  require_bound_to_xpthread ("pthread_exit", (void *) &pthread_exit);
  require_bound_to_xpthread ("_pthread_cleanup_push",
                             (void *) &_pthread_cleanup_push);
#if !CLEANUP_BY_UNWINDER
  require_bound_to_xpthread ("__pthread_register_cancel",
                             (void *) &__pthread_register_cancel);
  require_bound_to_xpthread ("__pthread_unwind_next",
                             (void *) &__pthread_unwind_next);
#endif
}
END_TEST

/* ---- deferred cancellation ------------------------------------------ */

static unsigned long loops;

static void *
loop_on_testcancel (void *arg)
{
  for (;;)
    {
      __atomic_fetch_add (&loops, 1, __ATOMIC_RELAXED);
      pthread_testcancel ();
    }
  return arg;
}

START_TEST (cancel_testcancel_loop)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, loop_on_testcancel, NULL), 0);
  while (__atomic_load_n (&loops, __ATOMIC_RELAXED) < 1000)
    sched_yield ();
  cancel_and_expect_cancelled (t);
}
END_TEST

/* Nested cleanup handlers across three frames.  The innermost frame
   leaves by pthread_exit (how == 'e') or is cancelled at a testcancel
   (how == 'c').  Expected: X (pop(1) ran it), never Y (pop(0)), then
   D C B A in stack order.  */
static void NOINLINE
nested_level2 (int how)
{
  pthread_cleanup_push (record_handler, EV ('C'));
  pthread_cleanup_push (record_handler, EV ('D'));
  if (how == 'e')
    pthread_exit ((void *) 0x1234);
  store (&ready, 1);
  for (;;)
    pthread_testcancel ();
  pthread_cleanup_pop (0);
  pthread_cleanup_pop (0);
}

static void NOINLINE
nested_level1 (int how)
{
  pthread_cleanup_push (record_handler, EV ('B'));
  pthread_cleanup_push (record_handler, EV ('X'));
  pthread_cleanup_pop (1);
  pthread_cleanup_push (record_handler, EV ('Y'));
  pthread_cleanup_pop (0);
  nested_level2 (how);
  pthread_cleanup_pop (0);
}

static void *
nested_level0 (void *arg)
{
  pthread_cleanup_push (record_handler, EV ('A'));
  nested_level1 ((int) (intptr_t) arg);
  pthread_cleanup_pop (0);
  return (void *) 0xbad;
}

START_TEST (cleanup_order_under_cancel)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, nested_level0,
                                    (void *) (intptr_t) 'c'), 0);
  wait_for (&ready, 1);
  cancel_and_expect_cancelled (t);
  ck_assert_str_eq (event_log, "XDCBA");
}
END_TEST

START_TEST (cleanup_order_under_exit)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, nested_level0,
                                    (void *) (intptr_t) 'e'), 0);
  ck_assert_ptr_eq (join_result (t), (void *) 0x1234);
  ck_assert_str_eq (event_log, "XDCBA");
}
END_TEST

/* Without exit or cancel: pop(1) runs the handler, pop(0) does not, and
   nothing runs when the start routine returns.  */
static void *
push_pop_and_return (void *arg)
{
  pthread_cleanup_push (record_handler, EV ('A'));
  pthread_cleanup_push (record_handler, EV ('B'));
  pthread_cleanup_pop (1);
  pthread_cleanup_push (record_handler, EV ('C'));
  pthread_cleanup_pop (0);
  pthread_cleanup_pop (1);
  pthread_cleanup_push (record_handler, EV ('D'));
  pthread_cleanup_pop (0);
  return arg;
}

START_TEST (pop_runs_only_when_asked)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, push_pop_and_return,
                                    (void *) 0x77), 0);
  ck_assert_ptr_eq (join_result (t), (void *) 0x77);
  ck_assert_str_eq (event_log, "BA");
}
END_TEST

static void NOINLINE
exit_deep (int depth, void *value)
{
  if (depth < 0)
    return;
  if (depth == 0)
    pthread_exit (value);
  exit_deep (depth - 1, value);
  record ('!');
}

static void *
exit_from_depth (void *arg)
{
  exit_deep (20, arg);
  return NULL;
}

START_TEST (exit_value_reaches_joiner)
{
  static int object;
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, exit_from_depth, &object), 0);
  ck_assert_ptr_eq (join_result (t), &object);
  ck_assert_int_eq (pthread_create (&t, NULL, exit_from_depth, NULL), 0);
  ck_assert_ptr_eq (join_result (t), NULL);
  ck_assert_str_eq (event_log, "");
}
END_TEST

/* Disabled, the thread carries on through testcancel; enabling again in
   deferred mode does not act either; the next testcancel does.  */
static int old_states[2] = { -1, -1 };

static void *
disable_then_enable (void *arg)
{
  pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, &old_states[0]);
  store (&ready, 1);
  wait_for (&cancel_sent, 1);
  for (int i = 0; i < 100; i++)
    pthread_testcancel ();
  store (&progress, 1);
  pthread_setcancelstate (PTHREAD_CANCEL_ENABLE, &old_states[1]);
  store (&progress, 2);
  pthread_testcancel ();
  store (&progress, 3);
  return arg;
}

START_TEST (disabled_cancel_waits_for_enable)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, disable_then_enable, NULL), 0);
  wait_for (&ready, 1);
  cancel_and_expect_cancelled (t);
  ck_assert_int_eq (progress, 2);
  ck_assert_int_eq (old_states[0], PTHREAD_CANCEL_ENABLE);
  ck_assert_int_eq (old_states[1], PTHREAD_CANCEL_DISABLE);
}
END_TEST

/* A cancel that arrives while disabled and is never enabled has no
   effect: the thread's own result reaches the joiner.  */
static void *
disabled_until_return (void *arg)
{
  pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, NULL);
  store (&ready, 1);
  wait_for (&cancel_sent, 1);
  pthread_testcancel ();
  return arg;
}

START_TEST (disabled_cancel_never_acts)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, disabled_until_return,
                                    (void *) 0x42), 0);
  wait_for (&ready, 1);
  ck_assert_int_eq (pthread_cancel (t), 0);
  store (&cancel_sent, 1);
  ck_assert_ptr_eq (join_result (t), (void *) 0x42);
}
END_TEST

static int self_cancel_result = -1;

static void *
cancel_self (void *arg)
{
  pthread_cleanup_push (record_handler, EV ('H'));
  self_cancel_result = pthread_cancel (pthread_self ());
  store (&progress, 1);
  record ('1');
  pthread_testcancel ();
  store (&progress, 2);
  pthread_cleanup_pop (0);
  return arg;
}

START_TEST (self_cancel_acts_at_testcancel)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, cancel_self, NULL), 0);
  ck_assert_ptr_eq (join_result (t), PTHREAD_CANCELED);
  ck_assert_int_eq (self_cancel_result, 0);
  ck_assert_int_eq (progress, 1);
  ck_assert_str_eq (event_log, "1H");
}
END_TEST

static int exited_tid;

static void *
note_tid_and_return (void *arg)
{
  store (&exited_tid, current_tid ());
  return arg;
}

/* The thread has ended; its outcome is settled and the cancel is a
   no-op.  */
START_TEST (cancel_after_exit_keeps_result)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, note_tid_and_return,
                                    (void *) 0x77), 0);
  wait_for (&exited_tid, 1);
  while (syscall (SYS_tgkill, getpid (), exited_tid, 0) == 0)
    usleep (1000);
  ck_assert_int_eq (errno, ESRCH);
  ck_assert_int_eq (pthread_cancel (t), 0);
  ck_assert_ptr_eq (join_result (t), (void *) 0x77);
}
END_TEST

/* Thread-specific data destructors run after every cleanup handler.  */
static pthread_key_t tsd_key;

static void
tsd_destructor (void *value)
{
  record ((char) (uintptr_t) value);
}

static void *
tsd_then_exit_or_cancel (void *arg)
{
  pthread_setspecific (tsd_key, (void *) (uintptr_t) 'K');
  pthread_cleanup_push (record_handler, EV ('B'));
  pthread_cleanup_push (record_handler, EV ('A'));
  if (arg != NULL)
    pthread_exit (arg);
  store (&ready, 1);
  for (;;)
    pthread_testcancel ();
  pthread_cleanup_pop (0);
  pthread_cleanup_pop (0);
  return NULL;
}

START_TEST (tsd_destructors_after_cleanup)
{
  ck_assert_int_eq (pthread_key_create (&tsd_key, tsd_destructor), 0);
  pthread_t t;
  void *how = _i == 0 ? (void *) 0x5 : NULL;
  ck_assert_int_eq (pthread_create (&t, NULL, tsd_then_exit_or_cancel, how),
                    0);
  if (how == NULL)
    {
      wait_for (&ready, 1);
      cancel_and_expect_cancelled (t);
    }
  else
    ck_assert_ptr_eq (join_result (t), how);
  ck_assert_str_eq (event_log, "ABK");
}
END_TEST

/* A cleanup handler's cancellation point does not start the cancel over:
   the thread is already on its way out.  */
static void
handler_calling_testcancel (void *arg)
{
  record ('T');
  pthread_testcancel ();
  record ('t');
}

static void *
cancelled_with_testcancel_handler (void *arg)
{
  pthread_cleanup_push (record_handler, EV ('A'));
  pthread_cleanup_push (handler_calling_testcancel, NULL);
  store (&ready, 1);
  for (;;)
    pthread_testcancel ();
  pthread_cleanup_pop (0);
  pthread_cleanup_pop (0);
  return arg;
}

START_TEST (testcancel_in_handler_is_quiet)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL,
                                    cancelled_with_testcancel_handler, NULL),
                    0);
  wait_for (&ready, 1);
  cancel_and_expect_cancelled (t);
  ck_assert_str_eq (event_log, "TtA");
}
END_TEST

/* pthread_exit with a cancel pending (requested while disabled): the
   handler enables cancellation and tests it; the exit goes on with the
   thread's own value.  */
static void
enable_and_test (void *arg)
{
  pthread_setcancelstate (PTHREAD_CANCEL_ENABLE, NULL);
  pthread_testcancel ();
  record ('R');
}

static void *
exit_with_pending_cancel (void *arg)
{
  pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, NULL);
  store (&ready, 1);
  wait_for (&cancel_sent, 1);
  pthread_cleanup_push (enable_and_test, NULL);
  pthread_exit (arg);
  pthread_cleanup_pop (0);
  return NULL;
}

START_TEST (exit_wins_over_pending_cancel)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, exit_with_pending_cancel,
                                    (void *) 0x55), 0);
  wait_for (&ready, 1);
  ck_assert_int_eq (pthread_cancel (t), 0);
  store (&cancel_sent, 1);
  ck_assert_ptr_eq (join_result (t), (void *) 0x55);
  ck_assert_str_eq (event_log, "R");
}
END_TEST

START_TEST (invalid_state_and_type)
{
  int old = -1;
  ck_assert_int_eq (pthread_setcancelstate (2, &old), EINVAL);
  ck_assert_int_eq (pthread_setcancelstate (-1, &old), EINVAL);
  ck_assert_int_eq (pthread_setcancelstate (INT_MAX, NULL), EINVAL);
  ck_assert_int_eq (pthread_setcanceltype (2, &old), EINVAL);
  ck_assert_int_eq (pthread_setcanceltype (-1, &old), EINVAL);
  ck_assert_int_eq (pthread_setcanceltype (INT_MAX, NULL), EINVAL);
  /* Nothing changed; a null old-value pointer is accepted.  */
  ck_assert_int_eq (pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, &old), 0);
  ck_assert_int_eq (old, PTHREAD_CANCEL_ENABLE);
  ck_assert_int_eq (pthread_setcancelstate (PTHREAD_CANCEL_ENABLE, NULL), 0);
  ck_assert_int_eq (pthread_setcanceltype (PTHREAD_CANCEL_DEFERRED, &old), 0);
  ck_assert_int_eq (old, PTHREAD_CANCEL_DEFERRED);
  ck_assert_int_eq (pthread_setcancelstate (PTHREAD_CANCEL_ENABLE, &old), 0);
  ck_assert_int_eq (old, PTHREAD_CANCEL_ENABLE);
}
END_TEST

/* ---- asynchronous cancellation -------------------------------------- */

static volatile unsigned long spin_counter;
static volatile int spin_stop;

/* A loop without a single call.  Without -fexceptions the setjmp-based
   cleanup of this frame runs; with it, the unwind tables describe only
   call sites and neither glibc nor xpthread can run it (the enclosing
   frame's cleanup runs in both cases).  */
static void NOINLINE
compute_loop (void)
{
  pthread_cleanup_push (record_handler, EV ('I'));
  pthread_setcanceltype (PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
  store (&ready, 1);
  while (!spin_stop)
    spin_counter++;
  pthread_cleanup_pop (0);
}

static void *
compute_in_async_mode (void *arg)
{
  pthread_cleanup_push (record_handler, EV ('O'));
  compute_loop ();
  pthread_cleanup_pop (0);
  return arg;
}

START_TEST (async_cancels_compute_loop)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, compute_in_async_mode, NULL),
                    0);
  wait_for (&ready, 1);
  unsigned long seen = spin_counter;
  while (spin_counter == seen)
    sched_yield ();
  cancel_and_expect_cancelled (t);
#if CLEANUP_BY_UNWINDER
  ck_assert_msg (strcmp (event_log, "O") == 0
                 || strcmp (event_log, "IO") == 0, "log %s", event_log);
#else
  ck_assert_str_eq (event_log, "IO");
#endif
}
END_TEST

/* A cancel pending while deferred (or disabled) acts at once when the
   thread turns asynchronous (or enables it in asynchronous mode).  glibc
   2.36 acts there too but, through pthread_setcancelstate, ends the thread
   with a null result instead of PTHREAD_CANCELED (a glibc bug): the
   result is checked only with xpthread.  */
static int old_type = -1;

static void *
go_async_with_pending (void *arg)
{
  bool through_state = arg != NULL;
  if (through_state)
    {
      pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, NULL);
      pthread_setcanceltype (PTHREAD_CANCEL_ASYNCHRONOUS, &old_type);
    }
  store (&ready, 1);
  wait_for (&cancel_sent, 1);
  store (&progress, 1);
  if (through_state)
    pthread_setcancelstate (PTHREAD_CANCEL_ENABLE, NULL);
  else
    pthread_setcanceltype (PTHREAD_CANCEL_ASYNCHRONOUS, &old_type);
  store (&progress, 2);
  pthread_testcancel ();
  store (&progress, 3);
  return NULL;
}

START_TEST (async_with_pending_acts_at_once)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, go_async_with_pending,
                                    _i == 0 ? NULL : (void *) 1), 0);
  wait_for (&ready, 1);
  ck_assert_int_eq (pthread_cancel (t), 0);
  store (&cancel_sent, 1);
  void *result = join_result (t);
  ck_assert_int_eq (progress, 1);
  if (_i == 0 || is_xpthread ())
    ck_assert_ptr_eq (result, PTHREAD_CANCELED);
  if (_i == 1)
    ck_assert_int_eq (old_type, PTHREAD_CANCEL_DEFERRED);
}
END_TEST

static int types_seen[3] = { -1, -1, -1 };

static void *
switch_types (void *arg)
{
  pthread_setcanceltype (PTHREAD_CANCEL_ASYNCHRONOUS, &types_seen[0]);
  pthread_setcanceltype (PTHREAD_CANCEL_DEFERRED, &types_seen[1]);
  pthread_setcanceltype (PTHREAD_CANCEL_DEFERRED, &types_seen[2]);
  return arg;
}

START_TEST (canceltype_reports_old_type)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, switch_types, NULL), 0);
  ck_assert_ptr_eq (join_result (t), NULL);
  ck_assert_int_eq (types_seen[0], PTHREAD_CANCEL_DEFERRED);
  ck_assert_int_eq (types_seen[1], PTHREAD_CANCEL_ASYNCHRONOUS);
  ck_assert_int_eq (types_seen[2], PTHREAD_CANCEL_DEFERRED);
}
END_TEST

/* pthread_cleanup_push_defer_np makes the region deferred and
   pthread_cleanup_pop_restore_np restores the type it found.  */
static int defer_types[4] = { -1, -1, -1, -1 };

/* One deferred region, its handler run or not; the types seen inside and
   after it go to types[0] and types[1].  A function of its own, as each
   region's setjmp buffer is best alone in its frame.  */
static void
one_defer_region (bool start_async, int letter, int execute, int *types)
{
  if (start_async)
    pthread_setcanceltype (PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
  pthread_cleanup_push_defer_np (record_handler, EV (letter));
  /* Setting the type it has reads it back unchanged.  */
  pthread_setcanceltype (PTHREAD_CANCEL_DEFERRED, &types[0]);
  pthread_cleanup_pop_restore_np (execute);
  pthread_setcanceltype (PTHREAD_CANCEL_DEFERRED, &types[1]);
}

static void *
defer_region (void *arg)
{
  bool start_async = arg != NULL;
  one_defer_region (start_async, 'D', 1, &defer_types[0]);
  one_defer_region (start_async, 'E', 0, &defer_types[2]);
  return arg;
}

START_TEST (defer_np_restores_type)
{
  pthread_t t;
  void *start_async = _i == 0 ? NULL : (void *) 1;
  int before = _i == 0 ? PTHREAD_CANCEL_DEFERRED
                       : PTHREAD_CANCEL_ASYNCHRONOUS;
  ck_assert_int_eq (pthread_create (&t, NULL, defer_region, start_async), 0);
  ck_assert_ptr_eq (join_result (t), start_async);
  ck_assert_int_eq (defer_types[0], PTHREAD_CANCEL_DEFERRED);
  ck_assert_int_eq (defer_types[1], before);
  ck_assert_int_eq (defer_types[2], PTHREAD_CANCEL_DEFERRED);
  ck_assert_int_eq (defer_types[3], before);
  ck_assert_str_eq (event_log, "D");
}
END_TEST

/* A cancel that arrives inside the deferred region of an asynchronous
   thread waits for the region's end, and acts as the type is restored.
   With -fexceptions the macro restores the type while its handler is
   still armed, so the handler runs (glibc's <pthread.h> does it that way);
   without, the handler is unregistered first.  */
static void *
cancel_inside_defer_region (void *arg)
{
  pthread_setcanceltype (PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
  pthread_cleanup_push (record_handler, EV ('O'));
  pthread_cleanup_push_defer_np (record_handler, EV ('D'));
  store (&ready, 1);
  wait_for (&cancel_sent, 1);
  store (&progress, 1);
  pthread_cleanup_pop_restore_np (0);
  store (&progress, 2);
  pthread_testcancel ();
  store (&progress, 3);
  pthread_cleanup_pop (0);
  return arg;
}

START_TEST (restore_np_acts_on_pending_cancel)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, cancel_inside_defer_region,
                                    NULL), 0);
  wait_for (&ready, 1);
  cancel_and_expect_cancelled (t);
  ck_assert_int_eq (progress, 1);
  ck_assert_str_eq (event_log, CLEANUP_BY_UNWINDER ? "DO" : "O");
}
END_TEST

/* ---- the old cleanup ABI -------------------------------------------- */

/* Old buffers and macros interleaved across frames, alternating frame by
   frame, under pthread_exit: expected x (an old pop(1)), then d c b a.  */
static void NOINLINE
old_level3 (void)
{
  struct _pthread_cleanup_buffer d;
  _pthread_cleanup_push (&d, record_handler, EV ('d'));
  pthread_exit ((void *) 0xab1);
  _pthread_cleanup_pop (&d, 0);
}

static void NOINLINE
old_level2 (void)
{
  pthread_cleanup_push (record_handler, EV ('c'));
  old_level3 ();
  pthread_cleanup_pop (0);
}

static void NOINLINE
old_level1 (void)
{
  struct _pthread_cleanup_buffer b, x, y;
  _pthread_cleanup_push (&b, record_handler, EV ('b'));
  _pthread_cleanup_push (&x, record_handler, EV ('x'));
  _pthread_cleanup_pop (&x, 1);
  _pthread_cleanup_push (&y, record_handler, EV ('y'));
  _pthread_cleanup_pop (&y, 0);
  old_level2 ();
  _pthread_cleanup_pop (&b, 0);
}

static void *
old_level0 (void *arg)
{
  pthread_cleanup_push (record_handler, EV ('a'));
  old_level1 ();
  pthread_cleanup_pop (0);
  return arg;
}

START_TEST (old_abi_interleaved_under_exit)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, old_level0, NULL), 0);
  ck_assert_ptr_eq (join_result (t), (void *) 0xab1);
  ck_assert_str_eq (event_log, "xdcba");
}
END_TEST

/* Old buffers only, under cancel.  */
static void NOINLINE
old_only_inner (void)
{
  struct _pthread_cleanup_buffer b;
  _pthread_cleanup_push (&b, record_handler, EV ('B'));
  store (&ready, 1);
  for (;;)
    pthread_testcancel ();
  _pthread_cleanup_pop (&b, 0);
}

static void *
old_only_outer (void *arg)
{
  struct _pthread_cleanup_buffer a;
  _pthread_cleanup_push (&a, record_handler, EV ('A'));
  old_only_inner ();
  _pthread_cleanup_pop (&a, 0);
  return arg;
}

START_TEST (old_abi_under_cancel)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, old_only_outer, NULL), 0);
  wait_for (&ready, 1);
  cancel_and_expect_cancelled (t);
  ck_assert_str_eq (event_log, "BA");
}
END_TEST

/* A macro's handler pushed inside the region of an old buffer of the same
   frame, and the other way round: stack order.  Only without -fexceptions:
   with it, the unwinder runs a frame's cleanup attributes and the stop
   function the old buffers, and which comes first depends on how the
   compiler laid out the frame (glibc 2.36 gives either order, at -O0 and
   -O2).  */
static void NOINLINE
same_frame_macro_inside_old (void)
{
  struct _pthread_cleanup_buffer a;
  _pthread_cleanup_push (&a, record_handler, EV ('A'));
  pthread_cleanup_push (record_handler, EV ('B'));
  pthread_exit (NULL);
  pthread_cleanup_pop (0);
  _pthread_cleanup_pop (&a, 0);
}

static void NOINLINE
same_frame_old_inside_macro (void)
{
  pthread_cleanup_push (record_handler, EV ('C'));
  struct _pthread_cleanup_buffer d;
  _pthread_cleanup_push (&d, record_handler, EV ('D'));
  pthread_exit (NULL);
  _pthread_cleanup_pop (&d, 0);
  pthread_cleanup_pop (0);
}

static void *
same_frame_interleaving (void *arg)
{
  if (arg == NULL)
    same_frame_old_inside_macro ();
  else
    same_frame_macro_inside_old ();
  return arg;
}

START_TEST (old_abi_same_frame)
{
  if (CLEANUP_BY_UNWINDER)
    return;
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, same_frame_interleaving,
                                    _i == 0 ? NULL : (void *) 1), 0);
  ck_assert_ptr_eq (join_result (t), NULL);
  const char *want = _i == 0 ? "DC" : "BA";
  ck_assert_msg (strcmp (event_log, want) == 0, "%s: ran %s, not %s",
                 _i == 0 ? "old buffer inside a macro's region"
                         : "macro inside an old buffer's region",
                 event_log, want);
}
END_TEST

/* The old _defer and _restore forms exist only as compatibility symbols
   (the oldest version this architecture has): reach them as an old
   binary would bind them.  */
typedef void old_push_defer_fn (struct _pthread_cleanup_buffer *,
                                void (*) (void *), void *);
typedef void old_pop_restore_fn (struct _pthread_cleanup_buffer *, int);
static int old_defer_types[2] = { -1, -1 };

static void *
old_defer_region (void *arg)
{
  old_push_defer_fn *push = (old_push_defer_fn *) dlvsym (
    RTLD_DEFAULT, "_pthread_cleanup_push_defer",
    xp_test_abi_oldest ("_pthread_cleanup_push_defer"));
  old_pop_restore_fn *pop = (old_pop_restore_fn *) dlvsym (
    RTLD_DEFAULT, "_pthread_cleanup_pop_restore",
    xp_test_abi_oldest ("_pthread_cleanup_pop_restore"));
  if (push == NULL || pop == NULL)
    return (void *) 0xbad;
  pthread_setcanceltype (PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
  struct _pthread_cleanup_buffer b;
  push (&b, record_handler, EV ('P'));
  pthread_setcanceltype (PTHREAD_CANCEL_DEFERRED, &old_defer_types[0]);
  pop (&b, 1);
  pthread_setcanceltype (PTHREAD_CANCEL_DEFERRED, &old_defer_types[1]);
  return arg;
}

START_TEST (old_abi_defer_restore)
{
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, old_defer_region, NULL), 0);
  ck_assert_ptr_eq (join_result (t), NULL);
  ck_assert_int_eq (old_defer_types[0], PTHREAD_CANCEL_DEFERRED);
  ck_assert_int_eq (old_defer_types[1], PTHREAD_CANCEL_ASYNCHRONOUS);
  ck_assert_str_eq (event_log, "P");
  if (is_xpthread ())
    require_bound_to_xpthread (
      "_pthread_cleanup_push_defer",
      dlvsym (RTLD_DEFAULT, "_pthread_cleanup_push_defer",
              xp_test_abi_oldest ("_pthread_cleanup_push_defer")));
}
END_TEST

/* ---- the main thread's pthread_exit --------------------------------- */

static int main_exit_pipe[2];
static int main_handler_ran;

static void
main_exit_handler (void *arg)
{
  if (write (main_exit_pipe[1], "H", 1) != 1)
    _exit (4);
  store (&main_handler_ran, 1);
}

static void *
return_arg (void *arg)
{
  return arg;
}

/* Runs on once the main thread has left: it can still create and join a
   thread, and the process ends with status 0 after it returns.  */
static void *
outlive_main (void *arg)
{
  wait_for (&main_handler_ran, 1);
  usleep (50000);
  pthread_t t;
  void *result = NULL;
  bool ok = pthread_create (&t, NULL, return_arg, (void *) 5) == 0
            && pthread_join (t, &result) == 0 && result == (void *) 5;
  if (write (main_exit_pipe[1], ok ? "T" : "t", 1) != 1)
    _exit (5);
  return NULL;
}

START_TEST (main_exit_runs_cleanup_others_continue)
{
  ck_assert_int_eq (pipe (main_exit_pipe), 0);
  fflush (NULL);
  pid_t pid = fork ();
  ck_assert_int_ne (pid, -1);
  if (pid == 0)
    {
      close (main_exit_pipe[0]);
      pthread_t t;
      if (pthread_create (&t, NULL, outlive_main, NULL) != 0)
        _exit (3);
      pthread_cleanup_push (main_exit_handler, NULL);
      pthread_exit (NULL);
      pthread_cleanup_pop (0);
      _exit (6);
    }
  close (main_exit_pipe[1]);
  char out[16];
  size_t len = 0;
  ssize_t n;
  while (len < sizeof out - 1
         && (n = read (main_exit_pipe[0], out + len, sizeof out - 1 - len))
              > 0)
    len += (size_t) n;
  out[len] = '\0';
  int status;
  ck_assert_int_eq (waitpid (pid, &status, 0), pid);
  ck_assert_msg (WIFEXITED (status) && WEXITSTATUS (status) == 0,
                 "child status %#x", status);
  ck_assert_str_eq (out, "HT");
}
END_TEST

/* ---- waits that are cancellation points ----------------------------- */

enum { WAIT_PLAIN, WAIT_TIMED, WAIT_CLOCK, N_WAIT_KINDS };

/* Process-shared condition variables follow glibc's protocol, a
   separate implementation: the condition tests run with both.  */
static void
init_cond (pthread_cond_t *cond, bool pshared)
{
  pthread_condattr_t ca;
  ck_assert_int_eq (pthread_condattr_init (&ca), 0);
  ck_assert_int_eq (pthread_condattr_setpshared (&ca, pshared
                                                 ? PTHREAD_PROCESS_SHARED
                                                 : PTHREAD_PROCESS_PRIVATE),
                    0);
  ck_assert_int_eq (pthread_cond_init (cond, &ca), 0);
  pthread_condattr_destroy (&ca);
}

static void
init_mutex (pthread_mutex_t *m, int type, bool pshared)
{
  pthread_mutexattr_t ma;
  ck_assert_int_eq (pthread_mutexattr_init (&ma), 0);
  ck_assert_int_eq (pthread_mutexattr_settype (&ma, type), 0);
  ck_assert_int_eq (pthread_mutexattr_setpshared (&ma, pshared
                                                  ? PTHREAD_PROCESS_SHARED
                                                  : PTHREAD_PROCESS_PRIVATE),
                    0);
  ck_assert_int_eq (pthread_mutex_init (m, &ma), 0);
  pthread_mutexattr_destroy (&ma);
}

static int waiter_tid;

/* Wait until the worker, which stored its tid, sleeps in the kernel.  */
static void
wait_until_blocked (void)
{
  wait_for (&waiter_tid, 1);
  wait_until_sleeping (load (&waiter_tid));
}

/* A waiter cancelled in a condition wait holds the mutex again when its
   first cleanup handler runs: with an error-checking mutex, the handler's
   unlock succeeds only then.  */
static pthread_mutex_t cw_mutex;
static pthread_cond_t cw_cond;
static int cw_unlock_result = -1;

static void
cw_unlock (void *arg)
{
  cw_unlock_result = pthread_mutex_unlock (&cw_mutex);
}

static void *
cond_waiter (void *arg)
{
  int kind = (int) (intptr_t) arg;
  pthread_mutex_lock (&cw_mutex);
  pthread_cleanup_push (cw_unlock, NULL);
  store (&waiter_tid, current_tid ());
  for (;;)
    {
      struct timespec rt = in_ms (CLOCK_REALTIME, 60000);
      struct timespec mono = in_ms (CLOCK_MONOTONIC, 60000);
      switch (kind)
        {
        case WAIT_PLAIN:
          pthread_cond_wait (&cw_cond, &cw_mutex);
          break;
        case WAIT_TIMED:
          pthread_cond_timedwait (&cw_cond, &cw_mutex, &rt);
          break;
        default:
          pthread_cond_clockwait (&cw_cond, &cw_mutex, CLOCK_MONOTONIC,
                                  &mono);
          break;
        }
      record ('w');
    }
  pthread_cleanup_pop (0);
  return NULL;
}

/* Looped over the wait kinds, private and then process-shared.  */
START_TEST (cond_wait_cancelled_holds_mutex)
{
  bool pshared = _i >= N_WAIT_KINDS;
  init_mutex (&cw_mutex, PTHREAD_MUTEX_ERRORCHECK, pshared);
  init_cond (&cw_cond, pshared);
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, cond_waiter,
                                    (void *) (intptr_t) (_i % N_WAIT_KINDS)),
                    0);
  wait_until_blocked ();
  /* The waiter released the mutex inside its wait.  */
  ck_assert_int_eq (pthread_mutex_lock (&cw_mutex), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&cw_mutex), 0);
  cancel_and_expect_cancelled (t);
  ck_assert_int_eq (cw_unlock_result, 0);
  ck_assert_int_eq (pthread_mutex_trylock (&cw_mutex), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&cw_mutex), 0);
  ck_assert_str_eq (event_log, "");
}
END_TEST

/* Two waiters; one is cancelled as a single signal is sent.  Either the
   cancelled one acts on the cancel without consuming the signal, and the
   other one wakes, or it returned from its wait with the signal (the
   cancel acts at its next wait): one token, taken exactly once, never
   stranded.  */
static pthread_mutex_t sc_mutex;
static pthread_cond_t sc_cond;
static int sc_waiting, sc_tokens, sc_taken[2];

static void
unlock_mutex (void *m)
{
  pthread_mutex_unlock (m);
}

static void *
token_waiter (void *arg)
{
  int id = (int) (intptr_t) arg;
  pthread_mutex_lock (&sc_mutex);
  pthread_cleanup_push (unlock_mutex, &sc_mutex);
  sc_waiting++;
  for (;;)
    {
      while (sc_tokens == 0)
        pthread_cond_wait (&sc_cond, &sc_mutex);
      sc_tokens--;
      sc_taken[id]++;
    }
  pthread_cleanup_pop (1);
  return NULL;
}

/* Looped: private, then process-shared condition variable.  */
START_TEST (cancelled_waiter_passes_signal_on)
{
  enum { ROUNDS = 200 };
  init_mutex (&sc_mutex, PTHREAD_MUTEX_NORMAL, _i == 1);
  init_cond (&sc_cond, _i == 1);
  for (int round = 0; round < ROUNDS; round++)
    {
      sc_waiting = sc_tokens = sc_taken[0] = sc_taken[1] = 0;
      pthread_t w[2];
      for (int i = 0; i < 2; i++)
        ck_assert_int_eq (pthread_create (&w[i], NULL, token_waiter,
                                          (void *) (intptr_t) i), 0);
      /* Both are in their waits once the mutex is free with both
         counted.  */
      for (;;)
        {
          pthread_mutex_lock (&sc_mutex);
          if (sc_waiting == 2)
            break;
          pthread_mutex_unlock (&sc_mutex);
          sched_yield ();
        }
      if (round % 2)
        pthread_mutex_unlock (&sc_mutex);
      ck_assert_int_eq (pthread_cancel (w[0]), 0);
      if (round % 2)
        pthread_mutex_lock (&sc_mutex);
      sc_tokens = 1;
      pthread_cond_signal (&sc_cond);
      pthread_mutex_unlock (&sc_mutex);

      struct timespec deadline = in_ms (CLOCK_MONOTONIC, 10000);
      int taken;
      for (;;)
        {
          pthread_mutex_lock (&sc_mutex);
          taken = sc_taken[0] + sc_taken[1];
          pthread_mutex_unlock (&sc_mutex);
          struct timespec now;
          clock_gettime (CLOCK_MONOTONIC, &now);
          if (taken != 0 || now.tv_sec > deadline.tv_sec)
            break;
          usleep (100);
        }
      ck_assert_msg (taken == 1, "round %d: the signal was lost", round);
      ck_assert_int_eq (pthread_cancel (w[1]), 0);
      ck_assert_ptr_eq (join_result (w[0]), PTHREAD_CANCELED);
      ck_assert_ptr_eq (join_result (w[1]), PTHREAD_CANCELED);
      ck_assert_int_eq (sc_tokens, 0);
      ck_assert_int_eq (sc_taken[0] + sc_taken[1], 1);
    }
  ck_assert_int_eq (pthread_mutex_trylock (&sc_mutex), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&sc_mutex), 0);
}
END_TEST

static sem_t sw_sem;
static int sem_taken;

static void *
sem_waiter (void *arg)
{
  int kind = (int) (intptr_t) arg;
  store (&waiter_tid, current_tid ());
  for (;;)
    {
      struct timespec rt = in_ms (CLOCK_REALTIME, 60000);
      struct timespec mono = in_ms (CLOCK_MONOTONIC, 60000);
      int r;
      switch (kind)
        {
        case WAIT_PLAIN:
          r = sem_wait (&sw_sem);
          break;
        case WAIT_TIMED:
          r = sem_timedwait (&sw_sem, &rt);
          break;
        default:
          r = sem_clockwait (&sw_sem, CLOCK_MONOTONIC, &mono);
          break;
        }
      if (r == 0)
        __atomic_fetch_add (&sem_taken, 1, __ATOMIC_ACQ_REL);
    }
  return NULL;
}

/* Looped over the wait kinds.  POSIX: sem_wait and the timed waits are
   cancellation points that act whether or not they would block, so a
   pending cancel ends the thread before it takes the token there.  */
static void *
sem_wait_with_cancel_pending (void *arg)
{
  pthread_cancel (pthread_self ());
  struct timespec rt = in_ms (CLOCK_REALTIME, 60000);
  struct timespec mono = in_ms (CLOCK_MONOTONIC, 60000);
  switch ((int) (intptr_t) arg)
    {
    case WAIT_PLAIN:
      sem_wait (&sw_sem);
      break;
    case WAIT_TIMED:
      sem_timedwait (&sw_sem, &rt);
      break;
    default:
      sem_clockwait (&sw_sem, CLOCK_MONOTONIC, &mono);
      break;
    }
  return NULL;
}

START_TEST (sem_wait_acts_on_pending_cancel)
{
  ck_assert_int_eq (sem_init (&sw_sem, 0, 1), 0);
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, sem_wait_with_cancel_pending,
                                    (void *) (intptr_t) _i), 0);
  ck_assert_ptr_eq (join_result (t), PTHREAD_CANCELED);
  int value = -1;
  ck_assert_int_eq (sem_getvalue (&sw_sem, &value), 0);
  ck_assert_int_eq (value, 1);
  ck_assert_int_eq (sem_destroy (&sw_sem), 0);
}
END_TEST

START_TEST (sem_wait_cancelled_value_intact)
{
  ck_assert_int_eq (sem_init (&sw_sem, 0, 0), 0);
  pthread_t t;
  ck_assert_int_eq (pthread_create (&t, NULL, sem_waiter,
                                    (void *) (intptr_t) _i), 0);
  wait_until_blocked ();
  cancel_and_expect_cancelled (t);
  int value = -1;
  ck_assert_int_eq (sem_getvalue (&sw_sem, &value), 0);
  ck_assert_int_eq (value, 0);
  ck_assert_int_eq (sem_post (&sw_sem), 0);
  ck_assert_int_eq (sem_getvalue (&sw_sem, &value), 0);
  ck_assert_int_eq (value, 1);
  ck_assert_int_eq (sem_trywait (&sw_sem), 0);
  ck_assert_int_eq (sem_taken, 0);
  ck_assert_int_eq (sem_destroy (&sw_sem), 0);
}
END_TEST

/* Two waiters; one cancelled as one post arrives: the token is taken
   once or stays in the semaphore, never lost.  With xpthread the
   cancelled waiter also never swallows the post's wake-up, so the other
   waiter takes the token (lib/sync/sem.c); glibc 2.36 may leave it in the
   semaphore with the other waiter asleep.  */
START_TEST (sem_cancel_racing_post)
{
  enum { ROUNDS = 200 };
  for (int round = 0; round < ROUNDS; round++)
    {
      ck_assert_int_eq (sem_init (&sw_sem, 0, 0), 0);
      sem_taken = 0;
      pthread_t w[2];
      for (int i = 0; i < 2; i++)
        {
          store (&waiter_tid, 0);
          ck_assert_int_eq (pthread_create (&w[i], NULL, sem_waiter,
                                            (void *) (intptr_t) WAIT_PLAIN),
                            0);
          wait_until_blocked ();
        }
      ck_assert_int_eq (pthread_cancel (w[0]), 0);
      ck_assert_int_eq (sem_post (&sw_sem), 0);
      ck_assert_ptr_eq (join_result (w[0]), PTHREAD_CANCELED);
      /* The survivor takes it unless the cancelled one already had.  */
      struct timespec deadline = in_ms (CLOCK_MONOTONIC, 10000);
      int value = -1;
      while (is_xpthread ())
        {
          sem_getvalue (&sw_sem, &value);
          struct timespec now;
          clock_gettime (CLOCK_MONOTONIC, &now);
          if (value == 0 || now.tv_sec > deadline.tv_sec)
            break;
          usleep (100);
        }
      if (is_xpthread ())
        ck_assert_msg (value == 0, "round %d: the post was not taken", round);
      ck_assert_int_eq (pthread_cancel (w[1]), 0);
      ck_assert_ptr_eq (join_result (w[1]), PTHREAD_CANCELED);
      ck_assert_int_eq (sem_getvalue (&sw_sem, &value), 0);
      ck_assert_int_eq (load (&sem_taken) + value, 1);
      ck_assert_int_eq (sem_destroy (&sw_sem), 0);
    }
}
END_TEST

static int target_release;
static pthread_t join_target;

static void *
wait_for_release (void *arg)
{
  while (!load (&target_release))
    usleep (1000);
  return arg;
}

static void *
joiner (void *arg)
{
  int kind = (int) (intptr_t) arg;
  store (&waiter_tid, current_tid ());
  struct timespec rt = in_ms (CLOCK_REALTIME, 60000);
  struct timespec mono = in_ms (CLOCK_MONOTONIC, 60000);
  void *result;
  switch (kind)
    {
    case WAIT_PLAIN:
      pthread_join (join_target, &result);
      break;
    case WAIT_TIMED:
      pthread_timedjoin_np (join_target, &result, &rt);
      break;
    default:
      pthread_clockjoin_np (join_target, &result, CLOCK_MONOTONIC, &mono);
      break;
    }
  record ('j');
  return result;
}

/* A joiner cancelled while it waits gives the thread back: another
   thread can join it.  */
START_TEST (join_cancelled_target_still_joinable)
{
  ck_assert_int_eq (pthread_create (&join_target, NULL, wait_for_release,
                                    (void *) 0x99), 0);
  pthread_t j;
  ck_assert_int_eq (pthread_create (&j, NULL, joiner,
                                    (void *) (intptr_t) _i), 0);
  wait_until_blocked ();
  cancel_and_expect_cancelled (j);
  store (&target_release, 1);
  ck_assert_ptr_eq (join_result (join_target), (void *) 0x99);
  ck_assert_str_eq (event_log, "");
}
END_TEST

/* ---- cancel storm --------------------------------------------------- */

/* Threads in loops of write and read on a pipe (16-byte records with
   sequence numbers) and of producing into and consuming from a queue under
   a mutex and two condition variables, cancelled at random points and
   replaced by new ones.  Afterwards:
   - every record a completed write accounted for was read exactly once
     (the pipe is drained at the end), and every record read was accounted
     for by its writer: a read that returned data accounts for it before
     its thread's next cancellation point, and so does a write;
   - no record is torn, none read twice;
   - the queue's items were consumed exactly once, in order, none
     stranded by a lost wake-up;
   - the mutex is free.
   Cancellation points in the loops: pthread_testcancel (always),
   pthread_cond_wait, and read and write once libxpthread interposes them.
   glibc 2.36 makes read and write cancellable with asynchronous
   cancellation around the system call, so a cancel may discard a
   completed read or write there: run without xpthread, a record may be
   lost per cancelled reader and one unaccounted per cancelled writer.  */

enum
{
  STORM_WRITERS = 3,
  STORM_READERS = 3,
  STORM_PRODUCERS = 2,
  STORM_CONSUMERS = 2,
  STORM_THREADS = STORM_WRITERS + STORM_READERS + STORM_PRODUCERS
                  + STORM_CONSUMERS,
  STORM_QUEUE = 8,
};

/* Records are numbered below this; the storm stops at half of it (after
   several minutes).  */
#define STORM_RECORDS (1UL << 27)

struct record
{
  uint64_t seq;
  uint64_t check;
};

static uint64_t
record_check (uint64_t seq)
{
  return (seq * 0x9e3779b97f4a7c15ULL) ^ 0x5850544843414e43ULL;
}

static struct
{
  int pipe[2];
  uint64_t next_seq;
  int pipe_stop;
  unsigned char *written; /* per record: 1 once its write completed */
  unsigned char *read;    /* per record: how many reads returned it */
  unsigned long torn, write_errors, read_errors;

  pthread_mutex_t qm;
  pthread_cond_t not_empty, not_full;
  uint64_t queue[STORM_QUEUE];
  unsigned q_head, q_len;
  uint64_t produced, consumed;
  unsigned long out_of_order;
  bool stop_producing, stop_consuming;
} storm;

static unsigned
storm_seed (void)
{
  struct timespec now;
  clock_gettime (CLOCK_MONOTONIC, &now);
  return (unsigned) now.tv_nsec ^ (unsigned) current_tid ();
}

/* Sometimes a cancellation point, sometimes a little work.  */
static void
storm_pause (unsigned *seed)
{
  unsigned r = (unsigned) rand_r (seed);
  if (r % 4 == 0)
    pthread_testcancel ();
  else if (r % 64 == 1)
    sched_yield ();
}

static void *
storm_writer (void *arg)
{
  unsigned seed = storm_seed ();
  for (;;)
    {
      pthread_testcancel ();
      if (load (&storm.pipe_stop))
        return NULL;
      uint64_t seq = __atomic_fetch_add (&storm.next_seq, 1,
                                         __ATOMIC_RELAXED);
      if (seq >= STORM_RECORDS)
        {
          usleep (1000);
          continue;
        }
      struct record r = { seq, record_check (seq) };
      storm_pause (&seed);
      ssize_t n = write (storm.pipe[1], &r, sizeof r);
      if (n == (ssize_t) sizeof r)
        __atomic_store_n (&storm.written[seq], 1, __ATOMIC_RELAXED);
      else
        __atomic_fetch_add (&storm.write_errors, 1, __ATOMIC_RELAXED);
      storm_pause (&seed);
    }
}

static void *
storm_reader (void *arg)
{
  unsigned seed = storm_seed ();
  for (;;)
    {
      storm_pause (&seed);
      struct record r;
      ssize_t n = read (storm.pipe[0], &r, sizeof r);
      if (n == 0)
        return NULL;
      if (n != (ssize_t) sizeof r)
        __atomic_fetch_add (&storm.read_errors, 1, __ATOMIC_RELAXED);
      else if (r.seq >= STORM_RECORDS || r.check != record_check (r.seq))
        __atomic_fetch_add (&storm.torn, 1, __ATOMIC_RELAXED);
      else
        __atomic_fetch_add (&storm.read[r.seq], 1, __ATOMIC_RELAXED);
      storm_pause (&seed);
    }
}

static void *
storm_producer (void *arg)
{
  unsigned seed = storm_seed ();
  for (;;)
    {
      storm_pause (&seed);
      bool stop;
      pthread_mutex_lock (&storm.qm);
      pthread_cleanup_push (unlock_mutex, &storm.qm);
      while (storm.q_len == STORM_QUEUE && !storm.stop_producing)
        pthread_cond_wait (&storm.not_full, &storm.qm);
      stop = storm.stop_producing;
      if (!stop)
        {
          storm.queue[(storm.q_head + storm.q_len) % STORM_QUEUE]
            = storm.produced++;
          storm.q_len++;
          pthread_cond_signal (&storm.not_empty);
        }
      pthread_cleanup_pop (1);
      if (stop)
        return NULL;
    }
}

static void *
storm_consumer (void *arg)
{
  unsigned seed = storm_seed ();
  for (;;)
    {
      storm_pause (&seed);
      bool stop;
      pthread_mutex_lock (&storm.qm);
      pthread_cleanup_push (unlock_mutex, &storm.qm);
      while (storm.q_len == 0 && !storm.stop_consuming)
        pthread_cond_wait (&storm.not_empty, &storm.qm);
      stop = storm.q_len == 0;
      if (!stop)
        {
          uint64_t item = storm.queue[storm.q_head];
          storm.q_head = (storm.q_head + 1) % STORM_QUEUE;
          storm.q_len--;
          if (item != storm.consumed)
            storm.out_of_order++;
          storm.consumed++;
          pthread_cond_signal (&storm.not_full);
        }
      pthread_cleanup_pop (1);
      if (stop)
        return NULL;
    }
}

static void *(*const storm_roles[STORM_THREADS]) (void *) = {
  storm_writer, storm_writer, storm_writer,
  storm_reader, storm_reader, storm_reader,
  storm_producer, storm_producer,
  storm_consumer, storm_consumer,
};

static void
join_expecting (pthread_t t, void *want, const char *what)
{
  void *result = (void *) 0xdead;
  ck_assert_int_eq (pthread_join (t, &result), 0);
  ck_assert_msg (result == want, "%s ended with %p", what, result);
}

/* Looped: the queue's mutex and condition variables private, then
   process-shared.  */
START_TEST (cancel_storm)
{
  int seconds = xp_test_storm_seconds (3);
  init_mutex (&storm.qm, PTHREAD_MUTEX_NORMAL, _i == 1);
  init_cond (&storm.not_empty, _i == 1);
  init_cond (&storm.not_full, _i == 1);
  storm.written = calloc (STORM_RECORDS, 1);
  storm.read = calloc (STORM_RECORDS, 1);
  ck_assert (storm.written != NULL && storm.read != NULL);
  ck_assert_int_eq (pipe (storm.pipe), 0);

  pthread_t threads[STORM_THREADS];
  for (int i = 0; i < STORM_THREADS; i++)
    ck_assert_int_eq (pthread_create (&threads[i], NULL, storm_roles[i],
                                      NULL), 0);

  unsigned long cancels[STORM_THREADS] = { 0 };
  unsigned long total_cancels = 0;
  unsigned seed = storm_seed ();
  struct timespec start;
  clock_gettime (CLOCK_MONOTONIC, &start);
  while (xp_test_seconds_since (&start) < seconds
         && __atomic_load_n (&storm.next_seq, __ATOMIC_RELAXED)
              < STORM_RECORDS / 2)
    {
      usleep ((unsigned) rand_r (&seed) % 500);
      int i = rand_r (&seed) % STORM_THREADS;
      ck_assert_int_eq (pthread_cancel (threads[i]), 0);
      join_expecting (threads[i], PTHREAD_CANCELED, "a cancelled thread");
      cancels[i]++;
      total_cancels++;
      ck_assert_int_eq (pthread_create (&threads[i], NULL, storm_roles[i],
                                        NULL), 0);
    }

  /* Pipe: writers stop, readers drain to end-of-file.  */
  store (&storm.pipe_stop, 1);
  for (int i = 0; i < STORM_WRITERS; i++)
    join_expecting (threads[i], NULL, "a writer");
  close (storm.pipe[1]);
  for (int i = STORM_WRITERS; i < STORM_WRITERS + STORM_READERS; i++)
    join_expecting (threads[i], NULL, "a reader");
  close (storm.pipe[0]);

  /* Queue: producers stop; the consumers must empty the queue on the
     wake-ups they were sent, then stop.  */
  int first_producer = STORM_WRITERS + STORM_READERS;
  pthread_mutex_lock (&storm.qm);
  storm.stop_producing = true;
  pthread_cond_broadcast (&storm.not_full);
  pthread_mutex_unlock (&storm.qm);
  for (int i = first_producer; i < first_producer + STORM_PRODUCERS; i++)
    join_expecting (threads[i], NULL, "a producer");
  struct timespec drain;
  clock_gettime (CLOCK_MONOTONIC, &drain);
  unsigned left;
  for (;;)
    {
      pthread_mutex_lock (&storm.qm);
      left = storm.q_len;
      pthread_mutex_unlock (&storm.qm);
      if (left == 0 || xp_test_seconds_since (&drain) > 10)
        break;
      usleep (1000);
    }
  pthread_mutex_lock (&storm.qm);
  storm.stop_consuming = true;
  pthread_cond_broadcast (&storm.not_empty);
  pthread_mutex_unlock (&storm.qm);
  for (int i = first_producer + STORM_PRODUCERS; i < STORM_THREADS; i++)
    join_expecting (threads[i], NULL, "a consumer");

  ck_assert_msg (left == 0, "%u items stranded in the queue: lost wake-up",
                 left);
  ck_assert_int_eq (pthread_mutex_trylock (&storm.qm), 0);
  ck_assert_int_eq (pthread_mutex_unlock (&storm.qm), 0);
  ck_assert_int_eq (storm.out_of_order, 0);
  ck_assert_int_eq (storm.consumed, storm.produced);

  uint64_t records = storm.next_seq < STORM_RECORDS ? storm.next_seq
                                                    : STORM_RECORDS;
  unsigned long written = 0, lost = 0, unaccounted = 0, twice = 0;
  for (uint64_t s = 0; s < records; s++)
    {
      written += storm.written[s];
      if (storm.read[s] > 1)
        twice++;
      else if (storm.written[s] && !storm.read[s])
        lost++;
      else if (!storm.written[s] && storm.read[s])
        unaccounted++;
    }
  unsigned long writer_cancels = 0, reader_cancels = 0;
  for (int i = 0; i < STORM_WRITERS; i++)
    writer_cancels += cancels[i];
  for (int i = STORM_WRITERS; i < STORM_WRITERS + STORM_READERS; i++)
    reader_cancels += cancels[i];
  if (getenv ("XP_STORM_VERBOSE") != NULL)
    fprintf (stderr,
             "storm: %d s, %lu cancels (%lu writers, %lu readers), "
             "%lu records written, %llu items queued; lost %lu, "
             "unaccounted %lu\n",
             seconds, total_cancels, writer_cancels, reader_cancels, written,
             (unsigned long long) storm.produced, lost, unaccounted);
  ck_assert_msg (total_cancels > 0, "no cancel in %d s", seconds);
  ck_assert_int_eq (storm.torn, 0);
  ck_assert_int_eq (storm.read_errors, 0);
  ck_assert_int_eq (storm.write_errors, 0);
  ck_assert_msg (twice == 0, "%lu records read twice", twice);
  if (is_xpthread ())
    {
      ck_assert_msg (lost == 0, "%lu written records never read", lost);
      ck_assert_msg (unaccounted == 0,
                     "%lu records read but not accounted by their writer",
                     unaccounted);
    }
  else
    {
      ck_assert_uint_le (lost, reader_cancels);
      ck_assert_uint_le (unaccounted, writer_cancels);
    }
  free (storm.written);
  free (storm.read);
}
END_TEST

/* ---- the suite ------------------------------------------------------ */

static TCase *
new_case (Suite *s, const char *name, int timeout)
{
  TCase *tc = tcase_create (name);
  tcase_set_timeout (tc, timeout);
  suite_add_tcase (s, tc);
  return tc;
}

int
main (void)
{
  Suite *s = suite_create (CLEANUP_BY_UNWINDER ? "cancel-exceptions"
                                               : "cancel");
  TCase *tc = new_case (s, "binding-cancel", 10);
  tcase_add_test (tc, cancel_functions_are_xpthread);

  tc = new_case (s, "deferred", 20);
  tcase_add_test (tc, cancel_testcancel_loop);
  tcase_add_test (tc, cleanup_order_under_cancel);
  tcase_add_test (tc, cleanup_order_under_exit);
  tcase_add_test (tc, pop_runs_only_when_asked);
  tcase_add_test (tc, exit_value_reaches_joiner);
  tcase_add_test (tc, disabled_cancel_waits_for_enable);
  tcase_add_test (tc, disabled_cancel_never_acts);
  tcase_add_test (tc, self_cancel_acts_at_testcancel);
  tcase_add_test (tc, cancel_after_exit_keeps_result);
  tcase_add_loop_test (tc, tsd_destructors_after_cleanup, 0, 2);
  tcase_add_test (tc, testcancel_in_handler_is_quiet);
  tcase_add_test (tc, exit_wins_over_pending_cancel);
  tcase_add_test (tc, invalid_state_and_type);

  tc = new_case (s, "async", 20);
  tcase_add_test (tc, async_cancels_compute_loop);
  tcase_add_loop_test (tc, async_with_pending_acts_at_once, 0, 2);
  tcase_add_test (tc, canceltype_reports_old_type);
  tcase_add_loop_test (tc, defer_np_restores_type, 0, 2);
  tcase_add_test (tc, restore_np_acts_on_pending_cancel);

  tc = new_case (s, "old-abi", 20);
  tcase_add_test (tc, old_abi_interleaved_under_exit);
  tcase_add_test (tc, old_abi_under_cancel);
  tcase_add_loop_test (tc, old_abi_same_frame, 0, 2);
  tcase_add_test (tc, old_abi_defer_restore);

  tc = new_case (s, "main-exit", 20);
  tcase_add_test (tc, main_exit_runs_cleanup_others_continue);

  tc = new_case (s, "waits", 30);
  tcase_add_loop_test (tc, cond_wait_cancelled_holds_mutex, 0,
                       2 * N_WAIT_KINDS);
  tcase_add_loop_test (tc, cancelled_waiter_passes_signal_on, 0, 2);
  tcase_add_loop_test (tc, sem_wait_cancelled_value_intact, 0, N_WAIT_KINDS);
  tcase_add_loop_test (tc, sem_wait_acts_on_pending_cancel, 0, N_WAIT_KINDS);
  tcase_add_test (tc, sem_cancel_racing_post);
  tcase_add_loop_test (tc, join_cancelled_target_still_joinable, 0,
                       N_WAIT_KINDS);

  tc = new_case (s, "storm", xp_test_storm_seconds (3) + 60);
  tcase_add_loop_test (tc, cancel_storm, 0, 2);
  return xp_test_run (s);
}
