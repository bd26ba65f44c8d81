/* What the process-shared condition variable protocols of glibc 2.25 to
   2.40 (cond-grouped.c) and of 2.41 and later (cond-relative.c) do alike,
   on the fields both keep with the same meaning:

   __g1_orig_size  (size of G1 when it became G1 << 2) | internal lock:
                   0 free, 1 held, 2 held and someone sleeps on it; a
                   futex word, the lock's sleepers wait for it to change.
   __wrefs         (waiters inside a wait call << 3) | 4 destroy sleeps on
                   it | 2 clock is CLOCK_MONOTONIC | 1 process-shared; the
                   last waiter to leave wakes destroy if bit 4 says so.

   No wake-up of the internal lock is lost: a waiter sleeps only while the
   word reads "held, sleeper announced" (FUTEX_WAIT compares), and the
   holder's release clears the lock bits and wakes when it took 2 out.
   The same holds for destroy on __wrefs: it sleeps only while the word
   still counts waiters with bit 4 set, and the last leaver sees bit 4.  */
#ifndef XP_NPTL_COMPAT_COND_COMMON_H
#define XP_NPTL_COMPAT_COND_COMMON_H

#include "common.h"

#define XP_COND_WREFS_WAITER 8u
#define XP_COND_WREFS_DESTROY_SLEEPS 4u
/* More waiters than this in one group: a broadcast starts afresh.  */
#define XP_COND_MAX_GROUP_SIZE (1u << 29)

/* Every futex word of these may be shared with another process.  */
void xp_cond_wake (unsigned *word, int count) XP_HIDDEN;
void xp_cond_sleep (unsigned *word, unsigned value) XP_HIDDEN;

void xp_cond_lock (unsigned *orig_size) XP_HIDDEN;
void xp_cond_unlock (unsigned *orig_size) XP_HIDDEN;
unsigned xp_cond_orig_size (unsigned *orig_size) XP_HIDDEN;
/* With the lock held.  */
void xp_cond_set_orig_size (unsigned *orig_size, unsigned size) XP_HIDDEN;

/* With the lock held: the waiter at position seq stops waiting without
   a signal (timeout, cancel, or an error unlocking the mutex).  start is
   G1's first position, size the remaining size of the waiter's slot.  */
enum xp_cond_withdrawal
{
  XP_COND_SHRUNK,               /* its group is one smaller */
  XP_COND_TOOK_SIGNAL,          /* its group was signalled in full: it
                                   must send a replacement signal */
  XP_COND_OVERFLOW              /* G2 too large: broadcast instead */
};
enum xp_cond_withdrawal xp_cond_withdraw (uint64_t start, unsigned orig_size,
                                          uint64_t seq, unsigned *size)
  XP_HIDDEN;

/* With the lock held: waiters still owed a signal, the rest of G1 and all
   of G2.  next: the next waiter's position; g2: G2's slot.  */
unsigned xp_cond_unsignalled (uint64_t next, unsigned g2, uint64_t start,
                              unsigned orig_size, const unsigned size[2])
  XP_HIDDEN;

/* A waiter leaves the wait call.  */
void xp_cond_leave (unsigned *wrefs) XP_HIDDEN;
/* destroy: wait until every waiter left.  */
void xp_cond_await_leavers (unsigned *wrefs) XP_HIDDEN;

#endif
