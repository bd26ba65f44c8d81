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
#define XP_LD_STAMPED 16u      /* a mutex whose __list.__prev lockdep may
                                  keep (not robust): see stamp_of */
#define XP_LD_OWNER_CHECKED 32u /* released by a thread that does not hold
                                  it, it answers EPERM (errorcheck,
                                  recursive and robust mutexes) */

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
/* LOCK, of FLAGS, is being released by the caller.  */
void xp_lockdep_release (const void *lock, unsigned flags) XP_HIDDEN;
/* The calling thread THREAD starts running ROUTINE, or ends (its list of
   held locks is then reused; DETACHED: nobody will join it).  A thread
   holds its own end from its start: joining it waits for that end, as
   taking a lock waits for its release.  */
void xp_lockdep_thread_start (const void *thread, const void *routine)
  XP_HIDDEN;
/* The creator of THREAD, which will run ROUTINE: a join may come before
   the thread starts.  */
void xp_lockdep_thread_created (const void *thread, const void *routine)
  XP_HIDDEN;
void xp_lockdep_thread_exit (const void *thread, bool detached) XP_HIDDEN;
/* A wait on COND releases MUTEX at SITE: warn of the other locks held.  */
void xp_lockdep_cond_wait (const void *cond, const void *mutex,
                           const void *site) XP_HIDDEN;
/* LOCK was initialised at SITE / destroyed: a lock at that address is a
   new lock from then on.  */
void xp_lockdep_lock_init (const void *lock, unsigned flags,
                           const void *site) XP_HIDDEN;
void xp_lockdep_lock_destroy (const void *lock) XP_HIDDEN;
/* The caller is about to destroy LOCK (whether or not that succeeds).  */
void xp_lockdep_destroying (const void *lock) XP_HIDDEN;

#endif
