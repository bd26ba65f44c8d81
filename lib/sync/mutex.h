/* Mutex internals shared by the mutex and condition variable code.

   pthread_mutex_t keeps glibc's layout and lock-word protocol, so that
   static initialisers mean what they mean with glibc and a process-shared
   mutex can be used by xpthread and glibc processes at once.  */
#ifndef XP_SYNC_MUTEX_H
#define XP_SYNC_MUTEX_H

#include "thread.h"
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <time.h>

/* glibc's __kind: the type in the low bits, then flags.  */
#define XP_MUTEX_TYPE_MASK 3
#define XP_MUTEX_ROBUST 16
#define XP_MUTEX_PRIO_INHERIT 32
#define XP_MUTEX_PRIO_PROTECT 64
#define XP_MUTEX_PSHARED 128
#define XP_MUTEX_ELISION_FLAGS (256 | 512)
/* xpthread's own: a private mutex the contention profiler watches since
   it was first contended (prof.h), whose lock and unlock therefore leave
   the fast paths.  No glibc kind has the bit, and no process but this
   one sees it.  */
#define XP_MUTEX_PROFILED (1 << 20)
/* Kinds with a protocol of their own (mutex-robust.c, mutex-pi.c,
   mutex-pp.c), or watched (mutex.c); the others share the 0/1/2 word of
   mutex.c.  */
#define XP_MUTEX_SPECIAL_KINDS \
  (XP_MUTEX_ROBUST | XP_MUTEX_PRIO_INHERIT | XP_MUTEX_PRIO_PROTECT \
   | XP_MUTEX_PROFILED)

/* glibc's values of __owner for a robust mutex whose owner died.  */
#define XP_MUTEX_INCONSISTENT INT_MAX
#define XP_MUTEX_NOTRECOVERABLE (INT_MAX - 1)

static inline int
xp_mutex_kind (const pthread_mutex_t *m)
{
  return xp_load_relaxed (&m->__data.__kind);
}

static inline bool
xp_mutex_word_protocol (int kind)
{
  return kind >= 0 && (kind & XP_MUTEX_SPECIAL_KINDS) == 0;
}

static inline bool
xp_mutex_private (int kind)
{
  return (kind & XP_MUTEX_PSHARED) == 0;
}

/* The mutex's spin state (spin-policy.h), in __spins, where glibc keeps
   the spin estimate of its adaptive kind.  */
static inline unsigned short *
xp_mutex_spin_state (pthread_mutex_t *m)
{
  return (unsigned short *) &m->__data.__spins;
}

/* The 16-bit word after __spins: glibc's lock-elision state up to 2.42
   (__elision), unused from 2.43, which removed elision and renamed it
   (__glibc_reserved).  The place is ABI and every release keeps it; the
   name is not, so it is reached from __spins.  xpthread, which does no
   elision, keeps a private mutex's hold estimate there.  */
static inline short *
xp_mutex_after_spins (pthread_mutex_t *m)
{
  return (short *) ((char *) m + offsetof (pthread_mutex_t, __data.__spins)
                    + sizeof (short));
}

/* Lock after a condition wait: spin for it first (its holder is usually
   the signaller, about to release it), unless SIGNALLER_HERE: the
   signaller ran on the caller's CPU, and cannot release the mutex while
   the caller spins there.  Other waiters may be asleep on the word, so
   take it in the "waiters" state and let the unlock wake them.  The
   robust, PI and PP kinds relock as their lock does, whose protocols
   keep waiters announced anyway; a robust relock may so answer
   EOWNERDEAD (mutex held) or ENOTRECOVERABLE (not held).  SITE: the
   condition wait's, for the profiler.  */
int xp_mutex_relock_after_wait (pthread_mutex_t *m, const void *site,
                                bool signaller_here) XP_HIDDEN;


/* Robust mutexes without priority inheritance (mutex-robust.c).  Lock
   also serves the relock after a condition wait, and may then return
   EOWNERDEAD or ENOTRECOVERABLE too.  */
int xp_mutex_robust_lock (pthread_mutex_t *m, int kind, clockid_t clock,
                          const struct timespec *abstime) XP_HIDDEN;
int xp_mutex_robust_trylock (pthread_mutex_t *m, int kind) XP_HIDDEN;
int xp_mutex_robust_unlock (pthread_mutex_t *m, int kind) XP_HIDDEN;
/* pthread_mutex_destroy of a robust mutex (PI or not) whose lock word,
   without a priority ceiling, reads word: 0 or EBUSY.  */
int xp_mutex_robust_destroy (pthread_mutex_t *m, int kind, int word)
  XP_HIDDEN;
/* Any robust mutex, priority inheritance or not.  */
int xp_mutex_robust_consistent (pthread_mutex_t *m) XP_HIDDEN;

/* Priority-inheritance mutexes, robust or not (mutex-pi.c).  */
int xp_mutex_pi_lock (pthread_mutex_t *m, int kind, clockid_t clock,
                      const struct timespec *abstime) XP_HIDDEN;
int xp_mutex_pi_trylock (pthread_mutex_t *m, int kind) XP_HIDDEN;
int xp_mutex_pi_unlock (pthread_mutex_t *m, int kind) XP_HIDDEN;
bool xp_mutex_pi_supported (void) XP_HIDDEN;

/* Priority-protection mutexes (mutex-pp.c).  The ceiling sits in the
   lock word where glibc keeps it.  */
#define XP_MUTEX_CEILING_SHIFT 19
#define XP_MUTEX_CEILING_MASK 0xfff80000u
int xp_mutex_pp_lock (pthread_mutex_t *m, int kind, clockid_t clock,
                      const struct timespec *abstime) XP_HIDDEN;
int xp_mutex_pp_trylock (pthread_mutex_t *m, int kind) XP_HIDDEN;
int xp_mutex_pp_unlock (pthread_mutex_t *m, int kind) XP_HIDDEN;
int xp_mutex_pp_getprioceiling (const pthread_mutex_t *m) XP_HIDDEN;
int xp_mutex_pp_setprioceiling (pthread_mutex_t *m, int kind, int ceiling,
                                int *old_ceiling) XP_HIDDEN;

#endif
