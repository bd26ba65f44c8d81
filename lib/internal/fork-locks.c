/* Holding the table of internal locks across fork; the table, its order
   and why are in fork-locks.h.  */
#include "fork-locks.h"

#define XP_FORK_ENTRY(entry) &xp_fork_lock_##entry,
static xp_lock_t *const *const table[] = { XP_FORK_LOCKS (XP_FORK_ENTRY) };

__thread bool xp_fork_locks_mine;

/* The forks that take or hold the table now: set before the first lock
   is tried, cleared after the last is released.  */
static int forks_under_way;

void
xp_fork_locks_take (void)
{
  xp_fetch_add (&forks_under_way, 1);
  for (int i = 0; i < XP_FORK_LOCK_COUNT; i++)
    xp_lock (*table[i]);
  xp_fork_locks_mine = true;
}

/* In the child too: no other thread is left to wake, and unlocking is
   all a reset would do; the forks of the parent's other threads are
   not the child's.  */
void
xp_fork_locks_release (bool in_child)
{
  xp_fork_locks_mine = false;
  for (int i = XP_FORK_LOCK_COUNT - 1; i >= 0; i--)
    xp_unlock (*table[i]);
  if (in_child)
    xp_store_release (&forks_under_way, 0);
  else
    xp_fetch_add (&forks_under_way, -1);
}

bool
xp_fork_lock_for_hook (xp_lock_t *lock)
{
  static const struct timespec a_millisecond = { 0, 1000000 };
  for (int waited = 0; !xp_lock_unless (lock, &forks_under_way); waited++)
    {
      if (waited == XP_FORK_HOOK_PATIENCE_MS)
        return false;
      xp_syscall2 (SYS_nanosleep, &a_millisecond, NULL);
    }
  return true;
}
