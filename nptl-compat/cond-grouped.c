/* The process-shared condition variable protocol of glibc 2.25 to 2.40,
   the one with group references (__g_refs); what it shares with later
   releases is in cond-common.h.

   glibc-cond.c chooses it only where the running glibc keeps this layout
   and its own functions turn the probe's images as this protocol does.

   Layout (struct grouped; glibc 2.41 removed __g_refs and moved the
   fields after it, so they are spelt here rather than taken from the
   headers of the build machine).  What differs from cond-common.h:
     __g1_start    (first position of G1 << 1) | slot of G2.
     __g_signals[s] (signals ready to consume << 1) | 1 closed; waiters
                   of slot s sleep on it at value 0.
     __g_refs[s]   (waiters sleeping on __g_signals[s] << 1) | 1 a
                   signaller waits for them to leave.

   Transitions of this release range:
     await    consume a signal of its slot (CAS -2), or find its group
              closed (flag, or __g1_start beyond its position: the group
              had a signal for it), else take a reference in __g_refs,
              re-check, sleep on __g_signals == 0, drop the reference
              (waking a signaller that waits for it).
     switch   close G1 (flag bit), wait until its sleepers dropped their
              references, move __g1_start past it (its bit 0 naming the
              old G1's slot as G2), reopen that slot empty, flip __wseq's
              bit 0.
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
#include <errno.h>
#include <limits.h>

struct grouped
{
  uint64_t __wseq;
  uint64_t __g1_start;
  unsigned __g_refs[2];
  unsigned __g_size[2];
  unsigned __g1_orig_size;
  unsigned __wrefs;
  unsigned __g_signals[2];
};

_Static_assert (sizeof (struct grouped) == sizeof (pthread_cond_t),
                "pthread_cond_t has kept its size since glibc 2.3.2");

static inline unsigned *
g_refs (const struct xp_cond_view *v)
{
  return ((struct grouped *) v->cond)->__g_refs;
}

/* ---- group switch (signallers, lock held) ----------------------------- */

/* Wait until no waiter sleeps on slot g's futex any more.  */
static void
drain_sleepers (const struct xp_cond_view *v, unsigned g)
{
  unsigned *refs = &g_refs (v)[g];
  unsigned r = __atomic_fetch_or (refs, 0, __ATOMIC_RELEASE);
  while ((r >> 1) > 0)
    {
      r = __atomic_fetch_or (refs, 1, __ATOMIC_RELAXED) | 1;
      if ((r >> 1) > 0)
        xp_cond_sleep (refs, r);
      r = xp_load_relaxed (refs);
    }
  __atomic_thread_fence (__ATOMIC_ACQUIRE);
}

static bool
switch_groups (const struct xp_cond_view *v, uint64_t next, unsigned *g1)
{
  unsigned old_size = xp_cond_orig_size (v);
  uint64_t old_start = __atomic_load_n (v->g1_start, __ATOMIC_RELAXED) >> 1;
  unsigned g2_waiters = (unsigned) (next - old_start - old_size)
                        + v->g_size[*g1 ^ 1];
  if (g2_waiters == 0)
    return false;

  /* Closed: waiters of G1 stop sleeping on the slot, and those about to
     take a reference see it.  */
  __atomic_fetch_or (&v->g_signals[*g1], 1, __ATOMIC_RELAXED);
  drain_sleepers (v, *g1);
  /* G1 ends where G2 began; bit 0 becomes the index of the slot that is
     G2 from now on, the old G1's.  */
  __atomic_fetch_add (v->g1_start,
                      ((uint64_t) old_size << 1) + (*g1 == 1 ? 1 : -1),
                      __ATOMIC_RELAXED);
  /* Reopened empty for the waiters it will collect as G2; release pairs
     with waiters' acquire of __g_signals, so they see __g1_start too.  */
  __atomic_store_n (&v->g_signals[*g1], 0, __ATOMIC_RELEASE);
  next = __atomic_fetch_xor (v->wseq, 1, __ATOMIC_RELEASE) >> 1;
  *g1 ^= 1;
  unsigned size = (unsigned) (next - (old_start + old_size));
  xp_cond_set_orig_size (v, size);
  /* Added, not stored: G2 counted its departed waiters below zero.  */
  v->g_size[*g1] += size;
  return v->g_size[*g1] != 0;
}

/* ---- waiting --------------------------------------------------------- */

/* An outcome of sleep_in_group besides await_signal's.  */
enum { GROUP_CLOSED = -2 };

static void
drop_reference (const struct xp_cond_view *v, unsigned g)
{
  unsigned *refs = &g_refs (v)[g];
  /* 3: the last reference, and a signaller waits for it.  */
  if (__atomic_fetch_add (refs, -2, __ATOMIC_RELEASE) == 3)
    {
      __atomic_fetch_and (refs, ~1u, __ATOMIC_RELAXED);
      xp_cond_wake (refs, INT_MAX);
    }
}

/* A signal was consumed from slot g after the waiter's own group had
   closed: it may belong to the newer group now in the slot.  Give one
   back while that group is still G1.  */
static void
return_possible_steal (const struct xp_cond_view *v, uint64_t seq,
                       unsigned g)
{
  uint64_t start = __atomic_load_n (v->g1_start, __ATOMIC_RELAXED);
  if (seq >= (start >> 1) || ((start & 1) ^ 1) != g)
    return;
  unsigned *signals = &v->g_signals[g];
  unsigned s = xp_load_relaxed (signals);
  while (__atomic_load_n (v->g1_start, __ATOMIC_RELAXED) == start)
    if ((s & 1) != 0
        || __atomic_compare_exchange_n (signals, &s, s + 2, true,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      {
        xp_cond_wake (signals, 1);
        break;
      }
}

static bool
group_closed (const struct xp_cond_protocol *p, const struct xp_cond_view *v,
              uint64_t seq, unsigned g)
{
  return (__atomic_load_n (&v->g_signals[g], __ATOMIC_ACQUIRE) & 1) != 0
         || seq < xp_cond_g1_start (p, v);
}

/* Sleep until slot g may have a signal.  Returns 0 to look again,
   GROUP_CLOSED, or the wait's result after withdrawing.  */
static int
sleep_in_group (const struct xp_cond_protocol *p,
                const struct xp_cond_view *v, uint64_t seq, unsigned g,
                clockid_t clock, const struct timespec *abstime)
{
  __atomic_fetch_add (&g_refs (v)[g], 2, __ATOMIC_ACQUIRE);
  if (group_closed (p, v, seq, g))
    {
      drop_reference (v, g);
      return GROUP_CLOSED;
    }
  int r = xp_futex_wait_cp ((int *) &v->g_signals[g], 0, clock, abstime,
                            false);
  drop_reference (v, g);
  if (r != -ETIMEDOUT && r != -ECANCELED)
    return 0;
  xp_cond_protocol_withdraw (p, v, seq, g);
  return r == -ETIMEDOUT ? ETIMEDOUT : XP_COND_WAIT_CANCELLED;
}

static int
await_signal (const struct xp_cond_protocol *p, const struct xp_cond_view *v,
              uint64_t wseq, clockid_t clock, const struct timespec *abstime)
{
  unsigned g = (unsigned) (wseq & 1);
  uint64_t seq = wseq >> 1;
  unsigned *signals = &v->g_signals[g];
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
              return_possible_steal (v, seq, g);
              return 0;
            }
          continue;
        }
      int r = sleep_in_group (p, v, seq, g, clock, abstime);
      if (r == GROUP_CLOSED)
        return 0;
      if (r != 0)
        return r;
      s = __atomic_load_n (signals, __ATOMIC_ACQUIRE);
    }
}

/* ---- the protocol ------------------------------------------------------- */

/* One waiter (position 0, slot 0) still in G2; glibc's signal switches
   groups (G1 starts at 0 in slot 0, G2 is slot 1, orig size 1) and leaves
   one signal (2).  */
static const struct grouped before_signal = {
  .__wseq = 2, .__wrefs = XP_COND_WREFS_WAITER | XP_GLIBC_COND_PSHARED,
};
static const struct grouped after_signal = {
  .__wseq = 3, .__g1_start = 1, .__g1_orig_size = 1 << 2,
  .__wrefs = XP_COND_WREFS_WAITER | XP_GLIBC_COND_PSHARED,
  .__g_signals = { 2, 0 },
};
/* A wait whose deadline passed: the waiter takes position 0 in slot 0
   and withdrawing takes it off G2's size (0 - 1).  */
static const struct grouped before_timeout = {
  .__wrefs = XP_GLIBC_COND_PSHARED,
};
static const struct grouped after_timeout = {
  .__wseq = 2, .__wrefs = XP_GLIBC_COND_PSHARED, .__g_size = { ~0u, 0 },
};

#define AT(field) __builtin_offsetof (struct grouped, field)

const struct xp_cond_protocol xp_cond_grouped = {
  .name = "glibc 2.25 to 2.40 (group references), xpthread's code",
  .off_wseq = AT (__wseq), .off_g1_start = AT (__g1_start),
  .off_g_size = AT (__g_size), .off_orig_size = AT (__g1_orig_size),
  .off_wrefs = AT (__wrefs), .off_g_signals = AT (__g_signals),
  .g1_start_shift = 1,
  .signal_weight = 2,
  .switch_groups = switch_groups,
  .await_signal = await_signal,
  .probe = { &before_signal, &after_signal, &before_timeout, &after_timeout },
};
