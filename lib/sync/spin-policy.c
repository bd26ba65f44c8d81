/* The spin policy of every wait that spins: mutexes (the estimate and the
   gaps below are theirs), and with the slots and bound only, condition
   variable waiters for their signal and for the mutex after it,
   semaphores and read-write locks.

   A waiter spins only when spinning can pay for itself:
   - there is more than one CPU the process may run on (the affinity mask
     at start-up counts, so taskset -c 0 means no spinning), and at most
     ncpus - 1 threads spin at once, so the owner always has a CPU to
     finish on even when threads outnumber cores;
   - the waiter does not run SCHED_FIFO or SCHED_RR, where a spinning
     waiter can keep the owner off the CPU they share;
   - the lock is held long enough: each lock keeps an estimate of the
     cpu_relax rounds its recent spins took (__spins of a mutex, as glibc
     keeps for its adaptive kind).  Below min_estimate (10 rounds, about
     200 ns of pause here; the estimate is rounded down, so locks whose
     spins take under about 18 rounds stay below) the owner usually takes
     the lock back before a spinner could use it, and a spinner only
     pulls the lock's cache line away from the owner at every release:
     measured (bench-mutex, 2 cores, critical sections of 0 and 50 ns)
     sleeping at once then gives more throughput.  One wait in probe_every
     spins anyway, to notice when hold times grow;
   - the spin is read-only while the lock is held (one cache line shared,
     no bus locking; a CAS only when the word reads 0) and bounded: twice
     the estimate plus 10 rounds, at most max_spins;
   - the gap between two looks at the word doubles from one round up to
     max_backoff rounds (64, about 1.2 us here), with a random part: a
     lock still held at the first look is either held long or retaken by
     its owner at every release, and each look drags its cache line away
     from the owner.  Measured (bench/mutex-cells, 2 cores, 2 to 8
     threads, paired against glibc's adaptive mutex, which backs off up to
     16 rounds): looking after every round gave 0.75 to 0.86 of glibc's
     adaptive throughput with 50 ns critical sections, and 1.2 to 1.4
     with these gaps; up to 16 or 32 rounds gave less.  Watching closely
     for the first 8 or 30 rounds, then backing off, did as well at 1 us
     but worse at 0 ns, below glibc's default mutex.
   Not done: skipping the spin when the owner is not running, which needs
   the owner's identity, and the default mutex does not record it.

   Tunable by environment, read once at start-up:
     XPTHREAD_SPIN=0             never spin
     XPTHREAD_SPIN_MAX=<n>       upper bound of a spin (default 200 rounds
                                 of cpu_relax, a few microseconds; at most
                                 16000)
     XPTHREAD_SPINNERS=<n>       threads allowed to spin at once (default
                                 usable CPUs - 1)
     XPTHREAD_SPIN_MIN=<n>       estimate below which a lock is not worth
                                 spinning for (default 10; 0: always spin)
     XPTHREAD_SPIN_PROBE=<n>     spin anyway once in <n> waits for such a
                                 lock (default 16)
     XPTHREAD_SPIN_BACKOFF=<n>   largest gap between two looks, in rounds,
                                 rounded down to a power of two (default
                                 64, at most 1024; 1: no gaps)  */
#include "spin-policy.h"
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#define XP_DEFAULT_MAX_SPINS 200
#define XP_MAX_MAX_SPINS 16000
#define XP_DEFAULT_MIN_ESTIMATE 10
#define XP_DEFAULT_PROBE_EVERY 16
#define XP_DEFAULT_MAX_BACKOFF 64
#define XP_MAX_MAX_BACKOFF 1024

struct xp_spin_config xp_spin_config;
int xp_spinners;
__thread unsigned xp_spin_skips;

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

/* The jitter of a gap is masked with the gap, which must be a power of
   two.  */
static int
power_of_two_at_most (int n)
{
  if (n > XP_MAX_MAX_BACKOFF)
    n = XP_MAX_MAX_BACKOFF;
  int p = 1;
  while (2 * p <= n)
    p *= 2;
  return p;
}

void
xp_spin_policy_init (void)
{
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);
  /* A process confined to fewer CPUs (taskset, cgroup cpusets) spins as
     if it had only those.  */
  cpu_set_t allowed;
  if (sched_getaffinity (0, sizeof allowed, &allowed) == 0
      && CPU_COUNT (&allowed) < cpus)
    cpus = CPU_COUNT (&allowed);
  int spinners = cpus > 1 ? (int) cpus - 1 : 0;
  xp_spin_config.max_spins = env_int ("XPTHREAD_SPIN_MAX",
                                      XP_DEFAULT_MAX_SPINS);
  xp_spin_config.max_spinners = env_int ("XPTHREAD_SPINNERS", spinners);
  /* The estimate is a short.  */
  if (xp_spin_config.max_spins > XP_MAX_MAX_SPINS)
    xp_spin_config.max_spins = XP_MAX_MAX_SPINS;
  xp_spin_config.min_estimate = env_int ("XPTHREAD_SPIN_MIN",
                                         XP_DEFAULT_MIN_ESTIMATE);
  xp_spin_config.probe_every = env_int ("XPTHREAD_SPIN_PROBE",
                                        XP_DEFAULT_PROBE_EVERY);
  if (xp_spin_config.probe_every == 0)
    xp_spin_config.probe_every = 1;
  xp_spin_config.max_backoff = power_of_two_at_most (
    env_int ("XPTHREAD_SPIN_BACKOFF", XP_DEFAULT_MAX_BACKOFF));
  if (env_int ("XPTHREAD_SPIN", 1) == 0 || xp_spin_config.max_spins == 0)
    xp_spin_config.max_spinners = 0;
}
