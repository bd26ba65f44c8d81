/* Lock hooks: the one switch through which xpthread's synchronisation
   tells an observer what it does.  Today the observer is valgrind's
   thread checkers (valgrind.c), which cannot see inside xpthread as they
   see inside glibc; the lockdep and contention profiler are meant to hang
   off the same switch, in these inline functions.

   xp_lock_hooks is zero unless an observer was found at start-up; then
   it is XP_LOCK_HOOKS_ON, the sign bit, which no mutex kind has, so that
   the mutex fast paths test it together with the kind: one load more
   (xp_mutex_hooked).  Every hook tests it too, and the synchronisation
   calls hooks off its fast paths or after one test of the switch there.
   Without valgrind's headers at build time the switch is the constant 0
   and every hook compiles away.  */
#ifndef XP_DEBUG_LOCK_HOOKS_H
#define XP_DEBUG_LOCK_HOOKS_H
#include "common.h"

#define XP_LOCK_HOOKS_ON INT32_MIN

#if HAVE_VALGRIND_HELGRIND_H
extern int xp_lock_hooks XP_HIDDEN;
# define XP_LOCK_HOOKS xp_lock_hooks
#else
# define XP_LOCK_HOOKS 0
#endif

/* Finds the observer; true when the process runs under valgrind.  Called
   once, by the mode choice (nptl-compat/mode.c), before any thread.  */
bool xp_lock_hooks_init (void) XP_HIDDEN;

/* The deliveries to valgrind (valgrind.c).  */
void xp_vg_acquired (void *lock, size_t size, bool writer) XP_HIDDEN;
void xp_vg_releasing (void *lock, size_t size, bool writer) XP_HIDDEN;
void xp_vg_send (const void *obj) XP_HIDDEN;
void xp_vg_receive (const void *obj) XP_HIDDEN;
void xp_vg_sync_words (const void *addr, size_t size) XP_HIDDEN;

static inline bool
xp_hooks_on (void)
{
  return xp_unlikely (XP_LOCK_HOOKS != 0);
}

/* A delivery, made when the hooks are on; nothing at all without the
   headers, even unoptimised.  */
#if HAVE_VALGRIND_HELGRIND_H
# define XP_DELIVER(call) do { if (xp_hooks_on ()) call; } while (0)
#else
# define XP_DELIVER(call) do { } while (0)
#endif

/* The word a mutex fast path tests: its KIND (a mutex's __kind, -1 once
   destroyed) with the switch folded in.  Not KIND exactly means the
   hooks are on; a destroyed mutex (all bits set) hides them, and goes to
   its EINVAL without a hook.  */
static inline int
xp_mutex_hooked (int kind)
{
  return kind | XP_LOCK_HOOKS;
}

/* LOCK (SIZE bytes, all of them the lock's own words) was taken, in
   writer (exclusive) or reader mode, or is about to be released.  */
static inline void
xp_hook_acquired (void *lock, size_t size, bool writer)
{
  XP_DELIVER (xp_vg_acquired (lock, size, writer));
}

static inline void
xp_hook_releasing (void *lock, size_t size, bool writer)
{
  XP_DELIVER (xp_vg_releasing (lock, size, writer));
}

/* Everything this thread did before xp_hook_send (OBJ) happens before
   everything another thread does after a later xp_hook_receive (OBJ):
   what a post, a wake-up, a barrier, a thread's exit or a once routine's
   end publishes.  */
static inline void
xp_hook_send (const void *obj)
{
  XP_DELIVER (xp_vg_send (obj));
}

static inline void
xp_hook_receive (const void *obj)
{
  XP_DELIVER (xp_vg_receive (obj));
}

/* [ADDR, ADDR + SIZE) holds synchronisation words, read and written
   concurrently on purpose, by atomic instructions, or xpthread's own
   bookkeeping under an internal lock: not data that a race checker
   should check (it checks neither inside glibc).  */
static inline void
xp_hook_sync_words (const void *addr, size_t size)
{
  XP_DELIVER (xp_vg_sync_words (addr, size));
}

#endif
