/* Barriers, private or process-shared.

   The barrier lives in pthread_barrier_t's 32 bytes, without pointers:
     state    64 bits: the threads arrived in the current round (low
              half) and the round number (high half, the futex word the
              waiters sleep on); one atomic add both arrives and reads
              the round arrived in
     count    the threads a round needs
     leaving  threads of a finished round not yet out of
              pthread_barrier_wait, plus DESTROYING while
              pthread_barrier_destroy waits for them (its futex word)
     shared   nonzero: process-shared (shared futexes)

   Transitions:
   wait     add 1 to state.  The thread that brings the arrivals to count
            adds count to leaving, then in one atomic add resets the
            arrivals to 0 and advances the round, and wakes every sleeper
            on the round word.  Every other thread sleeps while the round
            word still holds the round it arrived in.  Each thread then
            takes itself off leaving (waking the destroyer if it was the
            last one out) and returns: PTHREAD_BARRIER_SERIAL_THREAD for
            the last arrival, 0 for the others.  The last arrival counts
            in leaving too because its wake still touches the barrier.
   destroy  EBUSY while some thread has arrived in an unfinished round.
            Otherwise set DESTROYING and sleep until leaving is 0, so that
            the barrier may be freed as soon as one thread has come out of
            the last round, as POSIX allows.
   No wake-up is lost: a waiter sleeps only while the round word holds
   its round, and the round advances only by the last arrival's atomic
   add, which is followed by a wake of all sleepers; FUTEX_WAIT compares
   and sleeps atomically.  Likewise the destroyer sleeps on the exact
   value of leaving, and the last leaver, who sees DESTROYING in the
   value it replaced, wakes it.  */
#define _GNU_SOURCE
#include "export.h"
#include "futex.h"
#include "lock-hooks.h"
#include "prof.h"
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#define DESTROYING 0x80000000u

struct xp_barrier
{
  union
  {
    uint64_t whole;
    uint32_t half[2];
  } state;
  unsigned count;
  unsigned leaving;
  int shared;
};

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define ROUND_HALF 1
#else
# define ROUND_HALF 0
#endif
#define ONE_ROUND ((uint64_t) 1 << 32)

_Static_assert (sizeof (struct xp_barrier) <= sizeof (pthread_barrier_t),
                "pthread_barrier_t size");
_Static_assert (_Alignof (pthread_barrier_t) >= _Alignof (uint64_t),
                "pthread_barrier_t alignment");
_Static_assert (sizeof (pthread_barrierattr_t) >= sizeof (int),
                "pthread_barrierattr_t holds the pshared value");

static inline struct xp_barrier *
barrier (pthread_barrier_t *b)
{
  return (struct xp_barrier *) b;
}

static inline int
attr_pshared (const pthread_barrierattr_t *attr)
{
  return *(const int *) attr;
}

static inline bool
is_private (const struct xp_barrier *b)
{
  return b->shared == 0;
}

/* The one place a barrier blocks: until the round moves past round.  */
static void
sleep_through_round (struct xp_barrier *b, uint32_t round)
{
  uint32_t *word = &b->state.half[ROUND_HALF];
  while (xp_load_acquire (word) == round)
    xp_futex_wait ((int *) word, (int) round, is_private (b));
}

static void
leave (struct xp_barrier *b)
{
  if (xp_fetch_add (&b->leaving, -1u) == (DESTROYING | 1))
    xp_futex_wake ((int *) &b->leaving, 1, is_private (b));
}

int
pthread_barrier_init (pthread_barrier_t *bar,
                      const pthread_barrierattr_t *attr, unsigned count)
{
  /* glibc's bound, kept so that programs see the same errors.  */
  if (count == 0 || count >= INT_MAX)
    return EINVAL;
  struct xp_barrier *b = barrier (bar);
  memset (bar, 0, sizeof *bar);
  b->count = count;
  b->shared = attr != NULL && attr_pshared (attr) == PTHREAD_PROCESS_SHARED;
  if (xp_prof_active ())
    xp_prof_lock_init (bar, XP_CALLER_SITE ());
  return 0;
}
XP_EXPORT (pthread_barrier_init)

int
pthread_barrier_wait (pthread_barrier_t *bar)
{
  struct xp_barrier *b = barrier (bar);
  unsigned count = b->count;
  /* Never initialised (zero-filled): no arrival could complete a round.  */
  if (count == 0)
    return EINVAL;
  /* For the lock hooks every arrival happens before every departure.  */
  xp_hook_sync_words (bar, sizeof *bar);
  xp_hook_send (bar);
  uint64_t old = xp_fetch_add (&b->state.whole, 1);
  if ((uint32_t) old + 1 == count)
    {
      xp_fetch_add (&b->leaving, count);
      xp_fetch_add (&b->state.whole, ONE_ROUND - count);
      if (count > 1)
        xp_futex_wake ((int *) &b->state.half[ROUND_HALF], INT_MAX,
                       is_private (b));
      xp_hook_receive (bar);
      leave (b);
      return PTHREAD_BARRIER_SERIAL_THREAD;
    }
  struct xp_prof_wait wait;
  xp_prof_wait_begin (&wait, bar, XP_PROF_BARRIER, XP_CALLER_SITE ());
  sleep_through_round (b, (uint32_t) (old >> 32));
  xp_prof_wait_end (&wait, true);
  xp_hook_receive (bar);
  leave (b);
  return 0;
}
XP_EXPORT (pthread_barrier_wait)

int
pthread_barrier_destroy (pthread_barrier_t *bar)
{
  struct xp_barrier *b = barrier (bar);
  if ((uint32_t) xp_load_acquire (&b->state.whole) != 0)
    return EBUSY;
  unsigned leaving = xp_fetch_or (&b->leaving, DESTROYING) | DESTROYING;
  while (leaving != DESTROYING)
    {
      xp_futex_wait ((int *) &b->leaving, (int) leaving, is_private (b));
      leaving = xp_load_acquire (&b->leaving);
    }
  return 0;
}
XP_EXPORT (pthread_barrier_destroy)
