/* The deliveries of the lock hooks to their observers: valgrind's
   thread checkers when the process runs under one of them, the lock
   validator when XPTHREAD_LOCKDEP asks for it, the contention profiler
   when XPTHREAD_PROF does.  */
#include "lock-hooks.h"
#include "prof.h"
#include "valgrind.h"

int xp_lock_hooks;
int xp_sync_hooks;
bool xp_under_valgrind;
static bool valgrind_observes;

/* A delivery to valgrind; none without its headers.  */
#if HAVE_VALGRIND_HELGRIND_H
# define TO_VALGRIND(call) do { if (valgrind_observes) call; } while (0)
#else
# define TO_VALGRIND(call) ((void) sizeof ((call), 0))
#endif

bool
xp_lock_hooks_init (void)
{
  xp_under_valgrind = xp_vg_init (&valgrind_observes);
  bool lockdep = xp_lockdep_init ();
  bool prof = xp_prof_init ();
  xp_lock_hooks = valgrind_observes || lockdep ? XP_LOCK_HOOKS_ON : 0;
  xp_sync_hooks = xp_lock_hooks != 0 || prof ? XP_LOCK_HOOKS_ON : 0;
  return xp_under_valgrind;
}

void
xp_hooks_acquiring (const void *lock, unsigned flags, const void *site)
{
  if (xp_lockdep_on)
    xp_lockdep_acquire (lock, flags, site);
}

void
xp_hooks_acquired (void *lock, size_t size, unsigned flags, const void *site)
{
  TO_VALGRIND (xp_vg_acquired (lock, size, !(flags & XP_LD_READ)));
  if (xp_lockdep_on)
    xp_lockdep_acquired (lock, flags, site);
}

void
xp_hooks_releasing (void *lock, size_t size, unsigned flags)
{
  TO_VALGRIND (xp_vg_releasing (lock, size, !(flags & XP_LD_READ)));
  if (xp_lockdep_on)
    xp_lockdep_release (lock, flags);
  xp_prof_releasing (lock);
}

void
xp_hooks_lock_init (const void *lock, unsigned flags, const void *site)
{
  if (xp_lockdep_on)
    xp_lockdep_lock_init (lock, flags, site);
  xp_prof_lock_init (lock, site);
}

void
xp_hooks_lock_destroy (const void *lock)
{
  if (xp_lockdep_on)
    xp_lockdep_lock_destroy (lock);
}

void
xp_hooks_destroying (const void *lock)
{
  if (xp_lockdep_on)
    xp_lockdep_destroying (lock);
}

void
xp_hooks_thread_start (const void *thread, const void *routine)
{
  if (xp_lockdep_on)
    xp_lockdep_thread_start (thread, routine);
}

void
xp_hooks_thread_created (const void *thread, const void *routine)
{
  if (xp_lockdep_on)
    xp_lockdep_thread_created (thread, routine);
}

void
xp_hooks_thread_exit (const void *thread, bool detached)
{
  if (xp_lockdep_on)
    xp_lockdep_thread_exit (thread, detached);
  xp_prof_thread_exit ();
}

void
xp_hooks_cond_wait (const void *cond, const void *mutex, const void *site)
{
  if (xp_lockdep_on)
    xp_lockdep_cond_wait (cond, mutex, site);
}

void
xp_hooks_send (const void *obj)
{
  TO_VALGRIND (xp_vg_send (obj));
}

void
xp_hooks_receive (const void *obj)
{
  TO_VALGRIND (xp_vg_receive (obj));
}

void
xp_hooks_sync_words (const void *addr, size_t size)
{
  TO_VALGRIND (xp_vg_sync_words (addr, size));
}
