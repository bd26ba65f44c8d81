/* Contended path of the internal lock; the protocol is in lock.h.  The
   probe is glibc's for its internal locks, which these stand for.  */
#include "lock.h"
#include "probes.h"

void
xp_lock_slow (xp_lock_t *lock)
{
  while (xp_exchange_acquire (&lock->word, 2) != 0)
    {
      XP_PROBE (lll_lock_wait_private, &lock->word);
      xp_futex_wait (&lock->word, 2, true);
    }
}
