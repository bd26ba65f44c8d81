/* When and how long a waiter spins before it sleeps; see spin-policy.c. */
#ifndef XP_SYNC_SPIN_POLICY_H
#define XP_SYNC_SPIN_POLICY_H

#include "thread.h"

struct xp_spin_config
{
  int max_spins;      /* upper bound of one spin, in cpu_relax rounds */
  int max_spinners;   /* threads allowed to spin at once; 0: never spin */
};

extern struct xp_spin_config xp_spin_config XP_HIDDEN;
extern int xp_spinners XP_HIDDEN;

void xp_spin_policy_init (void) XP_HIDDEN;

/* Take a spinning slot, or refuse: spinning is off, the caller runs a
   realtime policy, or enough threads spin already to keep every other CPU
   busy.  */
static inline bool
xp_spin_begin (void)
{
  if (xp_spin_config.max_spinners == 0)
    return false;
  struct xp_thread *self = xp_self_ptr;
  if (self != NULL && self->realtime)
    return false;
  if (xp_load_relaxed (&xp_spinners) >= xp_spin_config.max_spinners)
    return false;
  if (xp_fetch_add (&xp_spinners, 1) >= xp_spin_config.max_spinners)
    {
      xp_fetch_add (&xp_spinners, -1);
      return false;
    }
  return true;
}

static inline void
xp_spin_end (void)
{
  xp_fetch_add (&xp_spinners, -1);
}

/* Spin until *word reads 0 and is swapped to locked, within a bound
   learnt per lock: *estimate follows the spins recent acquisitions needed
   (exponential average, weight 1/8), and a spin gives up after twice that
   plus a margin.  Returns true when the lock was taken.  */
static inline bool
xp_spin_acquire (int *word, int locked, short *estimate)
{
  int limit = 2 * xp_load_relaxed (estimate) + 10;
  if (limit > xp_spin_config.max_spins)
    limit = xp_spin_config.max_spins;
  int n;
  bool taken = false;
  for (n = 0; n < limit; n++)
    {
      if (xp_load_relaxed (word) == 0)
        {
          int expected = 0;
          if (xp_cas (word, &expected, locked))
            {
              taken = true;
              break;
            }
        }
      xp_cpu_relax ();
    }
  short old = xp_load_relaxed (estimate);
  xp_store_relaxed (estimate, (short) (old + (n - old) / 8));
  return taken;
}

#endif
