/* Holding the table of internal locks across fork; the table, its order
   and why are in fork-locks.h.  */
#include "fork-locks.h"

#define XP_FORK_ENTRY(entry) &xp_fork_lock_##entry,
static xp_lock_t *const *const table[] = { XP_FORK_LOCKS (XP_FORK_ENTRY) };

__thread bool xp_fork_locks_mine;

void
xp_fork_locks_take (void)
{
  for (int i = 0; i < XP_FORK_LOCK_COUNT; i++)
    xp_lock (*table[i]);
  xp_fork_locks_mine = true;
}

/* In the child too: no other thread is left to wake, and unlocking is
   all a reset would do.  */
void
xp_fork_locks_release (void)
{
  xp_fork_locks_mine = false;
  for (int i = XP_FORK_LOCK_COUNT - 1; i >= 0; i--)
    xp_unlock (*table[i]);
}
