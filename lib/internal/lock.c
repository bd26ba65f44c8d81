/* Contended path of the internal lock; the protocol is in lock.h.  */
#include "lock.h"

void
xp_lock_slow (xp_lock_t *lock)
{
  while (xp_exchange_acquire (&lock->word, 2) != 0)
    xp_futex_wait (&lock->word, 2, true);
}
