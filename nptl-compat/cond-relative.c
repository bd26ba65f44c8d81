/* The process-shared condition variable protocol of glibc 2.41 and
   later, where signal counts are relative to the start of G1 and waiters
   keep no group references; what it shares with earlier releases is in
   cond-common.h.

   glibc-cond.c chooses it only where the running glibc keeps this layout
   and its own functions turn the probe's images as this protocol does.

   Layout (struct relative, spelt here rather than taken from the headers
   of the build machine).  What differs from cond-common.h:
     __g1_start    first position of G1, unshifted.
     __g_signals[s] the low 32 bits of __g1_start when slot s became G1,
                   plus the signals sent to it since: the signals ready to
                   consume are its distance above __g1_start's low bits.
                   Waiters of slot s sleep on it at the value they read.

   Transitions of this release range:
     await    stop if G1 starts after its position (its group was
              signalled in full); consume a signal of its slot (CAS -1)
              while there is one; else sleep while __g_signals holds the
              value last read.  A cancelled waiter also wakes one sleeper
              of its slot, in case the wake-up it was given goes with it.
     switch   move __g1_start past the old G1, flip __wseq's bit 0, and
              start the new G1's __g_signals at the low bits of its start.
              No signaller waits for the old group's sleepers: they find
              their position before the new G1's start and stop.

   No wake-up is lost: a waiter sleeps only while __g_signals of its slot
   still holds the value it read after finding no signal and its group
   open (FUTEX_WAIT compares atomically); every signal and every group
   switch changes that word before the wake, so a sleeper either sees the
   change or is woken by it.  */
#define _GNU_SOURCE
#include "cancel.h"
#include "cond-common.h"
#include <errno.h>

struct relative
{
  uint64_t __wseq;
  uint64_t __g1_start;
  unsigned __g_size[2];
  unsigned __g1_orig_size;
  unsigned __wrefs;
  unsigned __g_signals[2];
  unsigned __unused_initialized_1;
  unsigned __unused_initialized_2;
};

_Static_assert (sizeof (struct relative) == sizeof (pthread_cond_t),
                "pthread_cond_t has kept its size since glibc 2.3.2");

/* ---- group switch (signallers, lock held) ----------------------------- */

static bool
switch_groups (const struct xp_cond_view *v, uint64_t next, unsigned *g1)
{
  unsigned old_size = xp_cond_orig_size (v);
  uint64_t new_start = __atomic_load_n (v->g1_start, __ATOMIC_RELAXED)
                       + old_size;
  if ((unsigned) (next - new_start) + v->g_size[*g1 ^ 1] == 0)
    return false;
  /* Sleepers of the old G1 now find their position before G1's start.  */
  __atomic_fetch_add (v->g1_start, old_size, __ATOMIC_RELAXED);
  /* Waiters arriving from now on go to the old G1's slot, the new G2.  */
  next = __atomic_fetch_xor (v->wseq, 1, __ATOMIC_RELEASE) >> 1;
  *g1 ^= 1;
  /* No signal in the new G1 yet; release pairs with waiters' acquire
     of __g_signals, so they see the new __g1_start too.  */
  __atomic_store_n (&v->g_signals[*g1], (unsigned) new_start,
                    __ATOMIC_RELEASE);
  unsigned size = (unsigned) (next - new_start);
  xp_cond_set_orig_size (v, size);
  /* Added, not stored: G2 counted its departed waiters below zero.  */
  v->g_size[*g1] += size;
  return v->g_size[*g1] != 0;
}

/* ---- waiting --------------------------------------------------------- */

static int
await_signal (const struct xp_cond_protocol *p, const struct xp_cond_view *v,
              uint64_t wseq, clockid_t clock, const struct timespec *abstime)
{
  unsigned g = (unsigned) (wseq & 1);
  uint64_t seq = wseq >> 1;
  unsigned *signals = &v->g_signals[g];
  for (;;)
    {
      unsigned s = __atomic_load_n (signals, __ATOMIC_ACQUIRE);
      uint64_t start = xp_cond_g1_start (p, v);
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
      if (r == -ETIMEDOUT || r == -ECANCELED)
        {
          xp_cond_protocol_withdraw (p, v, seq, g);
          if (r == -ETIMEDOUT)
            return ETIMEDOUT;
          xp_cond_wake (signals, 1);
          return XP_COND_WAIT_CANCELLED;
        }
    }
}

/* ---- the protocol ------------------------------------------------------- */

/* One waiter (position 0, slot 0) still in G2; glibc's signal switches
   groups (G1 starts at 0 in slot 0, orig size 1, G2 is slot 1) and
   leaves one signal above G1's start.  */
static const struct relative before_signal = {
  .__wseq = 2, .__wrefs = XP_COND_WREFS_WAITER | XP_GLIBC_COND_PSHARED,
};
static const struct relative after_signal = {
  .__wseq = 3, .__g1_orig_size = 1 << 2,
  .__wrefs = XP_COND_WREFS_WAITER | XP_GLIBC_COND_PSHARED,
  .__g_signals = { 1, 0 },
};
/* A wait whose deadline passed: the waiter takes position 0 in slot 0
   and withdrawing takes it off G2's size (0 - 1).  */
static const struct relative before_timeout = {
  .__wrefs = XP_GLIBC_COND_PSHARED,
};
static const struct relative after_timeout = {
  .__wseq = 2, .__wrefs = XP_GLIBC_COND_PSHARED, .__g_size = { ~0u, 0 },
};

#define AT(field) __builtin_offsetof (struct relative, field)

const struct xp_cond_protocol xp_cond_relative = {
  .name = "glibc 2.41 and later (relative signal counts), xpthread's code",
  .off_wseq = AT (__wseq), .off_g1_start = AT (__g1_start),
  .off_g_size = AT (__g_size), .off_orig_size = AT (__g1_orig_size),
  .off_wrefs = AT (__wrefs), .off_g_signals = AT (__g_signals),
  .g1_start_shift = 0,
  .signal_weight = 1,
  .switch_groups = switch_groups,
  .await_signal = await_signal,
  .probe = { &before_signal, &after_signal, &before_timeout, &after_timeout },
};
