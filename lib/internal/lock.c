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

/* Wait for LOCK in slices of a millisecond, at most SLICES of them (0:
   no limit), while *STOP is zero; returns whether it took it.  A stop
   set while the waiter sleeps is seen within a slice: nothing need wake
   it.  */
static bool
lock_in_slices (xp_lock_t *lock, const int *stop, unsigned slices)
{
  static const struct timespec slice = { 0, 1000000 };
  int expected = 0;
  if (xp_likely (xp_cas (&lock->word, &expected, 1)))
    return true;
  for (unsigned waited = 0; xp_exchange_acquire (&lock->word, 2) != 0;
       waited++)
    {
      if (xp_load_acquire (stop) != 0 || (slices != 0 && waited == slices))
        return false;
      XP_PROBE (lll_lock_wait_private, &lock->word);
      xp_futex_wait_for (&lock->word, 2, &slice, true);
    }
  return true;
}

bool
xp_lock_unless (xp_lock_t *lock, const int *stop)
{
  return lock_in_slices (lock, stop, 0);
}

bool
xp_lock_within (xp_lock_t *lock, unsigned ms)
{
  static const int never = 0;
  return lock_in_slices (lock, &never, ms);
}
