/* The spin policy of every wait that spins: mutexes (the estimate and
   the gaps below), read-write locks (the gaps too: measured with
   bench-rwlock, 4 threads on 2 cores with one write in 10 operations,
   1.4e7 operations per second looking after every round, 2.6-3.0e7 with
   the gaps), and with the slots and bound only, condition variable
   waiters for their signal and for the mutex after it, and semaphores.

   A waiter spins only when spinning can pay for itself:
   - there is more than one CPU the process may run on (the affinity mask
     at start-up counts, so taskset -c 0 means no spinning), and at most
     ncpus - 1 threads spin at once, so the owner always has a CPU to
     finish on even when threads outnumber cores;
   - the waiter does not run SCHED_FIFO or SCHED_RR, where a spinning
     waiter can keep the owner off the CPU they share;
   - the spin is read-only while the lock is held (one cache line shared,
     no bus locking; a CAS only when the word reads 0) and bounded: each
     lock keeps an estimate of the cpu_relax rounds its recent spins took
     (__spins of a mutex, as glibc keeps for its adaptive kind), and a
     spin gives up after twice that plus 10 rounds, at most max_spins;
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
     but worse at 0 ns, below glibc's default mutex.  Before the gaps, a
     waiter slept at once for a lock whose estimate was under 10 rounds,
     which helped at 0 and 50 ns; with the gaps that threshold made no
     difference paired cell by cell, and fresh locks start with an
     estimate of 0, so it went.
   Not done: skipping the spin when the owner is not running, which needs
   the owner's identity, and the default mutex does not record it.

   Turns (private mutexes): a spinner that has not had the lock after
   XPTHREAD_SPIN_TURN rounds (64) marks the held word, looks at every
   round from then on, and the owner's unlock leaves the word free until
   the spinner has it (mutex.c).  An owner that releases and retakes the
   lock at once otherwise keeps it for long streaks while the spinner,
   looking with gaps, misses the short moments it is free, gives up and
   sleeps: with 1 us critical sections and 2 threads, per-thread fairness
   (min/max acquisitions) was 0.5-0.8 against glibc's 0.6-0.9.  A turn
   moves the lock and the data it guards to another CPU, which costs
   more than a 50 ns critical section: asking for turns on every lock
   cost those cells 10-25% (8 threads fell to 0.92-1.0x glibc).  So a
   thread that got the lock by a turn times its hold (one clock read at
   each end, in slow paths), each lock keeps an estimate of those holds,
   and spinners ask only where it says 800 ns or more, or in one spin out
   of 16 to keep the estimate current.  The estimates measured: 50 ns
   sections 300-400 ns, 1 us sections about 1.3 us (the taker's first
   accesses miss the cache).  Measured with bench/mutex-cells, 12 rounds
   paired with glibc's default mutex, turns against none: 1 us sections
   1.7x glibc instead of 1.4x with 2 threads, fairness 0.98 instead of
   0.68 (glibc 0.82); 4 threads 1.34x instead of 1.15x, fairness 0.83
   instead of 0.69 (glibc 0.76); 8 threads 1.30x/0.63 instead of
   1.23x/0.55 (glibc 0.52); 0 and 50 ns cells unchanged within the noise.
   Asking after 128 rounds, or only when a mark set in the word survived
   16 rounds (a hold shown long by another means), let some threads
   starve (fairness 0.2-0.4 with 4 and 8 threads); asking after 256
   rounds gained nothing.  Handing the lock on at every release to a
   waiting spinner (tried before the gaps) cost the 0 ns cells their lead
   over glibc and did not make them fairer.

   Tunable by environment (env.c), read once at start-up:
     XPTHREAD_SPIN=0             never spin: the one way to turn it off
     XPTHREAD_SPIN_MAX=<n>       upper bound of a spin, 1 to 16000 (default
                                 200 rounds of cpu_relax, a few us)
     XPTHREAD_SPINNERS=<n>       threads allowed to spin at once, 1 to
                                 1024 (default usable CPUs - 1)
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
#define XP_MAX_SPINNERS 1024

struct xp_spin_config xp_spin_config;
int xp_spinners;

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
  if (spinners > XP_MAX_SPINNERS)
    spinners = XP_MAX_SPINNERS;
  /* The estimate is a short: hence the bound of max_spins.  */
  xp_spin_config.max_spins = (int) xp_env_number (
    "XPTHREAD_SPIN_MAX", XP_DEFAULT_MAX_SPINS, 1, XP_MAX_MAX_SPINS);
  xp_spin_config.max_backoff = power_of_two_at_most ((int) xp_env_number (
    "XPTHREAD_SPIN_BACKOFF", XP_DEFAULT_MAX_BACKOFF, 1, XP_MAX_MAX_BACKOFF));
  xp_spin_config.turn_after = (int) xp_env_number (
    "XPTHREAD_SPIN_TURN", XP_DEFAULT_TURN_AFTER, 0, XP_MAX_MAX_SPINS);
  bool spin = xp_env_number ("XPTHREAD_SPIN", 1, 0, 1) != 0;
  xp_spin_config.max_spinners = spin ? (int) xp_env_number (
    "XPTHREAD_SPINNERS", spinners, 1, XP_MAX_SPINNERS) : 0;
}
