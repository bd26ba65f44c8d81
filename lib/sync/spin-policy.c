/* The spin policy of every lock that spins (mutexes first).

   A waiter spins only when spinning can pay for itself:
   - there is more than one CPU, and at most ncpus - 1 threads spin at
     once, so the owner always has a CPU to finish on even when threads
     outnumber cores;
   - the waiter does not run SCHED_FIFO or SCHED_RR, where a spinning
     waiter can keep the owner off the CPU they share;
   - the spin is read-only (one cache line shared, no bus locking) and
     bounded by what recent acquisitions of the same lock needed.
   Tunable by environment, read once at start-up:
     XPTHREAD_SPIN=0             never spin
     XPTHREAD_SPIN_MAX=<n>       upper bound of a spin (default 200 rounds
                                 of cpu_relax, a few microseconds)
     XPTHREAD_SPINNERS=<n>       threads allowed to spin at once  */
#include "spin-policy.h"
#include <stdlib.h>
#include <unistd.h>

#define XP_DEFAULT_MAX_SPINS 200

struct xp_spin_config xp_spin_config;
int xp_spinners;

static int
env_int (const char *name, int fallback)
{
  const char *value = getenv (name);
  if (value == NULL || *value == '\0')
    return fallback;
  char *end;
  long n = strtol (value, &end, 10);
  if (*end != '\0' || n < 0 || n > 1000000)
    {
      xp_warn ("%s=%s is not a count; using %d", name, value, fallback);
      return fallback;
    }
  return (int) n;
}

void
xp_spin_policy_init (void)
{
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);
  int spinners = cpus > 1 ? (int) cpus - 1 : 0;
  xp_spin_config.max_spins = env_int ("XPTHREAD_SPIN_MAX",
                                      XP_DEFAULT_MAX_SPINS);
  xp_spin_config.max_spinners = env_int ("XPTHREAD_SPINNERS", spinners);
  if (env_int ("XPTHREAD_SPIN", 1) == 0 || xp_spin_config.max_spins == 0)
    xp_spin_config.max_spinners = 0;
}
