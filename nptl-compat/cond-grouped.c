/* Process-shared condition variables in the protocol of glibc 2.25 to
   2.40, the one with group references (__g_refs).

   A process under glibc may wait on and signal the same condition
   variable, so these follow glibc's algorithm and field use.  glibc-cond.c
   chooses this protocol only when the running glibc keeps this layout
   and its own functions behave as this protocol does on scratch objects
   (xp_cond_grouped_spoken, at the end of this file).

   Waiters take consecutive positions in a 64-bit sequence.  The positions
   form two groups kept in two slots: G1, the older group, receives
   signals until each of its waiters got one; G2 collects new waiters.
   When G1 is used up and a signal finds waiters in G2, the signaller
   closes G1, waits until no waiter of G1 sleeps on its futex any more,
   and turns G2 into the new G1 and the emptied slot into the new G2.

   Fields of pthread_cond_t in this release range (struct xp_cond_grouped;
   glibc 2.41 removed __g_refs and moved the fields after it, so they are
   spelt here rather than taken from the headers of the build machine);
   __g1_orig_size and __wrefs as in cond-common.h:
     __wseq        (next position << 1) | slot of G2.  Waiters add 2
                   (holding the mutex); a group switch flips bit 0.
     __g1_start    (first position of G1 << 1) | slot of G2; changed only
                   under the internal lock, read by waiters.
     __g_size[s]   waiters of slot s not signalled yet (G1); for G2 zero
                   minus its waiters that gave up, unsigned arithmetic.
     __g_signals[s] (signals ready to consume << 1) | 1 closed; the futex
                   word waiters of slot s sleep on, at value 0.
     __g_refs[s]   (waiters sleeping on __g_signals[s] << 1) | 1 a
                   signaller waits for them to leave.

   Transitions:
     wait     take a position, count itself in __wrefs, unlock the
              mutex; then consume a signal of its slot (CAS -2), or find
              its group closed (flag, or __g1_start beyond its position:
              the group had a signal for it), else take a reference in
              __g_refs, re-check, sleep on __g_signals == 0, drop the
              reference (waking a signaller that waits for it); at the
              end leave __wrefs (waking destroy) and re-lock the mutex.
     signal   under the lock: if G1 has unsignalled waiters, add one
              signal to G1 and decrement its size; else switch groups if
              G2 has waiters and signal the new G1; wake one sleeper.
     broadcast under the lock: signal every waiter of G1, switch groups,
              signal every waiter of the new G1; wake all sleepers.
     timeout or cancel  drop the reference, then under the lock shrink
              the waiter's group; if the group was already signalled in
              full, the waiter consumed a signal meant for another, so it
              sends a replacement signal.
   A waiter that consumed a signal after its own group was closed may
   have taken one from the newer group in the same slot; it then gives
   one back (at worst a spurious wake-up), as __g1_start tells it.

   No wake-up is lost: a waiter sleeps only while __g_signals of its slot
   reads 0 (FUTEX_WAIT compares atomically), every signal adds to that
   word before it wakes, and closing a group sets the flag bit, so a
   sleeper either sees the change or is woken by it.  A slot is reused
   for a new group only after its __g_refs fell to zero, so no sleeper of
   an old group can mistake a new group's signals for its own.  */
#define _GNU_SOURCE
#include "cancel.h"
#include "cond-common.h"
#include "cond-grouped.h"
#include "glibc-cond.h"
#include "mutex.h"
#include <errno.h>
#include <limits.h>
#include <string.h>

typedef struct xp_cond_grouped cond_fields;

static inline cond_fields *
fields (pthread_cond_t *cond)
{
  return (cond_fields *) cond;
}

static inline void
wake (unsigned *word, int count)
{
  xp_cond_wake (word, count);
}

static inline void
lock_internal (cond_fields *c)
{
  xp_cond_lock (&c->__g1_orig_size);
}

static inline void
unlock_internal (cond_fields *c)
{
  xp_cond_unlock (&c->__g1_orig_size);
}

static inline unsigned
orig_size (cond_fields *c)
{
  return xp_cond_orig_size (&c->__g1_orig_size);
}

static inline uint64_t
g1_start (cond_fields *c)
{
  return __atomic_load_n (&c->__g1_start, __ATOMIC_RELAXED);
}

/* ---- group switch (signallers, lock held) ----------------------------- */

/* Wait until no waiter sleeps on slot g's futex any more.  */
static void
drain_sleepers (cond_fields *c, unsigned g)
{
  unsigned r = __atomic_fetch_or (&c->__g_refs[g], 0, __ATOMIC_RELEASE);
  while ((r >> 1) > 0)
    {
      r = __atomic_fetch_or (&c->__g_refs[g], 1, __ATOMIC_RELAXED) | 1;
      if ((r >> 1) > 0)
        xp_cond_sleep (&c->__g_refs[g], r);
      r = xp_load_relaxed (&c->__g_refs[g]);
    }
  __atomic_thread_fence (__ATOMIC_ACQUIRE);
}

/* G1 (slot *g1) has no unsignalled waiter left.  If G2 has waiters, close
   G1 and make G2 the new G1, observed end wseq.  Returns whether the new
   G1 has waiters to signal.  */
static bool
switch_groups (cond_fields *c, uint64_t wseq, unsigned *g1)
{
  unsigned old_size = orig_size (c);
  uint64_t old_start = g1_start (c) >> 1;
  unsigned g2_waiters = (unsigned) (wseq - old_start - old_size)
                        + c->__g_size[*g1 ^ 1];
  if (g2_waiters == 0)
    return false;

  /* Closed: waiters of G1 stop sleeping on the slot, and those about to
     take a reference see it.  */
  __atomic_fetch_or (&c->__g_signals[*g1], 1, __ATOMIC_RELAXED);
  drain_sleepers (c, *g1);
  /* G1 ends where G2 began; bit 0 becomes the index of the slot that is
     G2 from now on, the old G1's.  */
  __atomic_fetch_add (&c->__g1_start,
                      ((uint64_t) old_size << 1) + (*g1 == 1 ? 1 : -1),
                      __ATOMIC_RELAXED);
  /* Reopened empty for the waiters it will collect as G2; release pairs
     with waiters' acquire of __g_signals, so they see __g1_start too.  */
  __atomic_store_n (&c->__g_signals[*g1], 0, __ATOMIC_RELEASE);
  wseq = __atomic_fetch_xor (&c->__wseq, 1, __ATOMIC_RELEASE) >> 1;
  *g1 ^= 1;
  unsigned size = (unsigned) (wseq - (old_start + old_size));
  xp_cond_set_orig_size (&c->__g1_orig_size, size);
  /* Added, not stored: G2 counted its departed waiters below zero.  */
  c->__g_size[*g1] += size;
  return c->__g_size[*g1] != 0;
}

/* ---- signal and broadcast ------------------------------------------ */

static bool
has_waiters (cond_fields *c)
{
  return (xp_load_relaxed (&c->__wrefs) >> 3) != 0;
}

static int
signal_one (pthread_cond_t *cond)
{
  cond_fields *c = fields (cond);
  if (!has_waiters (c))
    return 0;
  lock_internal (c);
  uint64_t wseq = xp_load_relaxed (&c->__wseq);
  unsigned g1 = (unsigned) (wseq & 1) ^ 1;
  bool woke = false;
  if (c->__g_size[g1] != 0 || switch_groups (c, wseq >> 1, &g1))
    {
      __atomic_fetch_add (&c->__g_signals[g1], 2, __ATOMIC_RELAXED);
      c->__g_size[g1]--;
      woke = true;
    }
  unlock_internal (c);
  if (woke)
    wake (&c->__g_signals[g1], 1);
  return 0;
}

/* Every unsignalled waiter of slot g gets its signal.  */
static void
signal_group (cond_fields *c, unsigned g)
{
  __atomic_fetch_add (&c->__g_signals[g], c->__g_size[g] << 1,
                      __ATOMIC_RELAXED);
  c->__g_size[g] = 0;
}

static int
signal_all (pthread_cond_t *cond)
{
  cond_fields *c = fields (cond);
  if (!has_waiters (c))
    return 0;
  lock_internal (c);
  uint64_t wseq = xp_load_relaxed (&c->__wseq);
  unsigned g1 = (unsigned) (wseq & 1) ^ 1;
  if (c->__g_size[g1] != 0)
    {
      signal_group (c, g1);
      /* Before the switch, which waits for these sleepers to leave.  */
      wake (&c->__g_signals[g1], INT_MAX);
    }
  bool woke = switch_groups (c, wseq >> 1, &g1);
  if (woke)
    signal_group (c, g1);
  unlock_internal (c);
  if (woke)
    wake (&c->__g_signals[g1], INT_MAX);
  return 0;
}

/* ---- waiting --------------------------------------------------------- */

/* Outcomes of a wait besides 0 and ETIMEDOUT.  */
enum { WAIT_CANCELLED = -1, WAIT_GROUP_CLOSED = -2 };

static void
drop_reference (cond_fields *c, unsigned g)
{
  /* 3: the last reference, and a signaller waits for it.  */
  if (__atomic_fetch_add (&c->__g_refs[g], -2, __ATOMIC_RELEASE) == 3)
    {
      __atomic_fetch_and (&c->__g_refs[g], ~1u, __ATOMIC_RELAXED);
      wake (&c->__g_refs[g], INT_MAX);
    }
}

/* The waiter at position seq in slot g stops waiting without a signal
   (timeout, cancel, or an error unlocking the mutex).  */
/* The waiter at position seq in slot g stops waiting without a signal.  */
static void
withdraw (pthread_cond_t *cond, uint64_t seq, unsigned g)
{
  cond_fields *c = fields (cond);
  lock_internal (c);
  enum xp_cond_withdrawal w = xp_cond_withdraw (g1_start (c) >> 1,
                                                orig_size (c), seq,
                                                &c->__g_size[g]);
  unlock_internal (c);
  if (w == XP_COND_OVERFLOW)
    signal_all (cond);
  else if (w == XP_COND_TOOK_SIGNAL)
    signal_one (cond);
}

/* A signal was consumed from slot g after the waiter's own group had
   closed: it may belong to the newer group now in the slot.  Give one
   back while that group is still G1.  */
static void
return_possible_steal (cond_fields *c, uint64_t seq, unsigned g)
{
  uint64_t start = g1_start (c);
  if (seq >= (start >> 1) || ((start & 1) ^ 1) != g)
    return;
  unsigned s = xp_load_relaxed (&c->__g_signals[g]);
  while (g1_start (c) == start)
    if ((s & 1) != 0
        || __atomic_compare_exchange_n (&c->__g_signals[g], &s, s + 2, true,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      {
        wake (&c->__g_signals[g], 1);
        break;
      }
}

static bool
group_closed (cond_fields *c, uint64_t seq, unsigned g)
{
  return (__atomic_load_n (&c->__g_signals[g], __ATOMIC_ACQUIRE) & 1) != 0
         || seq < (g1_start (c) >> 1);
}

/* Sleep until slot g may have a signal.  Returns 0 to look again,
   WAIT_GROUP_CLOSED, or the wait's result after withdrawing.  */
static int
sleep_in_group (pthread_cond_t *cond, uint64_t seq, unsigned g,
                clockid_t clock, const struct timespec *abstime)
{
  cond_fields *c = fields (cond);
  __atomic_fetch_add (&c->__g_refs[g], 2, __ATOMIC_ACQUIRE);
  if (group_closed (c, seq, g))
    {
      drop_reference (c, g);
      return WAIT_GROUP_CLOSED;
    }
  int r = xp_futex_wait_cp ((int *) &c->__g_signals[g], 0, clock, abstime,
                            false);
  drop_reference (c, g);
  if (r != -ETIMEDOUT && r != -ECANCELED)
    return 0;
  withdraw (cond, seq, g);
  return r == -ETIMEDOUT ? ETIMEDOUT : WAIT_CANCELLED;
}

/* Returns 0 once the waiter got its signal or found its group closed,
   ETIMEDOUT or WAIT_CANCELLED once it withdrew.  */
static int
await_signal (pthread_cond_t *cond, uint64_t wseq, clockid_t clock,
              const struct timespec *abstime)
{
  cond_fields *c = fields (cond);
  unsigned g = (unsigned) (wseq & 1);
  uint64_t seq = wseq >> 1;
  unsigned *signals = &c->__g_signals[g];
  unsigned s = __atomic_load_n (signals, __ATOMIC_ACQUIRE);
  for (;;)
    {
      if ((s & 1) != 0)
        return 0;
      if (s != 0)
        {
          if (__atomic_compare_exchange_n (signals, &s, s - 2, true,
                                           __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
            {
              return_possible_steal (c, seq, g);
              return 0;
            }
          continue;
        }
      int r = sleep_in_group (cond, seq, g, clock, abstime);
      if (r == WAIT_GROUP_CLOSED)
        return 0;
      if (r != 0)
        return r;
      s = __atomic_load_n (signals, __ATOMIC_ACQUIRE);
    }
}

static int
wait_shared (pthread_cond_t *cond, pthread_mutex_t *m, clockid_t clock,
             const struct timespec *abstime)
{
  int err = xp_check_abstime (abstime);
  if (err != 0)
    return err;
  /* A cancel already due acts here, the mutex held, nothing registered.  */
  xp_testcancel ();
  cond_fields *c = fields (cond);
  uint64_t wseq = __atomic_fetch_add (&c->__wseq, 2, __ATOMIC_ACQUIRE);
  __atomic_fetch_add (&c->__wrefs, XP_COND_WREFS_WAITER, __ATOMIC_RELAXED);
  err = pthread_mutex_unlock (m);
  if (err != 0)
    {
      withdraw (cond, wseq >> 1, (unsigned) (wseq & 1));
      xp_cond_leave (&c->__wrefs);
      return err;
    }
  int outcome = await_signal (cond, wseq, clock, abstime);
  /* Before re-locking, so that destroy may run under the mutex.  */
  xp_cond_leave (&c->__wrefs);
  int relock = xp_mutex_relock_after_wait (m, NULL);
  if (outcome == WAIT_CANCELLED)
    xp_cancel_act ();
  return relock != 0 ? relock : outcome;
}

/* ---- life cycle -------------------------------------------------------- */

static void
init_shared (pthread_cond_t *cond, bool monotonic)
{
  memset (cond, 0, sizeof *cond);
  fields (cond)->__wrefs = XP_GLIBC_COND_PSHARED
                           | (monotonic ? XP_GLIBC_COND_MONOTONIC : 0);
}

static unsigned
unsignalled_waiters (cond_fields *c)
{
  lock_internal (c);
  uint64_t wseq = xp_load_relaxed (&c->__wseq);
  unsigned n = xp_cond_unsignalled (wseq >> 1, (unsigned) (wseq & 1),
                                    g1_start (c) >> 1, orig_size (c),
                                    c->__g_size);
  unlock_internal (c);
  return n;
}

static int
destroy_shared (pthread_cond_t *cond)
{
  cond_fields *c = fields (cond);
  if (unsignalled_waiters (c) != 0)
    return EBUSY;
  /* Signalled waiters may still be on their way out: wait for them, as
     POSIX allows destroying right after a broadcast.  */
  xp_cond_await_leavers (&c->__wrefs);
  return 0;
}

const struct xp_shared_cond_ops xp_cond_grouped_ops = {
  .name = "glibc 2.25 to 2.40 (group references), xpthread's code",
  .cancellable = true,
  .init = init_shared,
  .destroy = destroy_shared,
  .signal = signal_one,
  .broadcast = signal_all,
  .wait = wait_shared,
};

/* ---- does the running glibc speak it ------------------------------------ */

bool
xp_cond_grouped_spoken (void)
{
  /* One waiter (position 0, slot 0) still in G2; glibc's signal switches
     groups (G1 starts at 0 in slot 0, G2 is slot 1, orig size 1) and
     leaves one signal (2).  */
  static const cond_fields before_signal = {
    .__wseq = 2, .__wrefs = XP_COND_WREFS_WAITER | XP_GLIBC_COND_PSHARED,
  };
  static const cond_fields after_signal = {
    .__wseq = 3, .__g1_start = 1, .__g1_orig_size = 1 << 2,
    .__wrefs = XP_COND_WREFS_WAITER | XP_GLIBC_COND_PSHARED,
    .__g_signals = { 2, 0 },
  };
  /* A wait whose deadline passed: the waiter takes position 0 in slot 0
     and withdrawing takes it off G2's size (0 - 1).  */
  static const cond_fields before_timeout = {
    .__wrefs = XP_GLIBC_COND_PSHARED,
  };
  static const cond_fields after_timeout = {
    .__wseq = 2, .__wrefs = XP_GLIBC_COND_PSHARED, .__g_size = { ~0u, 0 },
  };
  static const struct xp_glibc_cond_probe probe = {
    .before_signal = &before_signal, .after_signal = &after_signal,
    .before_timeout = &before_timeout, .after_timeout = &after_timeout,
  };
  return xp_glibc_cond_behaves (&probe);
}
