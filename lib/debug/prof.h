/* The contention profiler (prof.c), switched on by XPTHREAD_PROF: what
   the lock paths tell it.  A lock is profiled from its first contended
   acquisition on; until then it costs nothing.  Every call tests
   xp_prof_on first, and the lock paths call only on their slow paths or
   behind the lock hooks' switch, so that the fast paths are the same
   with the profiler off.  */
#ifndef XP_DEBUG_PROF_H
#define XP_DEBUG_PROF_H

#include "common.h"

/* What a row of the report counts.  */
enum xp_prof_kind
{
  XP_PROF_MUTEX,
  XP_PROF_READ,             /* an rwlock's read side */
  XP_PROF_WRITE,            /* its write side */
  XP_PROF_COND,
  XP_PROF_SEM,
  XP_PROF_BARRIER,
  XP_PROF_SPIN,
  XP_PROF_KINDS
};

/* Nonzero when the profiler runs; set once at start-up.  */
extern int xp_prof_on XP_HIDDEN;

static inline bool
xp_prof_active (void)
{
  return xp_unlikely (xp_prof_on != 0);
}

struct xp_prof_lock;
struct xp_prof_entry;

/* Whether an exclusive lock's new owner is another thread than its last,
   for the count of owner changes.  */
enum xp_prof_owner
{
  XP_PROF_OWNER_UNKNOWN,    /* the profiler's record keeps the last owner */
  XP_PROF_OWNER_KEPT,
  XP_PROF_OWNER_CHANGED
};

/* WORD keeps the token of a lock's last owner, and only this function
   writes it: a word of the lock's own that nothing else uses (a
   mutex's), swapped right after the lock is taken, while the line is
   the owner's (later in the critical section a waiter has often taken
   the line away), or the profiler's record of the lock.  */
static inline enum xp_prof_owner
xp_prof_owner_swap (const void **word)
{
  const void *me = xp_thread_pointer ();
  if (xp_load_relaxed (word) == me)
    return XP_PROF_OWNER_KEPT;
  xp_store_relaxed (word, me);
  return XP_PROF_OWNER_CHANGED;
}

/* A wait in progress, on the waiter's stack.  */
struct xp_prof_wait
{
  struct xp_prof_lock *lock;        /* NULL: not recorded */
  struct xp_prof_entry *entry;
  const void *held_by;              /* the owner's acquire site */
  enum xp_prof_owner owner;         /* set by the caller once acquired */
  uint64_t start;                   /* 0: not timed from its start */
  uint64_t asleep;                  /* 0: not timed from a sleep */
  uint64_t woke;                    /* the last wake from a sleep, or 0 */
  unsigned rounds;                  /* a spin's, for its estimate */
};

/* Read XPTHREAD_PROF and its companions; true when it is on.  */
bool xp_prof_init (void) XP_HIDDEN;

/* LOCK, of KIND, was found taken at SITE: the wait W begins.  */
void xp_prof_wait_begin (struct xp_prof_wait *w, const void *lock,
                         enum xp_prof_kind kind, const void *site) XP_HIDDEN;
/* The same for a mutex whose waiter spins first: most such waits end
   in the spin after a fraction of a microsecond, where reading the
   clock twice would be most of what the wait costs, inside the critical
   section that follows.  Such a wait is timed 1 in XP_PROF_SPIN_TIMED;
   the others are estimated from the rounds they spun, at the pace the
   timed ones of the thread showed; a wait that goes on to sleep is
   timed from the sleep on (xp_prof_spin_ended) to its last wake
   (xp_prof_woke), both before the lock is taken.  */
void xp_prof_spin_wait_begin (struct xp_prof_wait *w, const void *lock,
                              const void *site) XP_HIDDEN;
#define XP_PROF_SPIN_TIMED 16
/* The spin of W took ROUNDS (xp_spin_for_word); SLEEPS: the caller goes
   on to sleep.  */
void xp_prof_spin_ended (struct xp_prof_wait *w, unsigned rounds,
                         bool sleeps) XP_HIDDEN;
/* The sleeper of W was woken, and tries for the lock again, or its
   deadline passed.  */
void xp_prof_woke (struct xp_prof_wait *w) XP_HIDDEN;
/* It ended; ACQUIRED: with the lock taken (else an error, a timeout).
   Counts the acquisition, its contention and its wait; W->owner as
   xp_prof_acquired's OWNER, where the caller swapped an owner word.  */
void xp_prof_wait_end (struct xp_prof_wait *w, bool acquired) XP_HIDDEN;
/* LOCK was taken at SITE without a wait: counted once it is profiled.
   OWNER: xp_prof_owner_swap's answer, where the lock has such a word.  */
void xp_prof_acquired (const void *lock, enum xp_prof_kind kind,
                       const void *site, enum xp_prof_owner owner) XP_HIDDEN;
/* The same for a mutex.  Returns 0, pthread_mutex_lock's answer, so
   that the caller can end with a tail call.  */
int xp_prof_mutex_acquired (const void *lock, const void *site,
                            enum xp_prof_owner owner) XP_HIDDEN;

/* A try of LOCK at SITE found it taken: contention without a wait.  */
void xp_prof_busy (const void *lock, enum xp_prof_kind kind,
                   const void *site) XP_HIDDEN;
/* How many holds the calling thread is timing now (prof.c): its releases
   tell the profiler only while there is one, without a call.  */
extern __thread unsigned xp_prof_holds_timed
  __attribute__ ((tls_model ("initial-exec"))) XP_HIDDEN;
void xp_prof_timed_release (const void *lock) XP_HIDDEN;

/* The caller releases LOCK (its hold ends, if it was timed).  LOCK is
   not read.  */
static inline void
xp_prof_releasing (const void *lock)
{
  if (xp_unlikely (xp_prof_holds_timed != 0))
    xp_prof_timed_release (lock);
}
/* LOCK was initialised at SITE: a new lock at that address.  */
void xp_prof_lock_init (const void *lock, const void *site) XP_HIDDEN;
/* COND was signalled (or broadcast) at SITE; WOKE: a waiter was there.  */
void xp_prof_signalled (const void *cond, const void *site, bool broadcast,
                        bool woke) XP_HIDDEN;
/* The calling thread ends: its counts stay, its memory is reused.  */
void xp_prof_thread_exit (void) XP_HIDDEN;
/* A thread is about to be created: the reporter thread starts first.  */
void xp_prof_thread_creating (void) XP_HIDDEN;

#endif
