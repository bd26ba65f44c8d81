/* When and how long a waiter spins before it sleeps; see spin-policy.c. */
#ifndef XP_SYNC_SPIN_POLICY_H
#define XP_SYNC_SPIN_POLICY_H

#include "thread.h"
#include <limits.h>
#include <time.h>

struct xp_spin_config
{
  int max_spins;      /* upper bound of one spin, in cpu_relax rounds */
  int max_spinners;   /* threads allowed to spin at once; 0: never spin */
  int max_backoff;    /* largest gap between two looks at the word */
  int turn_after;     /* rounds before a spinner asks for a turn; 0: never */
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
   set by a thread that took the lock by a turn, makes its own unlock
   measure how long it held the lock.  */
#define XP_TURN_ASKED 4
#define XP_TURN_TIMED 8
/* Turns pay where a lock is held long: a spinner asks only when the
   lock's hold estimate (from timed turns) says so, and otherwise in one
   spin out of XP_TURN_SAMPLE, to keep the estimate current.  */
#define XP_TURN_HOLD_NS 800
#define XP_TURN_HOLD_UNIT_NS 16
#define XP_TURN_SAMPLE 16

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
         || self->turn_considered++ % XP_TURN_SAMPLE == 0;
}

/* Spin until *word reads 0 and is swapped to locked, within a bound
   learnt per lock: *estimate follows the cpu_relax rounds recent spins on
   the lock took (exponential average, weight 1/8), and a spin gives up
   after twice that plus a margin.  Given a hold estimate (private
   mutexes), a spinner still out of luck after turn_after rounds sets
   XP_TURN_ASKED in the held word, asking the owner's unlock to leave it
   the lock (mutex.c), then looks at every round for up to max_spins
   more; if it gets the lock that way it marks it XP_TURN_TIMED.
   Returns true when the lock was taken.  */
static inline bool
xp_spin_acquire (int *word, int locked, short *estimate, short *hold)
{
  int est = xp_load_relaxed (estimate);
  int limit = 2 * est + 10;
  if (limit > xp_spin_config.max_spins)
    limit = xp_spin_config.max_spins;
  int ask_at = limit > xp_spin_config.turn_after && xp_turn_allowed (hold)
               ? xp_spin_config.turn_after : INT_MAX;
  int n = 0;
  bool taken = false, asked = false;
  unsigned backoff = 1;
  /* Seeded from the caller's stack address, different in every thread.  */
  unsigned jitter = (unsigned) (uintptr_t) &backoff * 2654435761u;
  while (n < limit)
    {
      int seen = xp_load_relaxed (word);
      if (seen == 0)
        {
          int expected = 0;
          if (xp_cas (word, &expected, asked ? locked | XP_TURN_TIMED : locked))
            {
              taken = true;
              if (asked)
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
          asked = (seen & XP_TURN_ASKED) != 0
                  || xp_cas (word, &seen, seen | XP_TURN_ASKED);
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
  xp_store_relaxed (estimate, (short) (est + ((n - est) >> 3)));
  return taken;
}

/* xp_spin_acquire within a spinning slot; false without one.  */
static inline bool
xp_spin_for_word (int *word, int locked, short *estimate, short *hold)
{
  if (!xp_spin_begin ())
    return false;
  bool taken = xp_spin_acquire (word, locked, estimate, hold);
  xp_spin_end ();
  return taken;
}

#endif
