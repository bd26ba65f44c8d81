/* Mutexes: normal (the default), adaptive, recursive and error-checking,
   private or process-shared.  Robust, priority-inheritance and
   priority-protection mutexes have protocols of their own, also glibc's
   (mutex-robust.c, mutex-pi.c, mutex-pp.c); this file dispatches to them.

   Lock word (__lock), glibc's protocol, private or shared futex:
     0  unlocked
     1  locked, no thread asleep on the word
     2  locked, threads may be asleep
   plus, in a private mutex only, two bits beside 1 or 2 (spin-policy.h):
     4  TURN_ASKED: a spinner has waited long and asks for the lock at
        the next unlock
     8  TURN_TIMED: the holder took the lock by a turn, or by a spin
        (one such acquisition in four, drawn), and times its hold
   lock:    CAS 0 -> 1.  Failing that, spin if the spin policy allows
            (spin-policy.c: how late a spin starts, how many spin, and for
            how long) trying CAS
            0 -> 1 whenever the word reads 0; where the lock's hold
            estimate allows, after XPTHREAD_SPIN_TURN rounds CAS v -> v|4
            once (v held), look at every round from then on, and take a
            free word with 8 added (CAS 0 -> 1|8, or 2|8 when relocking
            after a condition wait); failing that (or without a spin),
            exchange in 2 and sleep while the word is 2, until the
            exchange returns 0 (then the lock is ours, marked 2 at the
            cost of at most one needless wake).
   unlock:  exchange in 0; if the old value had 8, fold the time held
            into the hold estimate (the word after __spins); if it had
            2, wake one sleeper; if it had 4, wait (a bounded number of
            rounds) until the word is taken, so that the asker, not this
            thread, takes it next.
   No wake-up is lost: a thread only sleeps on the value 2, which only an
   unlock's exchange removes, and every such unlock wakes one sleeper;
   FUTEX_WAIT compares the word and sleeps atomically.  A spinner that
   takes the lock with 1 while others sleep is harmless: a sleeper woken
   for it swaps 2 back in before sleeping again, so the next unlock wakes.
   The bits 4 and 8 are set only on a held word (by CAS) and cleared by
   every exchange, so a free word is always 0 and a sleeper's exchange of
   2, which drops them, keeps the wake (and loses at most one timing); an
   unlock's wait for the asker is bounded, so a turn asked by a spinner
   that left costs at most that.

   Every kind records its owner's tid in __owner while held, as glibc
   does: error checks and recursion need it, and waiters read the owner's
   away mark by it (spin-policy.c).  The recursive and error-checking
   kinds, and every process-shared kind, also count __nusers, as glibc
   does, so that a shared mutex looks the same to a glibc process (whose
   destroy answers EBUSY while __nusers is not 0).  The private normal
   (default) and adaptive kinds have no error checks and skip that count,
   which only a debugger would see: their lock and unlock are a handful of
   instructions.  The other kinds lock a free mutex and make their
   owner's last unlock inline too, and go to lock_typed and unlock_typed
   for the rest (recursion, errors, waits).  bench/count-mutex counts the
   instructions of each kind.

   The contention profiler (prof.h) is told of a wait in
   acquire_word_slow and of a failed try; a private mutex so contended
   gets XP_MUTEX_PROFILED in its kind, which sends its lock and unlock
   off the fast paths, to lock_watched and unlock_watched (the kinds
   that record no owner) or lock_special and unlock_special, where it
   is told of every acquisition and release.

   The USDT probes (probes.h) sit off those inline paths: mutex_entry and
   mutex_acquired around a lock that found the word taken (glibc fires
   them for every lock), mutex_release after an unlock that found it
   marked contended, lll_lock_wait before each sleep on the word.  */
#define _GNU_SOURCE
#include "mutex.h"
#include "export.h"
#include "lock-hooks.h"
#include "mutexattr.h"
#include "probes.h"
#include "prof.h"
#include "spin-policy.h"
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <string.h>

/* Every kind records its owner's tid, which waiters read for its away
   mark; all but the private normal and adaptive kinds also count
   __nusers, as glibc does.  */
static inline bool
counts_users (int kind)
{
  return kind != 0 && kind != PTHREAD_MUTEX_ADAPTIVE_NP;
}

static inline void
take_ownership (pthread_mutex_t *m, int kind, int tid)
{
  m->__data.__owner = tid;
  if (counts_users (kind))
    m->__data.__nusers++;
}

static inline void
give_up_ownership (pthread_mutex_t *m, int kind)
{
  m->__data.__owner = 0;
  if (counts_users (kind))
    m->__data.__nusers--;
}

/* The spinner that asked for a turn looks at every round: leave the word
   free until it has taken it, or for long enough that it must have gone
   (to sleep, which takes a free word too, or off its CPU).  */
static void
leave_turn (const int *word)
{
  for (int n = 0; n < xp_spin_config.turn_wait && xp_load_relaxed (word) == 0;
       n++)
    xp_cpu_relax ();
}

/* The owner took the lock by a turn: fold how long it held it into the
   lock's hold estimate (weight 1/4), which tells spinners whether a turn
   pays on this lock.  */
static void
time_turn (short *hold)
{
  struct xp_thread *self = xp_self_ptr;
  if (self == NULL)
    return;
  xp_hold_learn (hold, xp_turn_now_ns () - self->turn_taken_ns);
}

/* Returns 0, pthread_mutex_unlock's answer, so that it can be a tail
   call and the fast path needs no stack frame.  */
static __attribute__ ((noinline)) int
after_contended_release (pthread_mutex_t *m, int old, bool private)
{
  if (old & XP_TURN_TIMED)
    time_turn (xp_mutex_after_spins (m));
  if (old & 2)
    xp_futex_wake (&m->__data.__lock, 1, private);
  if (old & XP_TURN_ASKED)
    leave_turn (&m->__data.__lock);
  XP_PROBE (mutex_release, m);
  return 0;
}

/* Returns 0, as after_contended_release.  */
static inline int
release_word (pthread_mutex_t *m, int kind)
{
  int old = xp_exchange_release (&m->__data.__lock, 0);
  if (xp_unlikely (old != 1))
    return after_contended_release (m, old, xp_mutex_private (kind));
  return 0;
}

/* The hold estimate of a mutex whose spinners may ask for turns: only a
   private one, so that a shared mutex keeps glibc's exact protocol.  */
static inline short *
turn_hold (pthread_mutex_t *m, int kind)
{
  return xp_mutex_private (kind) ? xp_mutex_after_spins (m) : NULL;
}

/* Sleep until the word is ours (left at 2).  WAIT: the profiler's, told
   of every wake and of the timeout, or NULL.  */
static int
sleep_for_word (pthread_mutex_t *m, int kind, clockid_t clock,
                const struct timespec *abstime, struct xp_prof_wait *wait)
{
  int *word = &m->__data.__lock;
  int err = xp_check_abstime (abstime);
  if (err != 0)
    return err;
  while (xp_exchange_acquire (word, 2) != 0)
    {
      XP_PROBE (lll_lock_wait, word);
      int slept = xp_futex_wait_abs (word, 2, clock, abstime,
                                     xp_mutex_private (kind));
      if (wait != NULL)
        xp_prof_woke (wait);
      if (slept == -ETIMEDOUT)
        return ETIMEDOUT;
    }
  return 0;
}

/* A private mutex of the 0/1/2 word, just taken: whether its owner
   changed, for the profiler.  It keeps its last owner in __list.__next,
   a word that only robust mutexes use (the lock validator stamps
   __prev).  */
static inline enum xp_prof_owner
swap_owner (pthread_mutex_t *m)
{
  return xp_prof_owner_swap ((const void **) (void *)
                             &m->__data.__list.__next);
}

/* The same for any kind: a shared mutex leaves its words to glibc's
   protocol, and the profiler keeps its last owner.  */
static inline enum xp_prof_owner
prof_owner (pthread_mutex_t *m, int kind)
{
  if (!xp_mutex_private (kind)
      || !xp_mutex_word_protocol (kind & ~XP_MUTEX_PROFILED))
    return XP_PROF_OWNER_UNKNOWN;
  return swap_owner (m);
}

/* The profiler watches M, found taken, from now on: a private mutex is
   marked (shared ones are seen by other processes, and only their waits
   are counted).  */
static void
watch (pthread_mutex_t *m, int kind)
{
  if (xp_mutex_private (kind) && xp_mutex_word_protocol (kind)
      && !(xp_mutex_kind (m) & XP_MUTEX_PROFILED))
    xp_fetch_or (&m->__data.__kind, XP_MUTEX_PROFILED);
}

/* Spin for the word, swapping in LOCKED, at most BOUND rounds (0: the
   lock's estimate; NO_SPIN: none), then sleep for it.  WAIT: the
   profiler's, told how the spin went, or NULL.  */
#define NO_SPIN (-1)

static int
spin_then_sleep (pthread_mutex_t *m, int kind, int locked, int bound,
                 clockid_t clock, const struct timespec *abstime,
                 struct xp_prof_wait *wait)
{
  unsigned rounds = 0;
  bool taken = bound != NO_SPIN
               && xp_spin_for_word (&m->__data.__lock, locked,
                                    xp_mutex_spin_state (m),
                                    turn_hold (m, kind), &m->__data.__owner,
                                    bound, &rounds);
  if (wait != NULL)
    xp_prof_spin_ended (wait, rounds, !taken);
  return taken ? 0 : sleep_for_word (m, kind, clock, abstime, wait);
}

/* The word was taken.  Without a deadline this is pthread_mutex_lock,
   whose waits the mutex_entry and mutex_acquired probes show; the timed
   locks have probes of their own, at every call, as in glibc.
   WATCHED: the profiler watches M already.  */
static __attribute__ ((noinline)) int
acquire_word_slow (pthread_mutex_t *m, int kind, clockid_t clock,
                   const struct timespec *abstime, const void *site,
                   bool watched)
{
  if (abstime == NULL)
    XP_PROBE (mutex_entry, m);
  struct xp_prof_wait wait;
  bool profiled = xp_prof_active ();
  if (profiled)
    {
      xp_prof_spin_wait_begin (&wait, m, site);
      if (!watched)
        watch (m, kind);
    }
  int err = spin_then_sleep (m, kind, 1, 0, clock, abstime,
                             profiled ? &wait : NULL);
  if (profiled)
    {
      if (err == 0)
        wait.owner = prof_owner (m, kind);
      xp_prof_wait_end (&wait, err == 0);
    }
  if (abstime == NULL && err == 0)
    XP_PROBE (mutex_acquired, m);
  return err;
}

/* PROFILED: the mutex is watched, and told of an acquisition without a
   wait (acquire_word_slow tells of the others).  */
static inline int
acquire_word (pthread_mutex_t *m, int kind, clockid_t clock,
              const struct timespec *abstime, const void *site,
              bool profiled)
{
  int expected = 0;
  if (xp_likely (xp_cas (&m->__data.__lock, &expected, 1)))
    return profiled ? xp_prof_mutex_acquired (m, site, prof_owner (m, kind))
                    : 0;
  return acquire_word_slow (m, kind, clock, abstime, site, profiled);
}

static int
lock_typed (pthread_mutex_t *m, int kind, clockid_t clock,
            const struct timespec *abstime, const void *site, bool profiled)
{
  int tid = xp_self_tid ();
  int type = kind & XP_MUTEX_TYPE_MASK;
  if (type == PTHREAD_MUTEX_RECURSIVE_NP && m->__data.__owner == tid)
    {
      if (m->__data.__count == UINT_MAX)
        return EAGAIN;
      m->__data.__count++;
      return 0;
    }
  if (type == PTHREAD_MUTEX_ERRORCHECK_NP && m->__data.__owner == tid)
    return EDEADLK;
  int err = acquire_word (m, kind, clock, abstime, site, profiled);
  if (err != 0)
    return err;
  if (type == PTHREAD_MUTEX_RECURSIVE_NP)
    m->__data.__count = 1;
  take_ownership (m, kind, tid);
  return 0;
}

/* The lock hooks and the profiler see a recursive mutex taken and released once, at its
   outermost level, as the tools expect of a lock.  */
static bool
outermost (const pthread_mutex_t *m, int kind)
{
  return (kind & XP_MUTEX_TYPE_MASK) != PTHREAD_MUTEX_RECURSIVE_NP
         || m->__data.__count == 1;
}

/* The kinds with a protocol of their own (mutex-pi.c, mutex-pp.c,
   mutex-robust.c).  Priority inheritance decides the word's protocol
   even when the mutex is also robust.  */
static int
lock_protocol (pthread_mutex_t *m, int kind, clockid_t clock,
               const struct timespec *abstime)
{
  if (kind & XP_MUTEX_PRIO_INHERIT)
    return xp_mutex_pi_lock (m, kind, clock, abstime);
  if (kind & XP_MUTEX_PRIO_PROTECT)
    return xp_mutex_pp_lock (m, kind, clock, abstime);
  return xp_mutex_robust_lock (m, kind, clock, abstime);
}

static int
trylock_protocol (pthread_mutex_t *m, int kind)
{
  if (kind & XP_MUTEX_PRIO_INHERIT)
    return xp_mutex_pi_trylock (m, kind);
  if (kind & XP_MUTEX_PRIO_PROTECT)
    return xp_mutex_pp_trylock (m, kind);
  return xp_mutex_robust_trylock (m, kind);
}

static int
unlock_protocol (pthread_mutex_t *m, int kind)
{
  if (kind & XP_MUTEX_PRIO_INHERIT)
    return xp_mutex_pi_unlock (m, kind);
  if (kind & XP_MUTEX_PRIO_PROTECT)
    return xp_mutex_pp_unlock (m, kind);
  return xp_mutex_robust_unlock (m, kind);
}

/* Whether the caller holds M, of a kind with a protocol of its own: the
   robust and PI words hold the owner's tid, a PP mutex's __owner does.  */
static bool
held_by_caller (const pthread_mutex_t *m, int kind)
{
  int tid = xp_self_tid ();
  if (kind & XP_MUTEX_PRIO_PROTECT)
    return m->__data.__owner == tid;
  return (xp_load_relaxed (&m->__data.__lock) & FUTEX_TID_MASK) == tid;
}

/* Whether a lock that answered ERR holds the mutex: EOWNERDEAD does.  */
static bool
holds (int err)
{
  return err == 0 || err == EOWNERDEAD;
}

/* Under the profiler those kinds are tried first, so that it learns
   whether the lock waited; they never take the fast paths, so they need
   no mark to leave them.  Relocking a mutex the caller holds (recursion,
   EDEADLK) is no contention.  */
static int
lock_protocol_profiled (pthread_mutex_t *m, int kind, clockid_t clock,
                        const struct timespec *abstime, const void *site)
{
  if (held_by_caller (m, kind))
    return lock_protocol (m, kind, clock, abstime);
  int err = trylock_protocol (m, kind);
  if (err == EBUSY)
    {
      struct xp_prof_wait wait;
      xp_prof_wait_begin (&wait, m, XP_PROF_MUTEX, site);
      err = lock_protocol (m, kind, clock, abstime);
      xp_prof_wait_end (&wait, holds (err));
    }
  else if (holds (err))
    xp_prof_acquired (m, XP_PROF_MUTEX, site, XP_PROF_OWNER_UNKNOWN);
  return err;
}

static int
lock_special (pthread_mutex_t *m, int kind, clockid_t clock,
              const struct timespec *abstime, const void *site)
{
  if (kind & XP_MUTEX_PROFILED)
    return lock_typed (m, kind & ~XP_MUTEX_PROFILED, clock, abstime, site,
                       true);
  if (xp_prof_active ())
    return lock_protocol_profiled (m, kind, clock, abstime, site);
  return lock_protocol (m, kind, clock, abstime);
}

static int trylock (pthread_mutex_t *m, int kind, const void *site);

/* A watched mutex's failed try is told by trylock (busy); a failed try
   of a kind with a protocol of its own is told here, unless the caller
   holds the mutex (an error-checking relock).  */
static int
trylock_special (pthread_mutex_t *m, int kind, const void *site)
{
  int err = kind & XP_MUTEX_PROFILED
            ? trylock (m, kind & ~XP_MUTEX_PROFILED, site)
            : trylock_protocol (m, kind);
  if (!xp_prof_active ())
    return err;
  if (holds (err) && outermost (m, kind))
    xp_prof_acquired (m, XP_PROF_MUTEX, site, prof_owner (m, kind));
  else if (err == EBUSY && !(kind & XP_MUTEX_PROFILED)
           && !held_by_caller (m, kind))
    xp_prof_busy (m, XP_PROF_MUTEX, site);
  return err;
}

static int unlock_typed (pthread_mutex_t *m, int kind);

static int
unlock_special (pthread_mutex_t *m, int kind)
{
  if (xp_prof_active () && outermost (m, kind))
    xp_prof_releasing (m);
  if (kind & XP_MUTEX_PROFILED)
    return unlock_typed (m, kind & ~XP_MUTEX_PROFILED);
  return unlock_protocol (m, kind);
}

static int
lock_any (pthread_mutex_t *m, int kind, clockid_t clock,
          const struct timespec *abstime, const void *site)
{
  if (xp_unlikely (kind < 0))
    return EINVAL;   /* destroyed */
  if (!xp_mutex_word_protocol (kind))
    return lock_special (m, kind, clock, abstime, site);
  return lock_typed (m, kind, clock, abstime, site, false);
}

/* A watched private mutex of a kind that records no owner: its
   lock and unlock are those of the fast paths, and tell the profiler.  */
static inline bool
watched_plain (int kind)
{
  return kind == (XP_MUTEX_PROFILED | PTHREAD_MUTEX_NORMAL)
         || kind == (XP_MUTEX_PROFILED | PTHREAD_MUTEX_ADAPTIVE_NP);
}

/* Straight from pthread_mutex_lock: a watched mutex is taken again and
   again, and every instruction on the way lengthens the critical
   section's chain when threads contend.  Out of line, so that the
   fast paths keep no stack frame.  */
static __attribute__ ((noinline)) int
lock_watched (pthread_mutex_t *m, int kind, const void *site)
{
  int expected = 0;
  if (xp_likely (xp_cas (&m->__data.__lock, &expected, 1)))
    {
      m->__data.__owner = xp_away_tid ();
      return xp_prof_mutex_acquired (m, site, swap_owner (m));
    }
  int err = acquire_word_slow (m, kind & ~XP_MUTEX_PROFILED, CLOCK_REALTIME,
                               NULL, site, true);
  if (err == 0)
    m->__data.__owner = xp_away_tid ();
  return err;
}

static __attribute__ ((noinline)) int
lock_slow (pthread_mutex_t *m, int kind, const void *site)
{
  return lock_any (m, kind, CLOCK_REALTIME, NULL, site);
}

/* How the lock validator sees a lock of KIND: taking a normal or
   adaptive mutex again blocks forever; a mutex that is not robust leaves
   its __list to it.  */
static unsigned
lockdep_flags (int kind)
{
  int type = kind & XP_MUTEX_TYPE_MASK;
  unsigned flags = (kind & XP_MUTEX_ROBUST) ? 0 : XP_LD_STAMPED;
  if (type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP)
    flags |= XP_LD_SELF_HANGS;
  return flags;
}

/* Returns ERR, the answer of a lock that has just been tried at SITE.  */
static int
after_lock (pthread_mutex_t *m, int kind, int err, const void *site)
{
  if (err == 0 && outermost (m, kind))
    xp_hook_acquired (m, sizeof *m, lockdep_flags (kind), site);
  return err;
}

/* A lock that may wait, told to the hooks before and after.  */
static int
lock_told (pthread_mutex_t *m, int kind, clockid_t clock,
           const struct timespec *abstime, const void *site)
{
  if (kind >= 0)
    xp_hook_acquiring (m, lockdep_flags (kind), site);
  return after_lock (m, kind, lock_any (m, kind, clock, abstime, site),
                    site);
}

static __attribute__ ((noinline)) int
lock_hooked (pthread_mutex_t *m, int kind, const void *site)
{
  return lock_told (m, kind, CLOCK_REALTIME, NULL, site);
}

/* While the process has a single thread, a private mutex needs no atomic
   instruction: nothing else can look at it.  */
static inline bool
alone (void)
{
  return xp_compat_single_threaded ();
}

int
pthread_mutex_lock (pthread_mutex_t *m)
{
  int kind = xp_mutex_kind (m);
  int hooked = xp_mutex_hooked (kind);
  /* The private normal and adaptive kinds record no owner.  The empty
     asm keeps the compiler from testing for the adaptive kind first, so
     that the default mutex pays for one test only, which also tests the
     lock hooks.  */
  if (xp_unlikely (hooked != 0))
    {
      if (xp_unlikely (hooked != kind))
        return lock_hooked (m, kind, XP_CALLER_SITE ());
      int opaque = kind;
      __asm__ ("" : "+r" (opaque));
      if (opaque != PTHREAD_MUTEX_ADAPTIVE_NP)
        {
          /* The kinds that record the owner: the free mutex inline;
             recursion, EDEADLK and waiting in lock_typed.  */
          struct xp_thread *self = xp_self_ptr;
          int expected = 0;
          if (xp_unlikely (!xp_mutex_word_protocol (kind)))
            return watched_plain (kind)
                   ? lock_watched (m, kind, XP_CALLER_SITE ())
                   : lock_slow (m, kind, XP_CALLER_SITE ());
          if (xp_likely (self != NULL) && m->__data.__owner != self->tid
              && xp_likely (xp_cas (&m->__data.__lock, &expected, 1)))
            {
              if ((kind & XP_MUTEX_TYPE_MASK) == PTHREAD_MUTEX_RECURSIVE_NP)
                m->__data.__count = 1;
              take_ownership (m, kind, self->tid);
              return 0;
            }
          return lock_typed (m, kind, CLOCK_REALTIME, NULL,
                             XP_CALLER_SITE (), false);
        }
    }
  if (alone () && m->__data.__lock == 0)
    {
      m->__data.__lock = 1;
      m->__data.__owner = xp_away_tid ();   /* no system call, no frame */
      return 0;
    }
  int expected = 0;
  if (xp_likely (xp_cas (&m->__data.__lock, &expected, 1)))
    {
      m->__data.__owner = xp_away_tid ();
      return 0;
    }
  return lock_slow (m, kind, XP_CALLER_SITE ());
}
XP_EXPORT (pthread_mutex_lock)

/* The timed locks, with glibc's probes around every call.  */
static int
timedlock (pthread_mutex_t *m, clockid_t clock,
           const struct timespec *abstime, const void *site)
{
  XP_PROBE (mutex_timedlock_entry, m, abstime);
  int err = lock_told (m, xp_mutex_kind (m), clock, abstime, site);
  if (err == 0)
    XP_PROBE (mutex_timedlock_acquired, m);
  return err;
}

int
pthread_mutex_timedlock (pthread_mutex_t *m, const struct timespec *abstime)
{
  return timedlock (m, CLOCK_REALTIME, abstime, XP_CALLER_SITE ());
}
XP_EXPORT (pthread_mutex_timedlock)

int
pthread_mutex_clocklock (pthread_mutex_t *m, clockid_t clock,
                         const struct timespec *abstime)
{
  if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
    return EINVAL;
  return timedlock (m, clock, abstime, XP_CALLER_SITE ());
}
XP_EXPORT (pthread_mutex_clocklock)

/* A try found the mutex taken: contention, for the profiler.  */
static __attribute__ ((noinline)) int
busy (pthread_mutex_t *m, int kind, const void *site)
{
  if (xp_prof_active ())
    {
      xp_prof_busy (m, XP_PROF_MUTEX, site);
      watch (m, kind);
    }
  return EBUSY;
}

static int
trylock (pthread_mutex_t *m, int kind, const void *site)
{
  if (xp_unlikely (kind < 0))
    return EINVAL;
  if (!xp_mutex_word_protocol (kind))
    return trylock_special (m, kind, site);
  int tid = xp_self_tid ();
  int type = kind & XP_MUTEX_TYPE_MASK;
  if (type == PTHREAD_MUTEX_RECURSIVE_NP && m->__data.__owner == tid)
    {
      if (m->__data.__count == UINT_MAX)
        return EAGAIN;
      m->__data.__count++;
      return 0;
    }
  int expected = 0;
  if (!xp_cas (&m->__data.__lock, &expected, 1))
    return busy (m, kind, site);
  if (type == PTHREAD_MUTEX_RECURSIVE_NP)
    m->__data.__count = 1;
  take_ownership (m, kind, tid);
  return 0;
}

int
pthread_mutex_trylock (pthread_mutex_t *m)
{
  int kind = xp_mutex_kind (m);
  const void *site = XP_CALLER_SITE ();
  return after_lock (m, kind, trylock (m, kind, site), site);
}
XP_EXPORT (pthread_mutex_trylock)

static int
unlock_typed (pthread_mutex_t *m, int kind)
{
  int type = kind & XP_MUTEX_TYPE_MASK;
  if (type == PTHREAD_MUTEX_RECURSIVE_NP || type == PTHREAD_MUTEX_ERRORCHECK_NP)
    {
      if (m->__data.__owner != xp_self_tid ()
          || xp_load_relaxed (&m->__data.__lock) == 0)
        return EPERM;
      if (type == PTHREAD_MUTEX_RECURSIVE_NP && --m->__data.__count != 0)
        return 0;
    }
  give_up_ownership (m, kind);
  release_word (m, kind);
  return 0;
}

/* Straight from pthread_mutex_unlock, as lock_watched.  */
static __attribute__ ((noinline)) int
unlock_watched (pthread_mutex_t *m, int kind)
{
  xp_prof_releasing (m);
  m->__data.__owner = 0;
  return release_word (m, kind & ~XP_MUTEX_PROFILED);
}

static __attribute__ ((noinline)) int
unlock_slow (pthread_mutex_t *m, int kind)
{
  if (watched_plain (kind))
    return unlock_watched (m, kind);
  if (xp_unlikely (kind < 0))
    return EINVAL;
  if (!xp_mutex_word_protocol (kind))
    return unlock_special (m, kind);
  return unlock_typed (m, kind);
}

/* Whether an unlock by a thread that does not hold the mutex answers
   EPERM, as POSIX defines for these kinds.  */
static bool
owner_checked (int kind)
{
  int type = kind & XP_MUTEX_TYPE_MASK;
  return type == PTHREAD_MUTEX_ERRORCHECK_NP
         || type == PTHREAD_MUTEX_RECURSIVE_NP || (kind & XP_MUTEX_ROBUST);
}

/* Told before the unlock, which may let another thread take the mutex
   at once; an unlock that then fails (EPERM) is the misuse the tools
   report.  */
static __attribute__ ((noinline)) int
unlock_hooked (pthread_mutex_t *m, int kind)
{
  if (kind >= 0 && outermost (m, kind))
    xp_hook_releasing (m, sizeof *m, owner_checked (kind)
                                     ? XP_LD_OWNER_CHECKED : 0);
  return unlock_slow (m, kind);
}

int
pthread_mutex_unlock (pthread_mutex_t *m)
{
  int kind = xp_mutex_kind (m);
  int hooked = xp_mutex_hooked (kind);
  if (xp_unlikely (hooked != 0))
    {
      if (xp_unlikely (hooked != kind))   /* as in pthread_mutex_lock */
        return unlock_hooked (m, kind);
      int opaque = kind;
      __asm__ ("" : "+r" (opaque));   /* as in pthread_mutex_lock */
      if (opaque != PTHREAD_MUTEX_ADAPTIVE_NP)
        {
          /* The kinds that record the owner: the owner's last unlock
             inline; errors and inner recursive unlocks in unlock_typed.  */
          struct xp_thread *self = xp_self_ptr;
          if (xp_unlikely (!xp_mutex_word_protocol (kind)))
            return watched_plain (kind) ? unlock_watched (m, kind)
                                        : unlock_slow (m, kind);
          if (xp_unlikely (self == NULL) || m->__data.__owner != self->tid)
            return unlock_typed (m, kind);
          if ((kind & XP_MUTEX_TYPE_MASK) == PTHREAD_MUTEX_RECURSIVE_NP)
            {
              if (m->__data.__count != 1)
                return unlock_typed (m, kind);
              m->__data.__count = 0;
            }
          give_up_ownership (m, kind);
          release_word (m, kind);
          return 0;
        }
    }
  m->__data.__owner = 0;
  if (alone () && m->__data.__lock == 1)
    m->__data.__lock = 0;
  else
    return release_word (m, 0);
  return 0;
}
XP_EXPORT (pthread_mutex_unlock)

/* The relock's wait, told to the profiler as the mutex's contention
   at the condition wait's SITE.  */
static int
relock_word (pthread_mutex_t *m, int kind, const void *site,
             bool signaller_here)
{
  /* The mutex is usually held by the signaller, about to release it
     (often in a wait of its own): spin the longest spin the policy
     allows, whatever the lock's estimate says, and leave the estimate to
     its lockers; but not on the signaller's own CPU.  */
  /* glibc's relock is its pthread_mutex_lock, probes included; here, as
     for a lock, they show only a relock that finds the mutex taken.  */
  bool taken = (XP_PROBES_ON || xp_prof_active ())
               && xp_load_relaxed (&m->__data.__lock) != 0;
  struct xp_prof_wait wait = { 0 };
  if (taken)
    {
      XP_PROBE (mutex_entry, m);
      xp_prof_spin_wait_begin (&wait, m, site);
      if (xp_prof_active ())
        watch (m, kind);
    }
  int err = spin_then_sleep (m, kind, 2,
                             signaller_here ? NO_SPIN
                                            : xp_spin_config.max_spins,
                             CLOCK_REALTIME, NULL, taken ? &wait : NULL);
  if (taken)
    {
      if (err == 0 && xp_prof_active ())
        wait.owner = prof_owner (m, kind);
      xp_prof_wait_end (&wait, err == 0);
      if (err == 0)
        XP_PROBE (mutex_acquired, m);
    }
  else if (err == 0 && (xp_mutex_kind (m) & XP_MUTEX_PROFILED))
    xp_prof_acquired (m, XP_PROF_MUTEX, site, prof_owner (m, kind));
  return err;
}

int
xp_mutex_relock_after_wait (pthread_mutex_t *m, const void *site,
                            bool signaller_here)
{
  int kind = xp_mutex_kind (m);
  if (kind >= 0)
    kind &= ~XP_MUTEX_PROFILED;
  if (!xp_mutex_word_protocol (kind))
    return after_lock (m, kind, lock_any (m, kind, CLOCK_REALTIME, NULL,
                                          site), NULL);
  int err = relock_word (m, kind, site, signaller_here);
  if (err != 0)
    return err;
  if ((kind & XP_MUTEX_TYPE_MASK) == PTHREAD_MUTEX_RECURSIVE_NP)
    m->__data.__count = 1;
  take_ownership (m, kind, xp_self_tid ());
  return after_lock (m, kind, 0, NULL);
}

int
pthread_mutex_init (pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
  int a = attr != NULL ? *xp_mutexattr_word (attr) : 0;
  int protocol = (a & XP_MUTEXATTR_PROTOCOL_MASK)
                 >> XP_MUTEXATTR_PROTOCOL_SHIFT;
  if (protocol == PTHREAD_PRIO_INHERIT && !xp_mutex_pi_supported ())
    return ENOTSUP;
  /* As glibc: no robust mutex with a protocol other than none or
     inheritance (priority protection, or garbage).  */
  if (protocol != PTHREAD_PRIO_NONE && protocol != PTHREAD_PRIO_INHERIT
      && (a & XP_MUTEXATTR_ROBUST))
    return ENOTSUP;
  memset (m, 0, sizeof *m);
  int kind = a & XP_MUTEXATTR_TYPE_MASK;
  if (protocol == PTHREAD_PRIO_INHERIT)
    kind |= XP_MUTEX_PRIO_INHERIT;
  if (protocol == PTHREAD_PRIO_PROTECT)
    {
      int ceiling = (a & XP_MUTEXATTR_CEILING_MASK)
                    >> XP_MUTEXATTR_CEILING_SHIFT;
      /* Never set: the lowest priority a ceiling can have.  */
      if (ceiling == 0)
        ceiling = sched_get_priority_min (SCHED_FIFO);
      kind |= XP_MUTEX_PRIO_PROTECT;
      m->__data.__lock = (int) ((unsigned) ceiling << XP_MUTEX_CEILING_SHIFT);
    }
  if (a & XP_MUTEXATTR_PSHARED)
    kind |= XP_MUTEX_PSHARED;
  /* The kernel wakes the waiters of a dead owner's robust mutex with a
     shared wake, so glibc marks every robust mutex process-shared.  */
  if (a & XP_MUTEXATTR_ROBUST)
    kind |= XP_MUTEX_ROBUST | XP_MUTEX_PSHARED;
  m->__data.__kind = kind;
  xp_hook_lock_init (m, lockdep_flags (kind), XP_CALLER_SITE ());
  XP_PROBE (mutex_init, m);
  return 0;
}
XP_EXPORT (pthread_mutex_init)

int
pthread_mutex_destroy (pthread_mutex_t *m)
{
  xp_hook_destroying (m);
  int kind = xp_mutex_kind (m);
  int word = xp_load_relaxed (&m->__data.__lock);
  if (kind >= 0 && (kind & XP_MUTEX_PRIO_PROTECT))
    word &= ~(int) XP_MUTEX_CEILING_MASK;   /* the ceiling is no lock */
  int err = kind >= 0 && (kind & XP_MUTEX_ROBUST)
            ? xp_mutex_robust_destroy (m, kind, word)
            : word != 0 || m->__data.__nusers != 0 ? EBUSY : 0;
  if (err != 0)
    return err;
  /* Later use of the mutex then fails with EINVAL, as with glibc.  */
  xp_store_relaxed (&m->__data.__kind, -1);
  xp_hook_lock_destroy (m);
  XP_PROBE (mutex_destroy, m);
  return 0;
}
XP_EXPORT (pthread_mutex_destroy)

int
pthread_mutex_consistent (pthread_mutex_t *m)
{
  int kind = xp_mutex_kind (m);
  if (kind < 0 || (kind & XP_MUTEX_ROBUST) == 0)
    return EINVAL;
  return xp_mutex_robust_consistent (m);
}
XP_EXPORT (pthread_mutex_consistent)

/* <pthread.h> redirects this old name to the new one, so the definition
   takes its symbol name explicitly.  */
int xp_mutex_consistent_np (pthread_mutex_t *m)
  __asm__ ("pthread_mutex_consistent_np");
int
xp_mutex_consistent_np (pthread_mutex_t *m)
{
  return pthread_mutex_consistent (m);
}
XP_EXPORT (pthread_mutex_consistent_np)

int
pthread_mutex_getprioceiling (const pthread_mutex_t *m, int *ceiling)
{
  int kind = xp_mutex_kind (m);
  if (kind < 0 || (kind & XP_MUTEX_PRIO_PROTECT) == 0)
    return EINVAL;
  *ceiling = xp_mutex_pp_getprioceiling (m);
  return 0;
}
XP_EXPORT (pthread_mutex_getprioceiling)

int
pthread_mutex_setprioceiling (pthread_mutex_t *m, int ceiling, int *old)
{
  int kind = xp_mutex_kind (m);
  if (kind < 0 || (kind & XP_MUTEX_PRIO_PROTECT) == 0)
    return EINVAL;
  return xp_mutex_pp_setprioceiling (m, kind, ceiling, old);
}
XP_EXPORT (pthread_mutex_setprioceiling)

/* The entry points glibc kept for LinuxThreads-era binaries.  */
#define XP_MUTEX_ALIAS(alias, target) \
  extern __typeof (target) alias XP_ALIAS_OF (target); \
  XP_EXPORT (alias)

XP_MUTEX_ALIAS (__pthread_mutex_init, pthread_mutex_init)
XP_MUTEX_ALIAS (__pthread_mutex_destroy, pthread_mutex_destroy)
XP_MUTEX_ALIAS (__pthread_mutex_lock, pthread_mutex_lock)
XP_MUTEX_ALIAS (__pthread_mutex_trylock, pthread_mutex_trylock)
XP_MUTEX_ALIAS (__pthread_mutex_unlock, pthread_mutex_unlock)
