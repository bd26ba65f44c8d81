/* Joining: pthread_join, pthread_tryjoin_np, pthread_timedjoin_np and
   pthread_clockjoin_np.  The waiting forms are cancellation points.

   A thread is finished when its tid word is zero: the kernel clears it,
   and wakes futex waiters, once the thread no longer runs on its stack
   (CLONE_CHILD_CLEARTID).  That wake is not a private one, so the wait
   must be shared.  The joiner claims the thread with the JOINING bit
   first, which makes a second joiner or a detach fail with EINVAL instead
   of racing for the thread's resources; once joined, the thread is marked
   RELEASED, and its ID answers ESRCH while its memory waits for reuse.
   Threads glibc started are glibc's to join (join_foreign).  */
#define _GNU_SOURCE
#include "cancel.h"
#include "compat.h"
#include "glibc-threads.h"
#include "export.h"
#include "lock-hooks.h"
#include "probes.h"
#include "thread.h"
#include <errno.h>

static int
claim (struct xp_thread *t)
{
  unsigned old = xp_load_acquire (&t->join_state);
  do
    if (old & XP_JOIN_RELEASED)
      return ESRCH;
    else if (old & (XP_JOIN_DETACHED | XP_JOIN_JOINING))
      return EINVAL;
  while (!xp_cas (&t->join_state, &old, old | XP_JOIN_JOINING));
  return 0;
}

static void
unclaim (struct xp_thread *t)
{
  xp_fetch_and (&t->join_state, ~XP_JOIN_JOINING);
}

/* Until the kernel clears *WORD (a thread's tid, or glibc's word in its
   place) at the thread's end.  */
static int
wait_until_gone (int *word, clockid_t clock, const struct timespec *abstime)
{
  int value;
  while ((value = xp_load_acquire (word)) != 0)
    {
      int r = xp_futex_wait_cp (word, value, clock, abstime, false);
      if (r == -ETIMEDOUT || r == -ECANCELED)
        return -r;
    }
  return 0;
}

static bool
clock_is_usable (clockid_t clock)
{
  return clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC;
}

/* A clock the wait cannot use, or a deadline whose nanoseconds are out
   of range: EINVAL before the thread is looked at, as in glibc since
   2.41.  */
static bool
timeout_invalid (clockid_t clock, const struct timespec *abstime)
{
  return !clock_is_usable (clock)
         || (abstime != NULL
             && (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000));
}

/* A deadline before the epoch has passed; the kernel would call it
   invalid.  */
static int
check_deadline (const struct timespec *abstime)
{
  return abstime != NULL && abstime->tv_sec < 0 ? ETIMEDOUT : 0;
}

/* A thread glibc started: glibc's answers, and glibc releases it.  Its
   own join would wait where an xpthread cancel cannot reach it, so the
   wait is ours, on the word the kernel clears when the thread is gone
   (glibc-threads.h);
   glibc is asked first with a deadline already past, which answers at
   once what needs no wait (the caller, detached, joined, finished) and
   gives the thread back unclaimed when it still runs.  */
static int
join_foreign (pthread_t thread, void **result, clockid_t clock,
              const struct timespec *abstime, bool try_only)
{
  if (try_only)
    return xp_glibc_threads.tryjoin (thread, result);
  static const struct timespec past = { 0, 0 };
  int err = xp_glibc_threads.clockjoin (thread, result, CLOCK_MONOTONIC,
                                        &past);
  if (err != ETIMEDOUT)
    return err;
  int *exit_word = xp_glibc_thread_exit_word (thread);
  if (exit_word == NULL)
    return abstime == NULL ? xp_glibc_threads.join (thread, result)
           : xp_glibc_threads.clockjoin (thread, result, clock, abstime);
  if ((err = check_deadline (abstime)) == 0)
    err = wait_until_gone (exit_word, clock, abstime);
  if (err == ECANCELED)
    xp_cancel_act ();
  return err != 0 ? err : xp_glibc_threads.join (thread, result);
}

/* SITE: where the program called; a join waits for the thread's end as
   a lock waits for its release (the lock hooks).  RESULT is never NULL
   (join_probed).  */
static int
join (pthread_t thread, void **result, clockid_t clock,
      const struct timespec *abstime, bool try_only, const void *site)
{
  /* glibc's order: the timeout, then the thread.  */
  if (!try_only && timeout_invalid (clock, abstime))
    return EINVAL;
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return join_foreign (thread, result, clock, abstime, try_only);
  struct xp_thread *self = xp_self ();
  /* The caller runs: busy, to a try.  */
  if (t == self)
    return try_only ? EBUSY : EDEADLK;
  /* Two threads joining each other: each announces its target before
     looking at the other's, so at least one of them sees the cycle.  */
  xp_store_relaxed (&self->joining, t);
  xp_fence ();
  int err = xp_load_relaxed (&t->joining) == self ? EDEADLK : claim (t);
  if (err == 0)
    {
      if (try_only)
        err = xp_load_acquire (&t->tid) != 0 ? EBUSY : 0;
      else if ((err = check_deadline (abstime)) == 0)
        {
          xp_hook_acquiring (t, 0, site);
          err = wait_until_gone (&t->tid, clock, abstime);
        }
      if (err != 0)
        unclaim (t);
    }
  xp_store_relaxed (&self->joining, NULL);
  /* A cancelled joiner has given the thread back: it can be joined.  */
  if (err == ECANCELED)
    xp_cancel_act ();
  if (err != 0)
    return err;
  xp_hook_receive (t);
  *result = t->result;
  xp_fetch_or (&t->join_state, XP_JOIN_RELEASED);
  xp_hook_lock_destroy (t);
  t->kind->release (t);
  return 0;
}

/* glibc's probes, around every join: pthread_join_ret has the answer
   and the thread's return value (NULL unless it was joined).  A
   cancelled join unwinds from inside and fires no return probe, as in
   glibc.  */
static int
join_probed (pthread_t thread, void **result, clockid_t clock,
             const struct timespec *abstime, bool try_only, const void *site)
{
  XP_PROBE (pthread_join, thread);
  void *value = NULL;
  int err = join (thread, &value, clock, abstime, try_only, site);
  if (err == 0 && result != NULL)
    *result = value;
  XP_PROBE (pthread_join_ret, thread, err, value);
  return err;
}

int
pthread_join (pthread_t thread, void **retval)
{
  return join_probed (thread, retval, CLOCK_REALTIME, NULL, false,
                      XP_CALLER_SITE ());
}
XP_EXPORT (pthread_join)

int
pthread_tryjoin_np (pthread_t thread, void **retval)
{
  return join_probed (thread, retval, CLOCK_REALTIME, NULL, true,
                      XP_CALLER_SITE ());
}
XP_EXPORT (pthread_tryjoin_np)

int
pthread_timedjoin_np (pthread_t thread, void **retval,
                      const struct timespec *abstime)
{
  return join_probed (thread, retval, CLOCK_REALTIME, abstime, false,
                      XP_CALLER_SITE ());
}
XP_EXPORT (pthread_timedjoin_np)

int
pthread_clockjoin_np (pthread_t thread, void **retval, clockid_t clockid,
                      const struct timespec *abstime)
{
  return join_probed (thread, retval, clockid, abstime, false,
                      XP_CALLER_SITE ());
}
XP_EXPORT (pthread_clockjoin_np)
