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

/* A stop set while the waiter sleeps is seen within a slice: nothing
   need wake it.  */
bool
xp_lock_unless (xp_lock_t *lock, const int *stop)
{
  static const struct timespec slice = { 0, 1000000 };
  int expected = 0;
  if (xp_likely (xp_cas (&lock->word, &expected, 1)))
    return true;
  while (xp_exchange_acquire (&lock->word, 2) != 0)
    {
      if (xp_load_acquire (stop) != 0)
        return false;
      XP_PROBE (lll_lock_wait_private, &lock->word);
      xp_futex_wait_for (&lock->word, 2, &slice, true);
    }
  return true;
}
