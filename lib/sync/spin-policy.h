/* When and how long a waiter spins before it sleeps; see spin-policy.c. */
#ifndef XP_SYNC_SPIN_POLICY_H
#define XP_SYNC_SPIN_POLICY_H

#include "thread.h"
#include <limits.h>
#include <time.h>

struct xp_spin_config
{
  int max_spins;      /* upper bound of one spin, in cpu_relax rounds */
  int per_lock;       /* threads allowed to spin on one lock; 0: never */
  int max_backoff;    /* largest gap between two looks at the word */
  int turn_after;     /* rounds before a spinner asks for a turn; 0: never */
  int turn_wait;      /* rounds an unlock leaves the word to the asker */
  int start_late;     /* rounds a waiter for exclusive ownership lets pass
                         before it first looks */
};

extern struct xp_spin_config xp_spin_config XP_HIDDEN;

/* Per thread, also in threads without a descriptor: the state of its
   pseudo-random numbers (xp_spin_one_in; 0 until its first), and the
   spin state of its condition variable waits.  */
extern __thread unsigned xp_spin_random_state
  __attribute__ ((tls_model ("initial-exec"))) XP_HIDDEN;
extern __thread unsigned short xp_cond_spin_state
  __attribute__ ((tls_model ("initial-exec"))) XP_HIDDEN;

void xp_spin_policy_init (void) XP_HIDDEN;
/* A seed for this thread's xp_spin_one_in, never 0.  */
unsigned xp_spin_random_seed (void) XP_HIDDEN;

/* A lock's spin state, one 16-bit word (a mutex's __spins, a field of
   the object otherwise): the threads spinning on the lock now in the top
   two bits, and in the low 14 bits the estimate of the cpu_relax rounds
   its recent spins took (0 to max_spins, at most 16000).  An estimate
   of max_spins says that spins on the lock have been in vain, the lock
   held all along: they do not pay there, and only one contended
   acquisition in XP_SPIN_PROBE (xp_spin_one_in) spins, to find out
   whether they pay again.  */
#define XP_SPIN_ESTIMATE_MASK 0x3fff
#define XP_SPIN_ONE_SPINNER 0x4000
#define XP_SPIN_SPINNERS_SHIFT 14
#define XP_SPIN_PROBE 8

/* True in about one call in N (a power of two), at random.  Waits that
   sample (a probe of a lock whose spins do not pay, a turn asked to keep
   an estimate current) draw here rather than count: a count would pick
   every new thread's first wait, and a program that starts threads by
   the thousand, each waiting once, would pay the sample every time.  */
static inline bool
xp_spin_one_in (unsigned n)
{
  unsigned x = xp_spin_random_state;
  if (xp_unlikely (x == 0))
    x = xp_spin_random_seed ();
  /* xorshift32: never 0 from a state that is not 0.  */
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  xp_spin_random_state = x;
  return (x & (n - 1)) == 0;
}

/* Whether spinning is allowed to this thread at all: spinning is on, and
   the thread does not run SCHED_FIFO or SCHED_RR, where a spinning
   waiter can keep the owner off the CPU they share.  */
static inline bool
xp_spin_allowed (void)
{
  if (xp_spin_config.per_lock == 0)
    return false;
  struct xp_thread *self = xp_self_ptr;
  return self == NULL || !self->realtime;
}

/* Whether the calling thread runs on the CPU numbered PEER_CPU - 1 (0:
   none known), where the thread it waits for was last seen.  Then that
   thread cannot run while this one spins, unless the kernel moves one of
   them: a spin only takes the CPU from it (both pinned to one CPU, or
   placed on one by the scheduler).  The CPU is the rseq area's hint.  */
static inline bool
xp_spin_peer_here (int peer_cpu)
{
  int cpu = xp_compat_current_cpu ();
  return cpu >= 0 && cpu + 1 == peer_cpu;
}

/* A CPU as xp_spin_peer_here takes it, from the calling thread's.  */
static inline int
xp_spin_cpu_here (void)
{
  return xp_compat_current_cpu () + 1;
}

/* Whether a lock whose spin state reads STATE is worth a spin now.  */
static inline bool
xp_spin_pays (unsigned state)
{
  if ((int) (state & XP_SPIN_ESTIMATE_MASK) < xp_spin_config.max_spins)
    return true;
  return xp_spin_one_in (XP_SPIN_PROBE);
}

/* Join the lock's spinners, or refuse: spinning is not allowed, enough
   threads spin on this lock already, or spins here do not pay.  Returns
   the estimate the lock had, or -1.  Spinners are counted per lock, not
   per process: every waiter of a lock that cannot spin sleeps at once,
   so that the lock's word has at most per_lock readers besides its
   owner, and nothing process-wide is written on a lock path.  */
static inline int
xp_spin_join (unsigned short *state)
{
  if (!xp_spin_allowed ())
    return -1;
  unsigned short seen = xp_load_relaxed (state);
  do
    {
      if ((seen >> XP_SPIN_SPINNERS_SHIFT) >= xp_spin_config.per_lock
          || !xp_spin_pays (seen))
        return -1;
    }
  while (!xp_cas (state, &seen,
                  (unsigned short) (seen + XP_SPIN_ONE_SPINNER)));
  return seen & XP_SPIN_ESTIMATE_MASK;
}

/* Leave the lock's spinners, setting its estimate to ESTIMATE.  */
static inline void
xp_spin_leave (unsigned short *state, int estimate)
{
  unsigned short seen = xp_load_relaxed (state);
  unsigned short next;
  do
    next = (unsigned short) (((seen - XP_SPIN_ONE_SPINNER)
                              & ~XP_SPIN_ESTIMATE_MASK) | estimate);
  while (!xp_cas (state, &seen, next));
}

/* The estimate after a spin of N rounds.  A spin in vain pushes the
   estimate 1 / 2^VAIN_SHIFT of the way to max_spins (rounded up, so that
   enough of them reach it and stop spinning but for probes); any other
   spin pulls it towards its length (weight 1/8), under max_spins.  */
static inline int
xp_spin_learn (int estimate, int n, bool in_vain, int vain_shift)
{
  int max = xp_spin_config.max_spins;
  if (in_vain)
    return estimate + ((max - estimate + (1 << vain_shift) - 1) >> vain_shift);
  int next = estimate + ((n - estimate) >> 3);
  return next < max ? next : max - 1;
}

/* For a mutex spinner, a spin in vain is one that watched the lock held
   all along without getting it: half way to max_spins each, so that a
   lock held longer than a spin (or whose owner is off its CPU) reaches
   it within a few.  A spinner that saw the lock change hands keeps its
   waiters awake and the owner's unlock cheap (no wake to make) even when
   it lost the race: that spin paid.  */
#define XP_SPIN_MUTEX_VAIN_SHIFT 1
/* For waits for a post, a signal or a writer, every spin that ends empty
   is in vain, but what they wait for comes when another thread gets
   round to it: an eighth of the way each, as glibc's adaptive mutex
   moves its estimate.  */
#define XP_SPIN_WAIT_VAIN_SHIFT 3

/* The rounds of cpu_relax before the next look at the word: a gap that
   doubles from 1 up to max_backoff rounds, plus a random part of up to
   the gap again, so that spinners do not look in step.  A lock that is
   not free at once is either held long or taken back by its owner at
   every release, and each look pulls its cache line away from the owner,
   whose next lock and unlock must fetch it back; looking less and less
   often leaves the owner its line.  */
static inline unsigned
xp_spin_gap (unsigned *backoff, unsigned *jitter)
{
  unsigned gap = *backoff + ((*jitter >> 16) & (*backoff - 1));
  *jitter = *jitter * 1103515245u + 12345u;
  if (*backoff < (unsigned) xp_spin_config.max_backoff)
    *backoff <<= 1;
  return gap;
}

/* Bits a spinner may add to a held private mutex's word (mutex.c):
   TURN_ASKED asks the owner's unlock to leave it the lock; TURN_TIMED,
   set by a thread that took the lock by a turn, or by a spin in one
   case out of XP_HOLD_SAMPLE, makes its own unlock measure how long it
   held the lock: the lock's hold estimate, in units of 16 ns.  */
#define XP_TURN_ASKED 4
#define XP_TURN_TIMED 8
#define XP_TURN_HOLD_UNIT_NS 16
#define XP_HOLD_SAMPLE 4
/* Turns pay where a lock is held long: a spinner asks only when the
   lock's hold estimate says so, and otherwise in one spin out of
   XP_TURN_SAMPLE, to keep the estimate current.  */
#define XP_TURN_HOLD_NS 800
#define XP_TURN_SAMPLE 16
/* A waiter does not start late (xp_spin_wait_late) where holds are this
   long: letting the owner keep a lock held that long saves a hand-over
   (the line of the lock and of its data moving to another CPU) that
   costs little beside the hold, and leaves the lock free while the
   owner works outside it, its waiter idle.  */
#define XP_LATE_HOLD_NS 400

/* Whether the lock's hold estimate HOLD (NULL: none) is long enough
   that waiters do not start late.  */
static inline bool
xp_hold_is_long (const short *hold)
{
  return hold != NULL
         && xp_load_relaxed (hold) >= XP_LATE_HOLD_NS / XP_TURN_HOLD_UNIT_NS;
}

/* Fold a hold of NS nanoseconds into a lock's hold estimate (weight
   1/4).  */
static inline void
xp_hold_learn (short *hold, long ns)
{
  long units = ns / XP_TURN_HOLD_UNIT_NS;
  if (units < 0 || units > SHRT_MAX)
    units = SHRT_MAX;
  int h = xp_load_relaxed (hold);
  xp_store_relaxed (hold, (short) (h + (((int) units - h) >> 2)));
}

static inline long
xp_turn_now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Whether this spin may ask for a turn, given the lock's hold estimate
   (NULL: the lock has no turns).  */
static inline bool
xp_turn_allowed (const short *hold)
{
  if (hold == NULL || xp_spin_config.turn_after == 0)
    return false;
  struct xp_thread *self = xp_self_ptr;
  if (self == NULL)
    return false;
  return xp_load_relaxed (hold) >= XP_TURN_HOLD_NS / XP_TURN_HOLD_UNIT_NS
         || xp_spin_one_in (XP_TURN_SAMPLE);
}

/* A waiter for exclusive ownership (a mutex, a rwlock's write side)
   lets start_late rounds pass before it first looks at the lock, touching
   nothing.  Meanwhile it neither pulls the lock's line away from the
   owner, who keeps taking the lock back on its own CPU, nor sleeps,
   which would make every unlock a wake.  OWNER: the tid of the lock's
   owner (0: unknown), whose away mark it reads every XP_AWAY_LOOK
   rounds, a line the owner does not write while it runs: the wait ends
   early when the owner has left its CPU (away.h).  Returns the rounds
   spent, negated when it ended early.  */
#define XP_AWAY_LOOK 16
static inline int
xp_spin_wait_late (int owner)
{
  int rounds = xp_spin_config.start_late;
  for (int n = 1; n <= rounds; n++)
    {
      xp_cpu_relax ();
      if (n % XP_AWAY_LOOK == 0 && xp_away (owner))
        return -n;
    }
  return rounds;
}

/* xp_spin_wait_late for a mutex, unless spins on it do not pay: then
   the waiter goes straight to join, which lets it probe or sends it to
   sleep.  */
static inline int
xp_spin_start_late (const unsigned short *state, int owner)
{
  if ((int) (xp_load_relaxed (state) & XP_SPIN_ESTIMATE_MASK)
      >= xp_spin_config.max_spins)
    return 0;
  return xp_spin_wait_late (owner);
}

/* The tid of a lock's owner, read from OWNER (a word that holds it in
   its FUTEX_TID_MASK bits, or NULL: unknown).  */
static inline int
xp_spin_owner (const int *owner)
{
  return owner != NULL ? xp_load_relaxed (owner) & FUTEX_TID_MASK : 0;
}

/* Spin until *word reads 0 and is swapped to locked, within a bound
   learnt per lock: the spin gives up after twice the lock's estimate
   plus a margin, at most max_spins rounds, or exactly BOUND rounds when
   BOUND is not 0 (then the estimate is left as it was, and the spin
   starts at once: a thread relocking after a condition wait was sent for,
   often by the holder, whose unlock follows).  Otherwise it starts late
   (xp_spin_start_late).  Given a hold estimate (private mutexes), a
   spinner still out of luck after turn_after rounds sets XP_TURN_ASKED
   in the held word, asking the owner's unlock to leave it the lock
   (mutex.c), then looks at every round for up to max_spins more; if it
   gets the lock that way it marks
   it XP_TURN_TIMED.  OWNER: where the lock keeps its owner's tid
   (xp_spin_owner); a waiter neither waits late nor spins while the owner
   is away (away.h), and a spin that finds it away ends without teaching
   the estimate anything.  Returns true when the lock was taken; false
   also when it may not spin (xp_spin_join).  *ROUNDS: the rounds it spun
   or let pass.  */
static inline bool
xp_spin_for_word (int *word, int locked, unsigned short *state, short *hold,
                  const int *owner, int bound, unsigned *rounds)
{
  *rounds = 0;
  if (!xp_spin_allowed () || xp_away (xp_spin_owner (owner)))
    return false;
  int late = bound == 0 && !xp_hold_is_long (hold)
             ? xp_spin_start_late (state, xp_spin_owner (owner)) : 0;
  *rounds = (unsigned) (late < 0 ? -late : late);
  if (late < 0)
    return false;
  int est = xp_spin_join (state);
  if (est < 0)
    return false;
  int limit = bound != 0 ? bound : 2 * est + 10;
  if (limit > xp_spin_config.max_spins)
    limit = xp_spin_config.max_spins;
  int ask_at = limit > xp_spin_config.turn_after && xp_turn_allowed (hold)
               ? xp_spin_config.turn_after : INT_MAX;
  int n = 0;
  bool taken = false, asked = false, away = false;
  int first = xp_load_relaxed (word);
  bool changed = false;
  unsigned backoff = 1;
  /* Seeded from the caller's stack address, different in every thread.  */
  unsigned jitter = (unsigned) (uintptr_t) &backoff * 2654435761u;
  while (n < limit)
    {
      int seen = xp_load_relaxed (word);
      if (xp_away (xp_spin_owner (owner)))
        {
          away = true;
          break;
        }
      changed |= seen != first;
      if (seen == 0)
        {
          int expected = 0;
          bool timed = asked
                       || (hold != NULL && xp_self_ptr != NULL
                           && xp_spin_one_in (XP_HOLD_SAMPLE));
          if (xp_cas (word, &expected, timed ? locked | XP_TURN_TIMED : locked))
            {
              taken = true;
              if (timed)
                xp_self_ptr->turn_taken_ns = xp_turn_now_ns ();
              break;
            }
        }
      else if (n >= ask_at)
        {
          /* Asked once per spin: a failed CAS means the word changed
             under us (a new owner, or a sleeper's mark), and the spin goes
             on as before.  */
          ask_at = INT_MAX;
          if ((seen & XP_TURN_ASKED) != 0)
            asked = true;
          else if (xp_cas (word, &seen, seen | XP_TURN_ASKED))
            {
              asked = true;
              /* Its own mark is no sign of the lock changing hands.  */
              first = seen | XP_TURN_ASKED;
            }
          if (asked)
            limit = n + xp_spin_config.max_spins;
        }
      unsigned gap = asked ? 1 : xp_spin_gap (&backoff, &jitter);
      for (; gap > 0; gap--)
        {
          xp_cpu_relax ();
          n++;
        }
    }
  xp_spin_leave (state, bound != 0 || away ? est
                   : xp_spin_learn (est, n, !taken && !changed,
                                    XP_SPIN_MUTEX_VAIN_SHIFT));
  *rounds += (unsigned) n;
  return taken;
}

/* Spin read-only until READY (ARG) holds or LIMIT rounds passed, looking
   at every round or, with GAPS, with the gaps of xp_spin_gap; and, given
   where the lock keeps its owner's tid (OWNER, xp_spin_owner), until the
   owner is away.  *ROUNDS: the rounds spun.  */
static inline bool
xp_spin_rounds (bool (*ready) (void *), void *arg, bool gaps, int limit,
                const int *owner, int *rounds)
{
  bool done = false;
  unsigned backoff = 1;
  unsigned jitter = (unsigned) (uintptr_t) &backoff * 2654435761u;
  int n = 0;
  while (n < limit && !(done = ready (arg))
         && !xp_away (xp_spin_owner (owner)))
    for (unsigned gap = gaps ? xp_spin_gap (&backoff, &jitter) : 1; gap > 0;
         gap--)
      {
        xp_cpu_relax ();
        n++;
      }
  *rounds = n;
  return done;
}

/* Spin read-only until READY (ARG) holds (it may also take what it
   waited for), within the bound learnt for the object whose spin state
   is STATE (as a mutex's), looking at every round or, with GAPS, with
   the gaps of xp_spin_gap.  True if READY held; false also when the
   thread may not spin (xp_spin_join).  */
static inline bool
xp_spin_until (unsigned short *state, bool (*ready) (void *), void *arg,
               bool gaps)
{
  int est = xp_spin_join (state);
  if (est < 0)
    return false;
  int limit = 2 * est + 10;
  if (limit > xp_spin_config.max_spins)
    limit = xp_spin_config.max_spins;
  int n;
  bool done = xp_spin_rounds (ready, arg, gaps, limit, NULL, &n);
  xp_spin_leave (state, xp_spin_learn (est, n, !done,
                                       XP_SPIN_WAIT_VAIN_SHIFT));
  return done;
}

/* Spin read-only, with gaps, until READY (ARG) holds, up to max_spins
   rounds, for waiters that take little from each other (a rwlock's):
   the spin neither counts among the lock's spinners nor learns a bound.
   A waiter that sleeps costs a wake and a wake-up, several microseconds;
   one refused a spin because another spins, or because spins that
   outlasted a preempted holder pushed the bound up, sleeps where a spin
   of a few microseconds would have let it in.  LATE: a waiter for
   exclusive ownership, which starts late (xp_spin_wait_late).  OWNER:
   where the lock keeps the tid of the thread holding it alone, 0 when
   none does (xp_spin_owner); as for a mutex, nobody waits late or spins
   while that thread is away.  */
static inline bool
xp_spin_until_shared (bool (*ready) (void *), void *arg, bool late,
                      const int *owner)
{
  if (!xp_spin_allowed () || xp_away (xp_spin_owner (owner)))
    return false;
  if (late && xp_spin_wait_late (xp_spin_owner (owner)) < 0)
    return false;
  int n;
  return xp_spin_rounds (ready, arg, true, xp_spin_config.max_spins, owner,
                         &n);
}

#endif
