/* Library start-up and fork.

   At start-up: choose the mode (nptl-compat), fix the spin policy and
   the default thread attributes, adopt the thread running the
   constructors (the main thread), and register fork handlers.  Around
   fork the library's locks are held (the table in fork-locks.h) so that
   the child never inherits one half-taken; in the child only the forking
   thread exists, so the thread list and the live count start again from
   it.  */
#define _GNU_SOURCE
#include "attr.h"
#include "away.h"
#include "compat.h"
#include "fork-locks.h"
#include "lock-hooks.h"
#include "report-fd.h"
#include "robust-list.h"
#include "spin-policy.h"
#include "stack.h"
#include "thread.h"

extern void *__dso_handle;

static void
before_fork (void)
{
  /* The child needs the forking thread's descriptor; adopting takes the
     list lock, so do it before holding it.  */
  xp_self ();
  xp_fork_locks_take ();
}

static void
after_fork_parent (void)
{
  xp_fork_locks_release (false);
}

unsigned xp_fork_generation;

static void
after_fork_child (void)
{
  struct xp_thread *self = xp_self_ptr;
  xp_fork_generation++;
  self->tid = xp_gettid ();
  xp_robust_list_after_fork (self);
  self->next = self->prev = NULL;
  xp_thread_list_head = self;
  xp_live_threads = 1;
  /* A thread of the parent may have held these to act on the forking
     thread (a pin, pthread_setschedparam); it does not exist here, and
     unlocking resets a lock whoever held it.  */
  xp_unlock (&self->exit_lock);
  xp_unlock (&self->sched_lock);
  xp_block_cache_after_fork_child ();
  xp_away_after_fork_child ();
  xp_fork_locks_release (true);
}

static void __attribute__ ((constructor))
xp_init (void)
{
  /* First: what standard error is, before anything reports.  */
  xp_report_fd_init ();
  xp_compat_init ();
  xp_compat_choose_mode (xp_lock_hooks_init ());
  xp_spin_policy_init ();
  xp_default_attr_init ();
  xp_adopt_init ();
  xp_self ();
  xp_glibc_register_atfork (before_fork, after_fork_parent,
                            after_fork_child, &__dso_handle);
}
