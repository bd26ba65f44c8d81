/* Thin futex(2) wrappers.  Results are the kernel's (0 or -errno).  A
   thread asleep in a wait is marked away (away.h).  */
#ifndef XP_INTERNAL_FUTEX_H
#define XP_INTERNAL_FUTEX_H

#include "away.h"
#include "common.h"
#include <errno.h>
#include <linux/futex.h>
#include <time.h>

/* Wait while *word == expected.  private_ selects FUTEX_PRIVATE_FLAG: only
   words the kernel itself wakes (the CLONE_CHILD_CLEARTID tid word) or
   words shared between processes need a shared wait.  */
static inline int
xp_futex_wait (int *word, int expected, bool private_)
{
  int op = FUTEX_WAIT | (private_ ? FUTEX_PRIVATE_FLAG : 0);
  int tid = xp_away_begin ();
  int r = (int) xp_syscall4 (SYS_futex, word, op, expected, 0);
  xp_away_end (tid);
  return r;
}

/* The same, for at most TIMEOUT (relative).  */
static inline int
xp_futex_wait_for (int *word, int expected, const struct timespec *timeout,
                   bool private_)
{
  int op = FUTEX_WAIT | (private_ ? FUTEX_PRIVATE_FLAG : 0);
  int tid = xp_away_begin ();
  int r = (int) xp_syscall4 (SYS_futex, word, op, expected, timeout);
  xp_away_end (tid);
  return r;
}

/* Wait with an absolute timeout measured on clock (CLOCK_REALTIME or
   CLOCK_MONOTONIC); abstime NULL waits for ever.  */
static inline int
xp_futex_wait_abs (int *word, int expected, clockid_t clock,
                   const struct timespec *abstime, bool private_)
{
  int op = FUTEX_WAIT_BITSET | (private_ ? FUTEX_PRIVATE_FLAG : 0)
           | (clock == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
  int tid = xp_away_begin ();
  int r = (int) xp_syscall6 (SYS_futex, (long) word, op, expected,
                             (long) abstime, 0, FUTEX_BITSET_MATCH_ANY);
  xp_away_end (tid);
  return r;
}

/* A deadline a wait that must sleep cannot use: EINVAL for a malformed
   one, ETIMEDOUT for one before the epoch (the kernel refuses negative
   times), else 0; NULL waits for ever.  */
static inline int
xp_check_abstime (const struct timespec *abstime)
{
  if (abstime == NULL)
    return 0;
  if (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000)
    return EINVAL;
  return abstime->tv_sec < 0 ? ETIMEDOUT : 0;
}

static inline int
xp_futex_wake (int *word, int count, bool private_)
{
  int op = FUTEX_WAKE | (private_ ? FUTEX_PRIVATE_FLAG : 0);
  return (int) xp_syscall3 (SYS_futex, (long) word, op, count);
}

#endif
