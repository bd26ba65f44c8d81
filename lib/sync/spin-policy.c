/* The spin policy of every wait that spins: mutexes, read-write locks,
   condition variable waiters (for their signal, then for the mutex) and
   semaphores.  bench/SPIN.md has the measurements behind each rule.

   A waiter spins only when spinning can pay for itself:
   - there is more than one CPU the process may run on (the affinity mask
     at start-up counts, so taskset -c 0 means no spinning), its cgroup's
     CPU quota at start-up allows more than one CPU's time (a spinner
     spends time that the owner then lacks when the quota runs out), and
     it does not run under valgrind, whose threads run one at a time:
     there a spinner only keeps the owner from running;
   - the waiter does not run SCHED_FIFO or SCHED_RR, where a spinning
     waiter can keep the owner off the CPU they share;
   - the owner is not away: a mutex records its owner's tid, and a thread
     that yields or sleeps in the library marks itself away meanwhile
     (away.h).  A waiter that finds the owner away sleeps at once, and one
     that finds it so while it starts late or spins stops there: the lock
     cannot come free before the owner is back on a CPU, and with more
     threads than CPUs the waiter would hold the very CPU that the owner
     waits for;
   - the thread it waits for was not last seen on the waiter's own CPU.
     A condition waiter remembers the CPU its last go came from, and a
     semaphore the CPU of the last post that found a waiter (the CPU is
     the hint of the rseq area, a load); a waiter now on that CPU, or a
     thread relocking the mutex after a go from its own CPU, sleeps at
     once: the signaller or poster cannot run while it spins there, as
     when both threads are pinned to one CPU or placed on one by the
     scheduler;
   - no other thread spins on the same lock (XPTHREAD_SPINNERS per lock):
     the others sleep (after starting late, below).  Every look at a
     held lock's word pulls its cache line away from the owner, whose
     unlock must fetch it back, so each spinner beyond the first slows
     the owner down more than it shortens the wait, the more so the more
     cores there are.  Spinners are counted in the lock itself (a 16-bit
     spin state, spin-policy.h), so that no word shared by all locks is
     written on a lock path;
   - spins on this lock have been paying: each lock keeps an estimate of
     the cpu_relax rounds its recent spins took (__spins of a mutex, as
     glibc keeps for its adaptive kind), a spin gives up after twice that
     plus 10 rounds, at most max_spins, and a spin that gives up having
     seen the lock held all along pushes the estimate half way to
     max_spins.  A lock at max_spins is one held longer than a spin (or
     whose owner is off its CPU): only one wait in XP_SPIN_PROBE, drawn
     at random, spins there, and the first spin that sees it change
     hands brings the estimate back under the bound.  A spin that saw
     the lock change hands but lost it to another thread still paid:
     while a waiter spins, the owner's unlock has nobody to wake, and
     sleeping waiters make every unlock a system call.  Waits for a
     post, a signal or a writer's exit learn their bound the same way,
     but each spin that ends empty pushes the estimate only an eighth of
     the way: what they wait for comes when another thread gets round to
     it;
   - a mutex waiter, and a writer waiting for a rwlock, starts late: it
     lets XPTHREAD_SPIN_LATE rounds pass before its first look, touching
     nothing, and only then spins or sleeps.  A lock that is retaken at
     every release is fastest left to its owner, on whose CPU its line
     and data stay; and a waiter that neither looks nor sleeps costs the
     owner nothing, where a sleeper makes each of its unlocks a wake.  A
     thread relocking after a condition wait, sent for, starts at once,
     and so do readers waiting for a writer, who enter together.  Nor
     does a waiter start late where the lock's holds are long (its hold
     estimate, below, 400 ns or more): a hand-over then costs little
     beside the hold, and a waiter that lets the owner keep the lock
     leaves it free, and itself idle, while the owner works outside it;
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
   only where it says 800 ns or more, or in one spin out of 16 (drawn at
   random) to keep the estimate current.  One acquisition by a spin in
   four (drawn) is timed the same way, so that the estimate follows the
   lock where turns are rare.

   Tunable by environment (env.c), read once at start-up:
     XPTHREAD_SPIN=0             never spin: the one way to turn it off
     XPTHREAD_SPIN_MAX=<n>       upper bound of a spin, 1 to 16000 (default
                                 about 5 us of cpu_relax rounds)
     XPTHREAD_SPINNERS=<n>       threads allowed to spin on one lock at
                                 once, 1 to 3 (default 1)
     XPTHREAD_SPIN_BACKOFF=<n>   largest gap between two looks, in rounds,
                                 1 to 1024, rounded down to a power of two
                                 (default about 1.5 us; 1: no gaps)
     XPTHREAD_SPIN_LATE=<n>      rounds a mutex waiter or rwlock writer
                                 lets pass before its first look, 0 to
                                 16000 (default about 6 us; 0: none)
     XPTHREAD_SPIN_TURN=<n>      rounds after which a mutex spinner may
                                 ask for a turn, 0 to 16000 (default about
                                 1.5 us; 0: never)
   Rounds of cpu_relax last from a few to over 100 cycles, depending on
   the CPU: the defaults are measured at start-up (a few microseconds) and
   scaled to last as long as where they were tuned.  */
#include "spin-policy.h"
#include "cpu-quota.h"
#include "env.h"
#include "lock-hooks.h"
#include <limits.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

/* The defaults, in cpu_relax rounds of the CPU they were measured on,
   where one round took XP_REFERENCE_ROUND_NS; elsewhere they are scaled
   to last as long (a pause takes from a few to over 100 cycles,
   depending on the CPU).  */
#define XP_REFERENCE_ROUND_NS 24
#define XP_DEFAULT_MAX_SPINS 200
#define XP_MAX_MAX_SPINS 16000
#define XP_DEFAULT_MAX_BACKOFF 64
#define XP_MAX_MAX_BACKOFF 1024
#define XP_DEFAULT_TURN_AFTER 64
#define XP_DEFAULT_TURN_WAIT 64
#define XP_DEFAULT_START_LATE 256
#define XP_CALIBRATION_ROUNDS 64
#define XP_DEFAULT_PER_LOCK 1
#define XP_MAX_PER_LOCK 3    /* what the spin state's two bits count */

_Static_assert (XP_MAX_MAX_SPINS <= XP_SPIN_ESTIMATE_MASK,
                "the estimate must fit its bits of the spin state");
_Static_assert (XP_MAX_PER_LOCK
                <= 0xffff >> XP_SPIN_SPINNERS_SHIFT,
                "the spinners must fit their bits of the spin state");

struct xp_spin_config xp_spin_config;
__thread unsigned xp_spin_random_state;
__thread unsigned short xp_cond_spin_state;

_Static_assert ((XP_SPIN_PROBE & (XP_SPIN_PROBE - 1)) == 0
                && (XP_TURN_SAMPLE & (XP_TURN_SAMPLE - 1)) == 0,
                "xp_spin_one_in draws one in a power of two");

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
   (taskset, cgroup cpusets) or to less time (a cgroup's CPU quota)
   spins as if it had only those, and one under valgrind, which runs its
   threads one at a time, as on one.  */
static long
usable_cpus (void)
{
  if (xp_under_valgrind)
    return 1;
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);
  cpu_set_t allowed;
  if (sched_getaffinity (0, sizeof allowed, &allowed) == 0
      && CPU_COUNT (&allowed) < cpus)
    cpus = CPU_COUNT (&allowed);
  long quota = xp_cpu_quota_cpus ();
  return quota > 0 && quota < cpus ? quota : cpus;
}

/* The default gap, scaled, must not halve for a calibration a little
   slow: the nearest power of two.  */
static int
power_of_two_nearest (int n)
{
  int p = power_of_two_at_most (n);
  return 2 * n >= 3 * p ? 2 * p : p;
}

static long
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* The clock and the address of the thread's own state, mixed (a
   multiplicative hash): threads started together draw apart.  */
unsigned
xp_spin_random_seed (void)
{
  uint64_t v = ((uint64_t) now_ns () ^ (uintptr_t) &xp_spin_random_state)
               * 0x9e3779b97f4a7c15u;
  unsigned seed = (unsigned) (v >> 32);
  return seed != 0 ? seed : 1;
}

/* Nanoseconds of XP_CALIBRATION_ROUNDS rounds of cpu_relax, the best of
   three tries (a try the thread lost its CPU in reads long).  */
static long
calibration_ns (void)
{
  long best = LONG_MAX;
  for (int try = 0; try < 3; try++)
    {
      long start = now_ns ();
      for (int n = 0; n < XP_CALIBRATION_ROUNDS; n++)
        xp_cpu_relax ();
      long took = now_ns () - start;
      if (took > 0 && took < best)
        best = took;
    }
  return best;
}

/* ROUNDS of the reference CPU as rounds of this one, in [1, max].  */
static long
scaled (long rounds, long calibration, long max)
{
  long r = calibration == LONG_MAX ? rounds
           : rounds * XP_REFERENCE_ROUND_NS * XP_CALIBRATION_ROUNDS
             / calibration;
  return r < 1 ? 1 : r > max ? max : r;
}

void
xp_spin_policy_init (void)
{
  long calibration = calibration_ns ();
  /* The estimate has 14 bits: hence the bound of max_spins.  */
  xp_spin_config.max_spins = (int) xp_env_number (
    "XPTHREAD_SPIN_MAX",
    scaled (XP_DEFAULT_MAX_SPINS, calibration, XP_MAX_MAX_SPINS), 1,
    XP_MAX_MAX_SPINS);
  xp_spin_config.max_backoff = power_of_two_at_most ((int) xp_env_number (
    "XPTHREAD_SPIN_BACKOFF", power_of_two_nearest ((int) scaled (
      XP_DEFAULT_MAX_BACKOFF, calibration, XP_MAX_MAX_BACKOFF / 2)), 1,
    XP_MAX_MAX_BACKOFF));
  xp_spin_config.turn_after = (int) xp_env_number (
    "XPTHREAD_SPIN_TURN",
    scaled (XP_DEFAULT_TURN_AFTER, calibration, XP_MAX_MAX_SPINS), 0,
    XP_MAX_MAX_SPINS);
  xp_spin_config.start_late = (int) xp_env_number (
    "XPTHREAD_SPIN_LATE",
    scaled (XP_DEFAULT_START_LATE, calibration, XP_MAX_MAX_SPINS), 0,
    XP_MAX_MAX_SPINS);
  xp_spin_config.turn_wait = (int) scaled (XP_DEFAULT_TURN_WAIT, calibration,
                                           XP_MAX_MAX_SPINS);
  bool spin = xp_env_number ("XPTHREAD_SPIN", 1, 0, 1) != 0
              && usable_cpus () > 1;
  xp_spin_config.per_lock = spin ? (int) xp_env_number (
    "XPTHREAD_SPINNERS", XP_DEFAULT_PER_LOCK, 1, XP_MAX_PER_LOCK) : 0;
  if (xp_env_flag ("XPTHREAD_SHOW_MODE"))
    xp_warn ("spin policy: %d per lock, at most %d rounds of %ld ns, "
             "starting after %d, gaps up to %d, turns after %d",
             xp_spin_config.per_lock, xp_spin_config.max_spins,
             calibration == LONG_MAX ? 0 : calibration / XP_CALIBRATION_ROUNDS,
             xp_spin_config.start_late, xp_spin_config.max_backoff,
             xp_spin_config.turn_after);
}
