/* Lock hooks: the one switch through which xpthread's synchronisation
   tells its observers what it does.  The observers: valgrind's thread
   checkers (valgrind.c), which cannot see inside xpthread as they see
   inside glibc, and the lock validator (lockdep.c); the contention
   profiler is meant to hang off the same switch.

   xp_lock_hooks is zero unless an observer was found at start-up; then
   it is XP_LOCK_HOOKS_ON, the sign bit, which no mutex kind has, so that
   the mutex fast paths test it together with the kind: one load more
   (xp_mutex_hooked).  Every hook tests it too, and the synchronisation
   calls hooks off its fast paths or after one test of the switch there;
   the deliveries (lock-hooks.c) are out of line.  */
#ifndef XP_DEBUG_LOCK_HOOKS_H
#define XP_DEBUG_LOCK_HOOKS_H
#include "common.h"
#include "lockdep.h"

#define XP_LOCK_HOOKS_ON INT32_MIN

extern int xp_lock_hooks XP_HIDDEN;
extern int xp_sync_hooks XP_HIDDEN;

/* Finds the observers; true when the process runs under valgrind.
   Called once, by the library's constructor (lib/thread/init.c), before
   any thread and before the mode is chosen.  */
bool xp_lock_hooks_init (void) XP_HIDDEN;
/* Its answer, for the spin policy: valgrind runs the threads one at a
   time.  */
extern bool xp_under_valgrind XP_HIDDEN;

/* The deliveries (lock-hooks.c).  */
void xp_hooks_acquiring (const void *lock, unsigned flags, const void *site)
  XP_HIDDEN;
void xp_hooks_acquired (void *lock, size_t size, unsigned flags,
                        const void *site) XP_HIDDEN;
void xp_hooks_releasing (void *lock, size_t size, unsigned flags)
  XP_HIDDEN;
void xp_hooks_lock_init (const void *lock, unsigned flags, const void *site)
  XP_HIDDEN;
void xp_hooks_lock_destroy (const void *lock) XP_HIDDEN;
void xp_hooks_destroying (const void *lock) XP_HIDDEN;
void xp_hooks_thread_start (const void *thread, const void *routine)
  XP_HIDDEN;
void xp_hooks_thread_created (const void *thread, const void *routine)
  XP_HIDDEN;
void xp_hooks_thread_exit (const void *thread, bool detached) XP_HIDDEN;
void xp_hooks_cond_wait (const void *cond, const void *mutex,
                         const void *site) XP_HIDDEN;
void xp_hooks_send (const void *obj) XP_HIDDEN;
void xp_hooks_receive (const void *obj) XP_HIDDEN;
void xp_hooks_sync_words (const void *addr, size_t size) XP_HIDDEN;

static inline bool
xp_hooks_on (void)
{
  return xp_unlikely (xp_sync_hooks != 0);
}

/* The word a mutex fast path tests: its KIND (a mutex's __kind, -1 once
   destroyed) with the switch folded in.  Not KIND exactly means the
   hooks are on; a destroyed mutex (all bits set) hides them, and goes to
   its EINVAL without a hook.  */
static inline int
xp_mutex_hooked (int kind)
{
  return kind | xp_lock_hooks;
}

/* The program's call into xpthread, for the hooks that name a site:
   used in the exported function itself.  */
#define XP_CALLER_SITE() __builtin_return_address (0)

/* LOCK may block: FLAGS (XP_LD_*) say how.  Told before any wait, so
   that a deadlock is reported before it happens.  */
static inline void
xp_hook_acquiring (const void *lock, unsigned flags, const void *site)
{
  if (xp_hooks_on ())
    xp_hooks_acquiring (lock, flags, site);
}

/* LOCK (SIZE bytes, all of them the lock's own words) was taken, for
   reading when FLAGS has XP_LD_READ, or is about to be released.  */
static inline void
xp_hook_acquired (void *lock, size_t size, unsigned flags, const void *site)
{
  if (xp_hooks_on ())
    xp_hooks_acquired (lock, size, flags, site);
}

static inline void
xp_hook_releasing (void *lock, size_t size, unsigned flags)
{
  if (xp_hooks_on ())
    xp_hooks_releasing (lock, size, flags);
}

/* LOCK, of FLAGS (XP_LD_*), was initialised at SITE, or destroyed.  */
static inline void
xp_hook_lock_init (const void *lock, unsigned flags, const void *site)
{
  if (xp_hooks_on ())
    xp_hooks_lock_init (lock, flags, site);
}

static inline void
xp_hook_lock_destroy (const void *lock)
{
  if (xp_hooks_on ())
    xp_hooks_lock_destroy (lock);
}

/* LOCK is about to be destroyed, which may fail (EBUSY): the validator
   complains of a lock the caller holds.  */
static inline void
xp_hook_destroying (const void *lock)
{
  if (xp_hooks_on ())
    xp_hooks_destroying (lock);
}

/* THREAD is about to be started to run ROUTINE; the calling thread
   THREAD starts running it; or it is ending, and takes no more locks
   (DETACHED: nobody will join it).  */
static inline void
xp_hook_thread_created (const void *thread, void *(*routine) (void *))
{
  if (xp_hooks_on ())
    xp_hooks_thread_created (thread, (const void *) routine);
}

static inline void
xp_hook_thread_start (const void *thread, void *(*routine) (void *))
{
  if (xp_hooks_on ())
    xp_hooks_thread_start (thread, (const void *) routine);
}

static inline void
xp_hook_thread_exit (const void *thread, bool detached)
{
  if (xp_hooks_on ())
    xp_hooks_thread_exit (thread, detached);
}

/* A wait on COND, called at SITE, is about to release MUTEX.  */
static inline void
xp_hook_cond_wait (const void *cond, const void *mutex, const void *site)
{
  if (xp_hooks_on ())
    xp_hooks_cond_wait (cond, mutex, site);
}

/* Everything this thread did before xp_hook_send (OBJ) happens before
   everything another thread does after a later xp_hook_receive (OBJ):
   what a post, a wake-up, a barrier, a thread's exit or a once routine's
   end publishes.  */
static inline void
xp_hook_send (const void *obj)
{
  if (xp_hooks_on ())
    xp_hooks_send (obj);
}

static inline void
xp_hook_receive (const void *obj)
{
  if (xp_hooks_on ())
    xp_hooks_receive (obj);
}

/* [ADDR, ADDR + SIZE) holds synchronisation words, read and written
   concurrently on purpose, by atomic instructions, or xpthread's own
   bookkeeping under an internal lock: not data that a race checker
   should check (it checks neither inside glibc).  */
static inline void
xp_hook_sync_words (const void *addr, size_t size)
{
  if (xp_hooks_on ())
    xp_hooks_sync_words (addr, size);
}

#endif
