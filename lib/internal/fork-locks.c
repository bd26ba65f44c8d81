/* Holding the table of internal locks across fork; the table, its order
   and why are in fork-locks.h.  */
#include "fork-locks.h"

#define XP_FORK_ENTRY(entry) &xp_fork_lock_##entry,
static xp_lock_t *const *const table[] = { XP_FORK_LOCKS (XP_FORK_ENTRY) };

void
xp_fork_locks_take (void)
{
  for (int i = 0; i < XP_FORK_LOCK_COUNT; i++)
    xp_lock (*table[i]);
}

/* In the child too: no other thread is left to wake, and unlocking is
   all a reset would do.  */
void
xp_fork_locks_release (void)
{
  for (int i = XP_FORK_LOCK_COUNT - 1; i >= 0; i--)
    xp_unlock (*table[i]);
}
