/* Process-shared condition variables in the protocol of glibc 2.41 and
   later, where signal counts are relative to the start of G1 and waiters
   keep no group references.

   A process under glibc may wait on and signal the same condition
   variable, so these follow glibc's algorithm and field use.  glibc-cond.c
   chooses this protocol only when the running glibc keeps this layout
   and its own functions behave as this protocol does on scratch objects
   (xp_cond_relative_spoken, at the end of this file).

   Waiters take consecutive positions in a 64-bit sequence, which two
   groups in two slots share: G1, the older group, receives signals until
   each of its waiters got one; G2 collects new waiters.  When G1 is used
   up and a signal finds waiters in G2, the signaller turns G2 into the new
   G1 and the emptied slot into the new G2.  Unlike glibc 2.25-2.40, no
   signaller waits for the old group's sleepers to leave: a sleeper of an
   old group finds its position before the new G1's start and stops.

   Fields of pthread_cond_t in this release range (struct
   xp_cond_relative, spelt here rather than taken from the headers of the
   build machine); __g1_orig_size and __wrefs as in cond-common.h:
     __wseq        (next position << 1) | slot of G2.  Waiters add 2
                   (holding the mutex); a group switch flips bit 0.
     __g1_start    first position of G1; grows only, under the internal
                   lock; read by waiters.
     __g_size[s]   waiters of slot s not signalled yet (G1); for G2 zero
                   minus its waiters that gave up, unsigned arithmetic.
     __g_signals[s] the low 32 bits of __g1_start when slot s became G1,
                   plus the signals sent to it since; signals ready to
                   consume are its distance above __g1_start's low bits.
                   The futex word waiters of slot s sleep on.

   Transitions:
     wait     take a position, count itself in __wrefs, unlock the mutex;
              then stop if G1 starts after its position (its group was
              signalled in full), or consume a signal of its slot (CAS
              -1) while there is one, else sleep on __g_signals while it
              holds the value last read; at the end leave __wrefs (waking
              destroy) and re-lock the mutex.
     signal   under the lock: if G1 has unsignalled waiters, add one
              signal to G1 and decrement its size; else switch groups if
              G2 has waiters (G1's start moves past the old G1, bit 0 of
              __wseq flips, the new G1's __g_signals starts at the low
              bits of its start) and signal the new G1; wake one sleeper.
     broadcast under the lock: signal every waiter of G1, switch groups,
              signal every waiter of the new G1; wake all sleepers.
     timeout or cancel  under the lock shrink the waiter's group; if the
              group was signalled in full, the waiter consumed a signal
              meant for another, so it sends a replacement signal.  A
              cancelled waiter also wakes one sleeper of its slot, in case
              the futex wake-up it was given is lost with it.

   No wake-up is lost: a waiter sleeps only while __g_signals of its slot
   still holds the value it read after finding no signal and its group
   open (FUTEX_WAIT compares atomically); every signal and every group
   switch changes that word before the wake, so a sleeper either sees the
   change or is woken by it.  */
#define _GNU_SOURCE
#include "cancel.h"
#include "cond-common.h"
#include "cond-relative.h"
#include "glibc-cond.h"
#include "mutex.h"
#include <errno.h>
#include <limits.h>
#include <string.h>

typedef struct xp_cond_relative cond_fields;

static inline cond_fields *
fields (pthread_cond_t *cond)
{
  return (cond_fields *) cond;
}

static inline uint64_t
g1_start (cond_fields *c)
{
  return __atomic_load_n (&c->__g1_start, __ATOMIC_RELAXED);
}

static inline unsigned
orig_size (cond_fields *c)
{
  return xp_cond_orig_size (&c->__g1_orig_size);
}

/* ---- group switch (signallers, lock held) ----------------------------- */

/* G1 (slot *g1) has no unsignalled waiter left.  If G2 has waiters, make
   it the new G1, ending at the position observed in wseq.  Returns
   whether the new G1 has waiters to signal.  */
static bool
switch_groups (cond_fields *c, uint64_t wseq, unsigned *g1)
{
  uint64_t new_start = g1_start (c) + orig_size (c);
  if ((unsigned) (wseq - new_start) + c->__g_size[*g1 ^ 1] == 0)
    return false;
  /* Sleepers of the old G1 now find their position before G1's start.  */
  __atomic_fetch_add (&c->__g1_start, orig_size (c), __ATOMIC_RELAXED);
  /* Waiters arriving from now on go to the old G1's slot, the new G2.  */
  wseq = __atomic_fetch_xor (&c->__wseq, 1, __ATOMIC_RELEASE) >> 1;
  *g1 ^= 1;
  /* No signal in the new G1 yet; release pairs with waiters' acquire
     of __g_signals, so they see the new __g1_start too.  */
  __atomic_store_n (&c->__g_signals[*g1], (unsigned) new_start,
                    __ATOMIC_RELEASE);
  unsigned size = (unsigned) (wseq - new_start);
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
  xp_cond_lock (&c->__g1_orig_size);
  uint64_t wseq = xp_load_relaxed (&c->__wseq);
  unsigned g1 = (unsigned) (wseq & 1) ^ 1;
  bool woke = false;
  if (c->__g_size[g1] != 0 || switch_groups (c, wseq >> 1, &g1))
    {
      __atomic_fetch_add (&c->__g_signals[g1], 1, __ATOMIC_RELAXED);
      c->__g_size[g1]--;
      woke = true;
    }
  xp_cond_unlock (&c->__g1_orig_size);
  if (woke)
    xp_cond_wake (&c->__g_signals[g1], 1);
  return 0;
}

/* Every unsignalled waiter of slot g gets its signal.  */
static void
signal_group (cond_fields *c, unsigned g)
{
  __atomic_fetch_add (&c->__g_signals[g], c->__g_size[g], __ATOMIC_RELAXED);
  c->__g_size[g] = 0;
}

static int
signal_all (pthread_cond_t *cond)
{
  cond_fields *c = fields (cond);
  if (!has_waiters (c))
    return 0;
  xp_cond_lock (&c->__g1_orig_size);
  uint64_t wseq = xp_load_relaxed (&c->__wseq);
  unsigned g1 = (unsigned) (wseq & 1) ^ 1;
  if (c->__g_size[g1] != 0)
    {
      signal_group (c, g1);
      /* Now: after the switch, the slot's word no longer counts them.  */
      xp_cond_wake (&c->__g_signals[g1], INT_MAX);
    }
  bool woke = switch_groups (c, wseq >> 1, &g1);
  if (woke)
    signal_group (c, g1);
  xp_cond_unlock (&c->__g1_orig_size);
  if (woke)
    xp_cond_wake (&c->__g_signals[g1], INT_MAX);
  return 0;
}

/* ---- waiting --------------------------------------------------------- */

/* Outcome of a wait besides 0 and ETIMEDOUT.  */
enum { WAIT_CANCELLED = -1 };

/* The waiter at position seq in slot g stops waiting without a signal.  */
static void
withdraw (pthread_cond_t *cond, uint64_t seq, unsigned g)
{
  cond_fields *c = fields (cond);
  xp_cond_lock (&c->__g1_orig_size);
  enum xp_cond_withdrawal w = xp_cond_withdraw (g1_start (c), orig_size (c),
                                                seq, &c->__g_size[g]);
  xp_cond_unlock (&c->__g1_orig_size);
  if (w == XP_COND_OVERFLOW)
    signal_all (cond);
  else if (w == XP_COND_TOOK_SIGNAL)
    signal_one (cond);
}

/* Returns 0 once the waiter got its signal or found its group signalled
   in full, ETIMEDOUT or WAIT_CANCELLED once it withdrew.  */
static int
await_signal (pthread_cond_t *cond, uint64_t wseq, clockid_t clock,
              const struct timespec *abstime)
{
  cond_fields *c = fields (cond);
  unsigned g = (unsigned) (wseq & 1);
  uint64_t seq = wseq >> 1;
  unsigned *signals = &c->__g_signals[g];
  for (;;)
    {
      unsigned s = __atomic_load_n (signals, __ATOMIC_ACQUIRE);
      uint64_t start = g1_start (c);
      if (seq < start)
        return 0;
      if ((int) (s - (unsigned) start) > 0)
        {
          if (__atomic_compare_exchange_n (signals, &s, s - 1, true,
                                           __ATOMIC_ACQUIRE,
                                           __ATOMIC_RELAXED))
            return 0;
          continue;
        }
      int r = xp_futex_wait_cp ((int *) signals, (int) s, clock, abstime,
                                false);
      if (r == -ETIMEDOUT)
        {
          withdraw (cond, seq, g);
          return ETIMEDOUT;
        }
      if (r == -ECANCELED)
        {
          withdraw (cond, seq, g);
          xp_cond_wake (signals, 1);
          return WAIT_CANCELLED;
        }
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

static int
destroy_shared (pthread_cond_t *cond)
{
  cond_fields *c = fields (cond);
  xp_cond_lock (&c->__g1_orig_size);
  uint64_t wseq = xp_load_relaxed (&c->__wseq);
  unsigned owed = xp_cond_unsignalled (wseq >> 1, (unsigned) (wseq & 1),
                                       g1_start (c), orig_size (c),
                                       c->__g_size);
  xp_cond_unlock (&c->__g1_orig_size);
  if (owed != 0)
    return EBUSY;
  /* Signalled waiters may still be on their way out: wait for them, as
     POSIX allows destroying right after a broadcast.  */
  xp_cond_await_leavers (&c->__wrefs);
  return 0;
}

const struct xp_shared_cond_ops xp_cond_relative_ops = {
  .name = "glibc 2.41 and later (relative signal counts), xpthread's code",
  .cancellable = true,
  .init = init_shared,
  .destroy = destroy_shared,
  .signal = signal_one,
  .broadcast = signal_all,
  .wait = wait_shared,
};

/* ---- does the running glibc speak it ------------------------------------ */

bool
xp_cond_relative_spoken (void)
{
  /* One waiter (position 0, slot 0) still in G2; glibc's signal switches
     groups (G1 starts at 0 in slot 0, orig size 1, G2 is slot 1) and
     leaves one signal above G1's start.  */
  static const cond_fields before_signal = {
    .__wseq = 2, .__wrefs = XP_COND_WREFS_WAITER | XP_GLIBC_COND_PSHARED,
  };
  static const cond_fields after_signal = {
    .__wseq = 3, .__g1_orig_size = 1 << 2,
    .__wrefs = XP_COND_WREFS_WAITER | XP_GLIBC_COND_PSHARED,
    .__g_signals = { 1, 0 },
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
