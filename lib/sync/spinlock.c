/* Spinlocks, in glibc's representation (nptl-compat/sync-layout.h), so
   that a process-shared spinlock means the same to a glibc process.

   lock:    exchange in LOCKED; if the old value was UNLOCKED the lock is
            ours, else spin reading the word (no bus locking while it is
            held) until it reads UNLOCKED, and exchange again.
   unlock:  store UNLOCKED with release ordering.
   A spinlock never sleeps; that is what the caller asked for.  glibc
   accepts any pshared value, and so does pthread_spin_init here.  */
#define _GNU_SOURCE
#include "export.h"
#include "lock-hooks.h"
#include "prof.h"
#include "sync-layout.h"
#include <errno.h>

_Static_assert (sizeof (pthread_spinlock_t) == sizeof (int),
                "pthread_spinlock_t is an int");

int
pthread_spin_init (pthread_spinlock_t *lock, int pshared)
{
  xp_store_release (lock, XP_SPIN_UNLOCKED);
  xp_hook_lock_init ((void *) lock, 0, XP_CALLER_SITE ());
  return 0;
}
XP_EXPORT (pthread_spin_init)

int
pthread_spin_destroy (pthread_spinlock_t *lock)
{
  xp_hook_destroying ((void *) lock);
  xp_hook_lock_destroy ((void *) lock);
  return 0;
}
XP_EXPORT (pthread_spin_destroy)

/* The lock was found taken: spin for it, timed by the profiler.  */
static __attribute__ ((noinline)) void
spin_for (pthread_spinlock_t *lock, const void *site)
{
  struct xp_prof_wait wait;
  xp_prof_wait_begin (&wait, (void *) lock, XP_PROF_SPIN, site);
  do
    while (xp_load_relaxed (lock) != XP_SPIN_UNLOCKED)
      xp_cpu_relax ();
  while (xp_exchange_acquire (lock, XP_SPIN_LOCKED) != XP_SPIN_UNLOCKED);
  xp_prof_wait_end (&wait, true);
}

int
pthread_spin_lock (pthread_spinlock_t *lock)
{
  xp_hook_acquiring ((void *) lock, XP_LD_SELF_HANGS, XP_CALLER_SITE ());
  if (xp_exchange_acquire (lock, XP_SPIN_LOCKED) != XP_SPIN_UNLOCKED)
    spin_for (lock, XP_CALLER_SITE ());
  else if (xp_prof_active ())
    xp_prof_acquired ((void *) lock, XP_PROF_SPIN, XP_CALLER_SITE (),
                      XP_PROF_OWNER_UNKNOWN);
  xp_hook_acquired ((void *) lock, sizeof *lock, XP_LD_SELF_HANGS,
                    XP_CALLER_SITE ());
  return 0;
}
XP_EXPORT (pthread_spin_lock)

int
pthread_spin_trylock (pthread_spinlock_t *lock)
{
  int expected = XP_SPIN_UNLOCKED;
  if (!xp_cas (lock, &expected, XP_SPIN_LOCKED))
    {
      if (xp_prof_active ())
        xp_prof_busy ((void *) lock, XP_PROF_SPIN, XP_CALLER_SITE ());
      return EBUSY;
    }
  if (xp_prof_active ())
    xp_prof_acquired ((void *) lock, XP_PROF_SPIN, XP_CALLER_SITE (),
                      XP_PROF_OWNER_UNKNOWN);
  xp_hook_acquired ((void *) lock, sizeof *lock, XP_LD_SELF_HANGS,
                    XP_CALLER_SITE ());
  return 0;
}
XP_EXPORT (pthread_spin_trylock)

int
pthread_spin_unlock (pthread_spinlock_t *lock)
{
  xp_hook_releasing ((void *) lock, sizeof *lock, 0);
  xp_store_release (lock, XP_SPIN_UNLOCKED);
  return 0;
}
XP_EXPORT (pthread_spin_unlock)
