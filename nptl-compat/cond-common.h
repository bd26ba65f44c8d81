/* The process-shared condition variable protocols of glibc, as one engine
   (cond-common.c) and what differs per release range: glibc 2.25 to 2.40
   (cond-grouped.c) and 2.41 and later (cond-relative.c).

   What they share.  Waiters take consecutive positions in a 64-bit
   sequence, which two groups in two slots share: G1, the older group,
   receives signals until each of its waiters got one; G2 collects new
   waiters.  When G1 is used up and a signal finds waiters in G2, the
   signaller turns G2 into the new G1 and the emptied slot into the new G2
   (switch_groups, per release).  Fields, with the same meaning in both:

   __wseq          (next position << 1) | slot of G2.  Waiters add 2
                   (holding the mutex); a group switch flips bit 0.
   __g1_start      first position of G1, shifted by g1_start_shift; grows
                   only, under the internal lock; read by waiters.
   __g1_orig_size  (size of G1 when it became G1 << 2) | internal lock:
                   0 free, 1 held, 2 held and someone sleeps on it; a
                   futex word, the lock's sleepers wait for it to change.
   __wrefs         (waiters inside a wait call << 3) | 4 destroy sleeps on
                   it | 2 clock is CLOCK_MONOTONIC | 1 process-shared.
   __g_size[s]     waiters of slot s not signalled yet (G1); for G2 zero
                   minus its waiters that gave up, unsigned arithmetic.
   __g_signals[s]  signals sent to slot s, signal_weight each; the futex
                   word waiters of slot s sleep on (per release).

   Transitions the engine makes:
     wait      take a position, count itself in __wrefs, unlock the
               mutex; await a signal (per release); leave __wrefs (waking
               destroy) and re-lock the mutex.
     signal    under the lock: if G1 has unsignalled waiters, add one
               signal to G1 and decrement its size; else switch groups if
               G2 has waiters and signal the new G1; wake one sleeper.
     broadcast under the lock: signal every waiter of G1 and wake them,
               switch groups, signal every waiter of the new G1; wake
               all sleepers.
     timeout or cancel  under the lock shrink the waiter's group; if the
               group was already signalled in full, the waiter consumed a
               signal meant for another, so it sends a replacement.
     destroy   EBUSY while waiters are owed a signal; else wait until
               every waiter left __wrefs.

   No wake-up of the internal lock is lost: a waiter sleeps only while the
   word reads "held, sleeper announced" (FUTEX_WAIT compares), and the
   holder's release clears the lock bits and wakes when it took 2 out.
   The same holds for destroy on __wrefs: it sleeps only while the word
   still counts waiters with bit 4 set, and the last leaver sees bit 4.
   Why a waiter's sleep on __g_signals loses no signal is per release.  */
#ifndef XP_NPTL_COMPAT_COND_COMMON_H
#define XP_NPTL_COMPAT_COND_COMMON_H

#include "glibc-cond.h"

#define XP_COND_WREFS_WAITER 8u
/* More waiters than this in one group: a broadcast starts afresh.  */
#define XP_COND_MAX_GROUP_SIZE (1u << 29)

/* The fields of one condition variable.  */
struct xp_cond_view
{
  pthread_cond_t *cond;
  uint64_t *wseq;
  uint64_t *g1_start;
  unsigned *g_size;             /* [2] */
  unsigned *orig_size;
  unsigned *wrefs;
  unsigned *g_signals;          /* [2] */
};

/* An await_signal's outcome besides 0 and ETIMEDOUT.  */
#define XP_COND_WAIT_CANCELLED (-1)

struct xp_cond_protocol
{
  const char *name;
  /* Byte offsets of the fields in pthread_cond_t.  */
  unsigned off_wseq, off_g1_start, off_g_size, off_orig_size, off_wrefs,
    off_g_signals;
  /* __g1_start holds G1's first position shifted left by this.  */
  unsigned g1_start_shift;
  /* One signal adds this to __g_signals.  */
  unsigned signal_weight;
  /* G1 (slot *g1) has no unsignalled waiter left.  If G2 has waiters,
     make it the new G1, ending at position next; returns whether the
     new G1 has waiters to signal.  The internal lock is held.  */
  bool (*switch_groups) (const struct xp_cond_view *, uint64_t next,
                         unsigned *g1);
  /* Wait for a signal for the waiter at wseq (as __wseq read): 0, or
     ETIMEDOUT or XP_COND_WAIT_CANCELLED once it withdrew.  */
  int (*await_signal) (const struct xp_cond_protocol *,
                       const struct xp_cond_view *, uint64_t wseq,
                       clockid_t, const struct timespec *);
  /* How glibc's own functions must behave if it runs this protocol.  */
  struct xp_glibc_cond_probe probe;
};

/* The release ranges' protocols.  */
extern const struct xp_cond_protocol xp_cond_grouped XP_HIDDEN;  /* 2.25-2.40 */
extern const struct xp_cond_protocol xp_cond_relative XP_HIDDEN; /* 2.41- */

void xp_cond_view (const struct xp_cond_protocol *, pthread_cond_t *,
                   struct xp_cond_view *) XP_HIDDEN;

/* The engine.  */
void xp_cond_protocol_init (const struct xp_cond_protocol *,
                            pthread_cond_t *, bool monotonic) XP_HIDDEN;
int xp_cond_protocol_destroy (const struct xp_cond_protocol *,
                              pthread_cond_t *) XP_HIDDEN;
int xp_cond_protocol_signal (const struct xp_cond_protocol *,
                             pthread_cond_t *) XP_HIDDEN;
int xp_cond_protocol_broadcast (const struct xp_cond_protocol *,
                                pthread_cond_t *) XP_HIDDEN;
int xp_cond_protocol_wait (const struct xp_cond_protocol *,
                           pthread_cond_t *, pthread_mutex_t *, clockid_t,
                           const struct timespec *) XP_HIDDEN;
/* For await_signal: the waiter at position seq in slot g stops waiting
   without a signal (timeout or cancel).  */
void xp_cond_protocol_withdraw (const struct xp_cond_protocol *,
                                const struct xp_cond_view *, uint64_t seq,
                                unsigned g) XP_HIDDEN;

/* For switch_groups and await_signal.  Every futex word here may be
   shared with another process.  */
void xp_cond_wake (unsigned *word, int count) XP_HIDDEN;
void xp_cond_sleep (unsigned *word, unsigned value) XP_HIDDEN;
unsigned xp_cond_orig_size (const struct xp_cond_view *) XP_HIDDEN;
/* With the lock held.  */
void xp_cond_set_orig_size (const struct xp_cond_view *, unsigned size)
  XP_HIDDEN;
/* G1's first position.  */
uint64_t xp_cond_g1_start (const struct xp_cond_protocol *,
                           const struct xp_cond_view *) XP_HIDDEN;

#endif
