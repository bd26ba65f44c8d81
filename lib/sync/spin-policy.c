/* The spin policy of every wait that spins: mutexes, read-write locks,
   condition variable waiters (for their signal, then for the mutex) and
   semaphores.  bench/SPIN.md has the measurements behind each rule.

   A waiter spins only when spinning can pay for itself:
   - there is more than one CPU the process may run on (the affinity mask
     at start-up counts, so taskset -c 0 means no spinning);
   - the waiter does not run SCHED_FIFO or SCHED_RR, where a spinning
     waiter can keep the owner off the CPU they share;
   - no other thread spins on the same lock (XPTHREAD_SPINNERS per lock):
     the others sleep at once.  Every look at a held lock's word pulls its
     cache line away from the owner, whose unlock must fetch it back, so
     each spinner beyond the first slows the owner down more than it
     shortens the wait, the more so the more cores there are.  Spinners
     are counted in the lock itself (a 16-bit spin state, spin-policy.h),
     so that no word shared by all locks is written on a lock path;
   - spins on this lock have been paying: each lock keeps an estimate of
     the cpu_relax rounds its recent spins took (__spins of a mutex, as
     glibc keeps for its adaptive kind), a spin gives up after twice that
     plus 10 rounds, at most max_spins, and a spin that gives up pushes
     the estimate half way to max_spins.  A lock at max_spins is one
     whose waiters keep sleeping after their spin anyway (held long, or
     released and retaken at once by its owner, or its owner off its
     CPU): only one wait in XP_SPIN_PROBE spins there, and the first spin
     that succeeds brings the estimate back under the bound;
   - the spin is read-only while the lock is held (a CAS only when the
     word reads 0), and the gap between two looks doubles from one round
     up to max_backoff rounds, with a random part, so that a lock held at
     the first look, which is either held long or retaken by its owner at
     every release, keeps its line with the owner.

   Turns (private mutexes): a spinner that has not had the lock after
   XPTHREAD_SPIN_TURN rounds marks the held word, looks at every round
   from then on, and the owner's unlock leaves the word free until the
   spinner has it (mutex.c).  An owner that releases and retakes the lock
   at once otherwise keeps it for long streaks while the spinner, looking
   with gaps, misses the moments it is free.  A turn moves the lock and
   the data it guards to another CPU, which costs more than a short
   critical section, so a thread that got the lock by a turn times its
   hold, each lock keeps an estimate of those holds, and spinners ask
   only where it says 800 ns or more, or in one spin out of 16 to keep
   the estimate current.

   Tunable by environment (env.c), read once at start-up:
     XPTHREAD_SPIN=0             never spin: the one way to turn it off
     XPTHREAD_SPIN_MAX=<n>       upper bound of a spin, 1 to 16000 (default
                                 200 rounds of cpu_relax, a few us)
     XPTHREAD_SPINNERS=<n>       threads allowed to spin on one lock at
                                 once, 1 to 3 (default 1)
     XPTHREAD_SPIN_BACKOFF=<n>   largest gap between two looks, in rounds,
                                 1 to 1024, rounded down to a power of two
                                 (default 64; 1: no gaps)
     XPTHREAD_SPIN_TURN=<n>      rounds after which a mutex spinner may
                                 ask for a turn, 0 to 16000 (default 64;
                                 0: never)  */
#include "spin-policy.h"
#include "env.h"
#include <sched.h>
#include <unistd.h>

#define XP_DEFAULT_MAX_SPINS 200
#define XP_MAX_MAX_SPINS 16000
#define XP_DEFAULT_MAX_BACKOFF 64
#define XP_MAX_MAX_BACKOFF 1024
#define XP_DEFAULT_TURN_AFTER 64
#define XP_DEFAULT_PER_LOCK 1
#define XP_MAX_PER_LOCK 3    /* what the spin state's two bits count */

_Static_assert (XP_MAX_MAX_SPINS <= XP_SPIN_ESTIMATE_MASK,
                "the estimate must fit its bits of the spin state");
_Static_assert (XP_MAX_PER_LOCK
                <= 0xffff >> XP_SPIN_SPINNERS_SHIFT,
                "the spinners must fit their bits of the spin state");

struct xp_spin_config xp_spin_config;
__thread unsigned xp_spin_probes;
__thread unsigned short xp_cond_spin_state;

/* The jitter of a gap is masked with the gap, which must be a power of
   two.  */
static int
power_of_two_at_most (int n)
{
  int p = 1;
  while (2 * p <= n)
    p *= 2;
  return p;
}

/* The CPUs the process may run on: a process confined to fewer CPUs
   (taskset, cgroup cpusets) spins as if it had only those.  */
static long
usable_cpus (void)
{
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);
  cpu_set_t allowed;
  if (sched_getaffinity (0, sizeof allowed, &allowed) == 0
      && CPU_COUNT (&allowed) < cpus)
    cpus = CPU_COUNT (&allowed);
  return cpus;
}

void
xp_spin_policy_init (void)
{
  /* The estimate has 14 bits: hence the bound of max_spins.  */
  xp_spin_config.max_spins = (int) xp_env_number (
    "XPTHREAD_SPIN_MAX", XP_DEFAULT_MAX_SPINS, 1, XP_MAX_MAX_SPINS);
  xp_spin_config.max_backoff = power_of_two_at_most ((int) xp_env_number (
    "XPTHREAD_SPIN_BACKOFF", XP_DEFAULT_MAX_BACKOFF, 1, XP_MAX_MAX_BACKOFF));
  xp_spin_config.turn_after = (int) xp_env_number (
    "XPTHREAD_SPIN_TURN", XP_DEFAULT_TURN_AFTER, 0, XP_MAX_MAX_SPINS);
  bool spin = xp_env_number ("XPTHREAD_SPIN", 1, 0, 1) != 0
              && usable_cpus () > 1;
  xp_spin_config.per_lock = spin ? (int) xp_env_number (
    "XPTHREAD_SPINNERS", XP_DEFAULT_PER_LOCK, 1, XP_MAX_PER_LOCK) : 0;
}
