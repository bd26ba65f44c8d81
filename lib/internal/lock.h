/* The library's internal lock: a private futex word guarding short critical
   sections (thread list, stack cache, key table).  Not used for anything an
   application can see.

   Word states: 0 unlocked; 1 locked, no waiter; 2 locked, waiters possible.
   lock:   0 -> 1 by CAS; otherwise exchange in 2 and sleep while it is 2.
           Whoever swaps 2 in and finds 0 owns the lock (with 2 kept, which
           at worst costs one needless wake).
   unlock: exchange in 0; if the old value was 2, wake one sleeper.
   No wake-up is lost: a sleeper only sleeps while the word is 2, and any
   unlock that follows a 2 being written issues a wake; FUTEX_WAIT rechecks
   the value atomically with going to sleep.
   xp_lock_unless and xp_lock_within wait the same way, in slices of at
   most a millisecond, and give up (leaving the 2 they wrote, which costs
   the holder's unlock at most a needless wake) once a word they are
   given is no longer 0, or after a number of slices.  */
#ifndef XP_INTERNAL_LOCK_H
#define XP_INTERNAL_LOCK_H

#include "futex.h"

typedef struct { int word; } xp_lock_t;
#define XP_LOCK_INIT { 0 }

void xp_lock_slow (xp_lock_t *lock) XP_HIDDEN;
/* Take LOCK unless *STOP is nonzero while it is held; returns whether
   it took it.  */
bool xp_lock_unless (xp_lock_t *lock, const int *stop) XP_HIDDEN;
/* Take LOCK if it comes free within about MS milliseconds (at least 1);
   returns whether it took it.  */
bool xp_lock_within (xp_lock_t *lock, unsigned ms) XP_HIDDEN;

static inline void
xp_lock (xp_lock_t *lock)
{
  int expected = 0;
  if (xp_unlikely (!xp_cas (&lock->word, &expected, 1)))
    xp_lock_slow (lock);
}

static inline void
xp_unlock (xp_lock_t *lock)
{
  if (xp_unlikely (xp_exchange_release (&lock->word, 0) == 2))
    xp_futex_wake (&lock->word, 1, true);
}

#endif
