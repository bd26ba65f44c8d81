/* Unnamed semaphores, private or process-shared, in glibc's layout and
   with glibc's protocol, so that a process under glibc and a process
   under xpthread can share one (nptl-compat/sync-layout.h).

   The 64-bit data word holds the value (low half, also the futex word)
   and the number of waiters that may be blocked (high half):
   post   CAS value -> value + 1 (EOVERFLOW at SEM_VALUE_MAX); if the word
          it replaced counted waiters, wake one sleeper on the value.
          Before the CAS, a post that finds waiters counted or spinning
          notes its CPU in the pad word, for the spin policy; glibc
          leaves that word alone.
   wait   CAS value -> value - 1 while the value is positive.  Otherwise
          spin read-only a bounded while (spin-policy.h) for a post, then
          register: add one waiter; loop { if the value is 0 sleep on the
          value word expecting 0; else CAS value - 1 and waiters - 1 in
          one step }; a timeout or a signal takes the waiter back out.
   No wake-up is lost: a waiter sleeps only on the value 0 while it is
   counted in the same word, so any post that makes the value positive
   after that sees it counted and wakes one sleeper; FUTEX_WAIT compares
   the value and sleeps atomically.  One post wakes one sleeper, and a
   woken waiter that finds the token taken by a thread that never slept
   sleeps again, still counted, so a later post wakes it.  After the CAS
   that makes a token available, post touches the semaphore only to wake
   (on a freed or reused word that is at worst a spurious wake), so the
   waiter that takes the token may destroy the semaphore at once.

   glibc has no semaphore probes; xpthread's (probes.h) follow the
   mutex's: sem_wait_entry and sem_wait_ret around a wait that found no
   token, sem_post_wake before a post's wake.  */
#define _GNU_SOURCE
#include "cancel.h"
#include "export.h"
#include "futex.h"
#include "lock-hooks.h"
#include "prof.h"
#include "probes.h"
#include "spin-policy.h"
#include "sync-layout.h"
#include <errno.h>
#include <limits.h>

#define ONE_WAITER ((uint64_t) 1 << XP_SEM_NWAITERS_SHIFT)

static inline struct xp_sem *
as_sem (sem_t *sem)
{
  return (struct xp_sem *) sem;
}

static inline bool
is_private (const struct xp_sem *s)
{
  return s->private_ != XP_SEM_SHARED;
}

static inline uint32_t *
value_word (struct xp_sem *s)
{
  return &s->data.half[XP_SEM_VALUE_HALF];
}

static inline bool
take_token (struct xp_sem *s)
{
  uint64_t d = xp_load_relaxed (&s->data.whole);
  while ((d & XP_SEM_VALUE_MASK) != 0)
    if (xp_cas (&s->data.whole, &d, d - 1))
      return true;
  return false;
}

static int
check_timeout (clockid_t clock, const struct timespec *abstime)
{
  if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
    return EINVAL;
  if (abstime != NULL
      && (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000))
    return EINVAL;
  return 0;
}

/* The one place a semaphore blocks, and a cancellation point: sleep while
   the value is 0.  Returns 0 (woken or the value moved), EINTR, ETIMEDOUT
   or ECANCELED.  A cancel counts only if the sleep was not ended by a
   post's wake (the kernel reports a wake first), so a cancelled waiter
   never swallows a wake meant for another sleeper.  */
static int
sleep_while_empty (struct xp_sem *s, clockid_t clock,
                   const struct timespec *abstime)
{
  if (abstime != NULL && abstime->tv_sec < 0)
    return ETIMEDOUT;
  int err = xp_futex_wait_cp ((int *) value_word (s), 0, clock, abstime,
                              is_private (s));
  if (err == -ETIMEDOUT || err == -EINTR || err == -ECANCELED)
    return -err;
  return 0;
}

/* Take a token if one is there; a spin's condition (spin_for_token).  */
static bool
token_taken (void *sem)
{
  struct xp_sem *s = sem;
  return xp_load_relaxed (value_word (s)) != 0 && take_token (s);
}

/* The semaphore's spin state (spin-policy.h), in the low half of its
   pad word, which glibc leaves unused.  */
static inline unsigned short *
spin_state (struct xp_sem *s)
{
  return (unsigned short *) &s->pad;
}

/* Where the last post that found a waiter (spinning or asleep) came
   from (xp_spin_cpu_here), in the pad word's other half.  */
static inline unsigned short *
poster_cpu (struct xp_sem *s)
{
  return (unsigned short *) &s->pad + 1;
}

static bool
has_spinner (struct xp_sem *s)
{
  return (xp_load_relaxed (spin_state (s)) >> XP_SPIN_SPINNERS_SHIFT) != 0;
}

/* Spin read-only for a token within the spin policy's bound, unless the
   posts come from the CPU the waiter runs on (xp_spin_peer_here).  */
static bool
spin_for_token (struct xp_sem *s)
{
  if (xp_spin_peer_here (xp_load_relaxed (poster_cpu (s))))
    return false;
  return xp_spin_until (spin_state (s), token_taken, s, false);
}

static int
wait_for_token (struct xp_sem *s, clockid_t clock,
                const struct timespec *abstime)
{
  if (spin_for_token (s))
    return 0;
  uint64_t d = xp_fetch_add (&s->data.whole, ONE_WAITER) + ONE_WAITER;
  for (;;)
    {
      if ((d & XP_SEM_VALUE_MASK) == 0)
        {
          int err = sleep_while_empty (s, clock, abstime);
          if (err != 0)
            {
              xp_fetch_add (&s->data.whole, -ONE_WAITER);
              return err;
            }
          d = xp_load_relaxed (&s->data.whole);
        }
      else if (xp_cas (&s->data.whole, &d, d - 1 - ONE_WAITER))
        return 0;
    }
}

/* Returns 0 or an error number (ETIMEDOUT, EINTR, ECANCELED), which the
   return probe shows.  */
static __attribute__ ((noinline)) int
wait_slow (struct xp_sem *s, clockid_t clock, const struct timespec *abstime,
           const void *site)
{
  XP_PROBE (sem_wait_entry, s);
  struct xp_prof_wait wait;
  xp_prof_wait_begin (&wait, s, XP_PROF_SEM, site);
  int err = wait_for_token (s, clock, abstime);
  xp_prof_wait_end (&wait, err == 0);
  XP_PROBE (sem_wait_ret, s, err);
  return err;
}

/* SITE: the program's call, for the profiler.  */
static int
wait_with (sem_t *sem, clockid_t clock, const struct timespec *abstime,
           const void *site)
{
  struct xp_sem *s = as_sem (sem);
  int err = 0;
  /* A cancellation point that acts even with a token to take.  */
  xp_testcancel ();
  xp_hook_sync_words (sem, sizeof *sem);
  if (xp_unlikely (!take_token (s)))
    err = wait_slow (s, clock, abstime, site);
  else if (xp_prof_active ())
    xp_prof_acquired (s, XP_PROF_SEM, site, XP_PROF_OWNER_UNKNOWN);
  if (err == 0)
    {
      xp_hook_receive (sem);
      return 0;
    }
  if (err == ECANCELED)
    xp_cancel_act ();
  errno = err;
  return -1;
}

int
sem_init (sem_t *sem, int pshared, unsigned value)
{
  if (value > SEM_VALUE_MAX)
    {
      errno = EINVAL;
      return -1;
    }
  struct xp_sem *s = as_sem (sem);
  s->data.whole = value;
  s->private_ = pshared ? XP_SEM_SHARED : 0;
  s->pad = 0;
  if (xp_prof_active ())
    xp_prof_lock_init (s, XP_CALLER_SITE ());
  return 0;
}
XP_EXPORT (sem_init)

int
sem_destroy (sem_t *sem)
{
  return 0;
}
XP_EXPORT (sem_destroy)

int
sem_post (sem_t *sem)
{
  struct xp_sem *s = as_sem (sem);
  /* Every post happens before the waits after it (the lock hooks).  */
  xp_hook_sync_words (sem, sizeof *sem);
  xp_hook_send (sem);
  /* Read before the CAS: the semaphore may be gone once it succeeds.  */
  bool private_ = is_private (s);
  uint64_t d = xp_load_relaxed (&s->data.whole);
  if ((d >> XP_SEM_NWAITERS_SHIFT) != 0 || has_spinner (s))
    {
      int here = xp_spin_cpu_here ();
      xp_store_relaxed (poster_cpu (s), here <= USHRT_MAX ? here : 0);
    }
  do
    if ((d & XP_SEM_VALUE_MASK) == SEM_VALUE_MAX)
      {
        errno = EOVERFLOW;
        return -1;
      }
  while (!xp_cas (&s->data.whole, &d, d + 1));
  if (d >> XP_SEM_NWAITERS_SHIFT)
    {
      /* Only the address: the semaphore may be gone already.  */
      XP_PROBE (sem_post_wake, s);
      xp_futex_wake ((int *) value_word (s), 1, private_);
    }
  return 0;
}
XP_EXPORT (sem_post)

int
sem_wait (sem_t *sem)
{
  return wait_with (sem, CLOCK_REALTIME, NULL, XP_CALLER_SITE ());
}
XP_EXPORT (sem_wait)

int
sem_clockwait (sem_t *sem, clockid_t clock, const struct timespec *abstime)
{
  int err = check_timeout (clock, abstime);
  if (err == 0)
    return wait_with (sem, clock, abstime, XP_CALLER_SITE ());
  errno = err;
  return -1;
}
XP_EXPORT (sem_clockwait)

int
sem_timedwait (sem_t *sem, const struct timespec *abstime)
{
  return sem_clockwait (sem, CLOCK_REALTIME, abstime);
}
XP_EXPORT (sem_timedwait)

int
sem_trywait (sem_t *sem)
{
  xp_hook_sync_words (sem, sizeof *sem);
  if (take_token (as_sem (sem)))
    {
      if (xp_prof_active ())
        xp_prof_acquired (sem, XP_PROF_SEM, XP_CALLER_SITE (),
                          XP_PROF_OWNER_UNKNOWN);
      xp_hook_receive (sem);
      return 0;
    }
  if (xp_prof_active ())
    xp_prof_busy (sem, XP_PROF_SEM, XP_CALLER_SITE ());
  errno = EAGAIN;
  return -1;
}
XP_EXPORT (sem_trywait)

int
sem_getvalue (sem_t *sem, int *value)
{
  *value = (int) (xp_load_relaxed (&as_sem (sem)->data.whole)
                  & XP_SEM_VALUE_MASK);
  return 0;
}
XP_EXPORT (sem_getvalue)
