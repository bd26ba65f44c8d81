/* The lock validator (lockdep.c): what the lock paths tell it, through
   the lock hooks (lock-hooks.h), when XPTHREAD_LOCKDEP is set.  */
#ifndef XP_DEBUG_LOCKDEP_H
#define XP_DEBUG_LOCKDEP_H

#include "common.h"

/* How an acquisition may wait.  */
#define XP_LD_TRY 1u           /* never blocks: adds no order */
#define XP_LD_READ 2u          /* a read lock of an rwlock */
#define XP_LD_READERS_SHARE 4u /* readers never wait for readers (glibc's
                                  default, reader-preferring rwlock) */
#define XP_LD_SELF_HANGS 8u    /* taking it again while holding it blocks
                                  forever (normal and adaptive mutexes,
                                  spinlocks) */

/* Nonzero when the validator runs; set once at start-up.  */
extern int xp_lockdep_on XP_HIDDEN;

/* Read XPTHREAD_LOCKDEP and its companions; true when it is on.  */
bool xp_lockdep_init (void) XP_HIDDEN;

/* LOCK is about to be taken (and may block) at SITE, the caller's
   address in the program.  Checks the orders before any wait.  */
void xp_lockdep_acquire (const void *lock, unsigned flags, const void *site)
  XP_HIDDEN;
/* LOCK was taken (after xp_lockdep_acquire, or by a successful try).  */
void xp_lockdep_acquired (const void *lock, unsigned flags,
                          const void *site) XP_HIDDEN;
/* LOCK is being released by the caller.  */
void xp_lockdep_release (const void *lock) XP_HIDDEN;
/* The calling thread ends: its list of held locks is reused.  */
void xp_lockdep_thread_exit (void) XP_HIDDEN;
/* LOCK was initialised at SITE / destroyed: a lock at that address is a
   new lock from then on.  */
void xp_lockdep_lock_init (const void *lock, const void *site) XP_HIDDEN;
void xp_lockdep_lock_destroy (const void *lock) XP_HIDDEN;

#endif
