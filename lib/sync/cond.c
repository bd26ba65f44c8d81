/* Condition variables.

   A process-private condition variable keeps its waiters on a FIFO list.
   Each waiter's node lives on the waiter's stack and has its own futex
   word, so a signal wakes exactly the oldest waiter and never one that
   arrived after the signal.  Process-shared condition variables must
   follow the running glibc's protocol to work across processes: the
   glibc layer provides it (glibc-cond.h).

   Node state, changed only by compare-and-swap:
     WAITING   on the list
     SIGNALED  a signaller unlinked it (under the list lock) and owes it a
               wake-up on its futex word
     LEAVING   the waiter timed out first; it unlinks itself under the
               list lock
   Node futex word ("go"):
     GO_WAIT    waiting, awake: spinning, or about to announce its sleep
     GO_ASLEEP  waiting, asleep on the word (or about to be)
     GO_PROCEED signalled
   The waiter first spins for its go within the spin policy (a signal
   often follows within microseconds: hand-offs, ping-pong), then
   announces its sleep with CAS GO_WAIT -> GO_ASLEEP and sleeps while the
   word is GO_ASLEEP.  A signaller exchanges in GO_PROCEED and makes the
   wake system call only if it took GO_ASLEEP out, so a spinning waiter
   costs its signaller no system call.  No wake-up is lost: the waiter
   sleeps only on GO_ASLEEP (FUTEX_WAIT compares and sleeps atomically),
   only the signaller's exchange replaces it, and that exchange is followed
   by the wake; a go that comes before the announcement makes the CAS
   fail, and the waiter proceeds without sleeping.  A waiter that loses
   the race between its timeout and a signal counts as signalled and waits
   for its go, so no signal is swallowed.

   No lost wake-up overall: a waiter is on the list before it releases the
   mutex, so a signaller that holds the mutex afterwards finds it.

   broadcast takes every WAITING node and chains them in arrival order but
   wakes only the first; each woken waiter, once it holds the mutex again,
   wakes the next.  The mutex so sees one contender at a time instead of a
   herd.  LEAVING nodes stay on the list for their owners to unlink, and
   broadcast waits until they have (each is handed a counter to decrement),
   so that once broadcast returns no waiter touches the condition variable
   again and it may be destroyed at once, as POSIX allows.  destroy fails
   with EBUSY while the list is not empty.

   The USDT probes (probes.h) are glibc's, at the same places: cond_wait
   at the start of every wait, cond_signal and cond_broadcast at the start
   of every call, private or shared.  */
#define _GNU_SOURCE
#include "cancel.h"
#include "cond.h"
#include "export.h"
#include "glibc-cond.h"
#include "lock.h"
#include "mutex.h"
#include "lock-hooks.h"
#include "prof.h"
#include "probes.h"
#include "spin-policy.h"
#include <errno.h>
#include <limits.h>
#include <string.h>

enum { WAITING, SIGNALED, LEAVING };
enum { GO_WAIT, GO_PROCEED, GO_ASLEEP };

struct xp_cond_waiter
{
  struct xp_cond_waiter *newer;
  struct xp_cond_waiter *older;
  struct xp_cond_waiter *next_in_batch;
  int *leave_ack;
  int state;
  int go;
  int waker_cpu;            /* where its go came from (xp_spin_cpu_here) */
};

/* Where the calling thread's last go came from (xp_spin_cpu_here).  A
   waiter now running on that CPU expects its go from there again: a
   spin would only keep the signaller off the CPU, so it sleeps at once
   (xp_spin_peer_here).  */
static __thread int last_waker_cpu __attribute__ ((tls_model ("initial-exec")));

static inline xp_lock_t *
list_lock (struct xp_cond *c)
{
  return (xp_lock_t *) &c->lock;
}

static void
append (struct xp_cond *c, struct xp_cond_waiter *w)
{
  w->older = c->newest;
  w->newer = NULL;
  if (c->newest != NULL)
    c->newest->newer = w;
  else
    c->oldest = w;
  c->newest = w;
}

static void
unlink_waiter (struct xp_cond *c, struct xp_cond_waiter *w)
{
  if (w->older != NULL)
    w->older->newer = w->newer;
  else
    c->oldest = w->newer;
  if (w->newer != NULL)
    w->newer->older = w->older;
  else
    c->newest = w->older;
}

/* The node is the waiter's, on its stack: nothing is written to it after
   the go.  */
static void
wake (struct xp_cond_waiter *w)
{
  w->waker_cpu = xp_spin_cpu_here ();
  if (xp_exchange_release (&w->go, GO_PROCEED) == GO_ASLEEP)
    xp_futex_wake (&w->go, 1, true);
}

static bool
has_go (struct xp_cond_waiter *w)
{
  return xp_load_acquire (&w->go) == GO_PROCEED;
}

/* Announce that the waiter is going to sleep on its word; false if its go
   came first.  */
static bool
announce_sleep (struct xp_cond_waiter *w)
{
  int expected = GO_WAIT;
  return xp_cas (&w->go, &expected, GO_ASLEEP) || expected == GO_ASLEEP;
}

/* Wait for the go without a deadline (a signaller owes it).  */
static void
await_go (struct xp_cond_waiter *w)
{
  while (!has_go (w))
    if (announce_sleep (w))
      xp_futex_wait (&w->go, GO_ASLEEP, true);
}

/* Whether the waiter has its go; a spin's condition (spin_for_go).  */
static bool
signalled (void *waiter)
{
  return has_go (waiter);
}

/* Spin read-only for the go within the bound learnt from the calling
   thread's recent waits: the go word is the waiter's own, written once
   by its signaller, so looking at it costs nobody else anything, but a
   spin that ends in a sleep anyway is CPU time lost to the program.  The
   condition variable itself may be freed as soon as the go is given
   (after a broadcast), so it keeps no spin state.  */
static bool
spin_for_go (struct xp_cond_waiter *w)
{
  if (xp_spin_peer_here (last_waker_cpu))
    return false;
  return xp_spin_until (&xp_cond_spin_state, signalled, w, false);
}

/* Whether the waiter's go came from the CPU it runs on now (so that its
   signaller, which may hold the mutex, cannot run while it spins); the
   thread remembers where its go came from.  */
static bool
signalled_from_here (const struct xp_cond_waiter *w)
{
  last_waker_cpu = w->waker_cpu;
  return xp_spin_peer_here (w->waker_cpu);
}

static bool
mark (struct xp_cond_waiter *w, int from, int to)
{
  return xp_cas (&w->state, &from, to);
}

/* The waiter timed out: leave the list, or, if a signaller was quicker,
   take its wake-up.  Returns the wait's result.  */
static int
leave_after_timeout (struct xp_cond *c, struct xp_cond_waiter *w)
{
  if (!mark (w, WAITING, LEAVING))
    {
      await_go (w);
      return 0;
    }
  xp_lock (list_lock (c));
  unlink_waiter (c, w);
  int *ack = w->leave_ack;
  xp_unlock (list_lock (c));
  if (ack != NULL && xp_fetch_add (ack, -1) == 1)
    xp_futex_wake (ack, 1, true);
  return ETIMEDOUT;
}

/* Outcomes of a wait a cancel interrupted, besides the error numbers: the
   waiter left the list, or a signal reached it as it left.  */
enum { WAIT_CANCELLED = -1, WAIT_CANCELLED_SIGNALLED = -2 };

/* The wait is a cancellation point.  A cancelled waiter leaves the list
   as a timed-out one does.  */
static int
sleep_until_signalled (struct xp_cond *c, struct xp_cond_waiter *w,
                       clockid_t clock, const struct timespec *abstime)
{
  if (spin_for_go (w))
    return 0;
  while (!has_go (w))
    {
      if (!announce_sleep (w))
        continue;
      int r = xp_futex_wait_cp (&w->go, GO_ASLEEP, clock, abstime, true);
      if ((r == -ETIMEDOUT || r == -ECANCELED) && !has_go (w))
        {
          int err = leave_after_timeout (c, w);
          if (r == -ETIMEDOUT)
            return err;
          return err == 0 ? WAIT_CANCELLED_SIGNALLED : WAIT_CANCELLED;
        }
    }
  return 0;
}

/* The mutex is held again, as the first cleanup handler expects.  A
   signal that picked this waiter is passed on: a cancelled waiter must not
   consume it while others wait.  */
static __attribute__ ((noreturn)) void
act_on_cancel (struct xp_cond *c, int outcome)
{
  if (outcome == WAIT_CANCELLED_SIGNALLED)
    xp_cond_signal ((pthread_cond_t *) c);
  xp_cancel_act ();
}

/* SITE: the program's call, for the profiler, which times the sleep.  */
static int
wait_private (struct xp_cond *c, pthread_mutex_t *m, clockid_t clock,
              const struct timespec *abstime, const void *site)
{
  int err = xp_check_abstime (abstime);
  if (err != 0)
    return err;
  struct xp_cond_waiter w = { .state = WAITING, .go = GO_WAIT };
  xp_hook_sync_words (c, sizeof *c);
  xp_hook_sync_words (&w, sizeof w);
  xp_lock (list_lock (c));
  append (c, &w);
  xp_unlock (list_lock (c));
  err = pthread_mutex_unlock (m);
  if (err != 0)
    {
      /* Not the owner: undo, as if the wait had timed out at once, and
         pass on a signal that picked this waiter meanwhile.  */
      if (leave_after_timeout (c, &w) == 0)
        xp_cond_signal ((pthread_cond_t *) c);
      return err;
    }
  struct xp_prof_wait asleep;
  xp_prof_wait_begin (&asleep, c, XP_PROF_COND, site);
  err = sleep_until_signalled (c, &w, clock, abstime);
  xp_prof_wait_end (&asleep, true);
  xp_hook_receive (c);
  int relock = xp_mutex_relock_after_wait (m, site,
                                           signalled_from_here (&w));
  if (w.next_in_batch != NULL)
    wake (w.next_in_batch);
  if (err < 0)
    act_on_cancel (c, err);
  return relock != 0 ? relock : err;
}

static inline unsigned
cond_flags (pthread_cond_t *cond)
{
  return xp_load_relaxed (xp_glibc_cond_flags (cond));
}

static clockid_t
cond_clock (pthread_cond_t *cond)
{
  return (cond_flags (cond) & XP_GLIBC_COND_MONOTONIC) ? CLOCK_MONOTONIC
                                                       : CLOCK_REALTIME;
}

static bool
is_pshared (pthread_cond_t *cond)
{
  return (cond_flags (cond) & XP_GLIBC_COND_PSHARED) != 0;
}

int
pthread_cond_wait (pthread_cond_t *cond, pthread_mutex_t *m)
{
  struct xp_cond *c = xp_cond (cond);
  xp_hook_cond_wait (cond, m, XP_CALLER_SITE ());
  XP_PROBE (cond_wait, cond, m);
  if (is_pshared (cond))
    return xp_shared_cond_wait (cond, m, CLOCK_REALTIME, NULL);
  return wait_private (c, m, CLOCK_REALTIME, NULL,
                       XP_CALLER_SITE ());
}
XP_EXPORT (pthread_cond_wait)

/* A timed wait without a deadline: glibc's crashes; ours answers rather
   than wait for ever.  */
static bool
no_deadline (const struct timespec *abstime)
{
  return xp_unhinted (abstime) == NULL;
}

int
pthread_cond_timedwait (pthread_cond_t *cond, pthread_mutex_t *m,
                        const struct timespec *abstime)
{
  struct xp_cond *c = xp_cond (cond);
  if (no_deadline (abstime))
    return EINVAL;
  xp_hook_cond_wait (cond, m, XP_CALLER_SITE ());
  XP_PROBE (cond_wait, cond, m);
  if (is_pshared (cond))
    return xp_shared_cond_wait (cond, m, cond_clock (cond), abstime);
  return wait_private (c, m, cond_clock (cond), abstime,
                       XP_CALLER_SITE ());
}
XP_EXPORT (pthread_cond_timedwait)

int
pthread_cond_clockwait (pthread_cond_t *cond, pthread_mutex_t *m,
                        clockid_t clock, const struct timespec *abstime)
{
  struct xp_cond *c = xp_cond (cond);
  if ((clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
      || no_deadline (abstime))
    return EINVAL;
  xp_hook_cond_wait (cond, m, XP_CALLER_SITE ());
  XP_PROBE (cond_wait, cond, m);
  if (is_pshared (cond))
    return xp_shared_cond_wait (cond, m, clock, abstime);
  return wait_private (c, m, clock, abstime,
                       XP_CALLER_SITE ());
}
XP_EXPORT (pthread_cond_clockwait)

/* Tell the profiler of a signal (or broadcast) at SITE; WOKE: it ended
   a wait.  Returns 0, the answer of the call.  */
static inline int
told_signal (pthread_cond_t *cond, const void *site, bool broadcast,
             bool woke)
{
  if (xp_prof_active ())
    xp_prof_signalled (cond, site, broadcast, woke);
  return 0;
}

int
pthread_cond_signal (pthread_cond_t *cond)
{
  struct xp_cond *c = xp_cond (cond);
  XP_PROBE (cond_signal, cond);
  if (is_pshared (cond))
    return xp_shared_cond_signal (cond);
  /* What the signaller did happens before the waits it ends.  */
  xp_hook_sync_words (c, sizeof *c);
  xp_hook_send (c);
  if (xp_load_relaxed (&c->oldest) == NULL)
    return told_signal (cond, XP_CALLER_SITE (), false, false);
  struct xp_cond_waiter *chosen = NULL;
  xp_lock (list_lock (c));
  for (struct xp_cond_waiter *w = c->oldest; w != NULL; w = w->newer)
    if (mark (w, WAITING, SIGNALED))
      {
        unlink_waiter (c, w);
        chosen = w;
        break;
      }
  xp_unlock (list_lock (c));
  if (chosen != NULL)
    wake (chosen);
  return told_signal (cond, XP_CALLER_SITE (), false, chosen != NULL);
}
XP_EXPORT (pthread_cond_signal)

int
pthread_cond_broadcast (pthread_cond_t *cond)
{
  struct xp_cond *c = xp_cond (cond);
  XP_PROBE (cond_broadcast, cond);
  if (is_pshared (cond))
    return xp_shared_cond_broadcast (cond);
  xp_hook_sync_words (c, sizeof *c);
  xp_hook_send (c);
  if (xp_load_relaxed (&c->oldest) == NULL)
    return told_signal (cond, XP_CALLER_SITE (), true, false);
  struct xp_cond_waiter *first = NULL, *last = NULL;
  int leaving = 0;
  xp_lock (list_lock (c));
  struct xp_cond_waiter *w = c->oldest;
  while (w != NULL)
    {
      struct xp_cond_waiter *newer = w->newer;
      if (mark (w, WAITING, SIGNALED))
        {
          unlink_waiter (c, w);
          w->next_in_batch = NULL;
          if (last != NULL)
            last->next_in_batch = w;
          else
            first = w;
          last = w;
        }
      else
        {
          w->leave_ack = &leaving;
          leaving++;
        }
      w = newer;
    }
  xp_unlock (list_lock (c));
  if (first != NULL)
    wake (first);
  int n;
  while ((n = xp_load_acquire (&leaving)) != 0)
    xp_futex_wait (&leaving, n, true);
  return told_signal (cond, XP_CALLER_SITE (), true, first != NULL);
}
XP_EXPORT (pthread_cond_broadcast)

int
pthread_cond_init (pthread_cond_t *cond, const pthread_condattr_t *attr)
{
  int a = attr != NULL ? *(const int *) attr : 0;
  XP_PROBE (cond_init, cond, attr);
  if (a & XP_CONDATTR_PSHARED)
    {
      xp_shared_cond_init (cond, (a & XP_CONDATTR_MONOTONIC) != 0);
      return 0;
    }
  memset (cond, 0, sizeof *cond);
  *xp_glibc_cond_flags (cond) = (a & XP_CONDATTR_MONOTONIC)
                                ? XP_GLIBC_COND_MONOTONIC : 0;
  if (xp_prof_active ())
    xp_prof_lock_init (cond, XP_CALLER_SITE ());
  return 0;
}
XP_EXPORT (pthread_cond_init)

int
pthread_cond_destroy (pthread_cond_t *cond)
{
  struct xp_cond *c = xp_cond (cond);
  XP_PROBE (cond_destroy, cond);
  if (is_pshared (cond))
    return xp_shared_cond_destroy (cond);
  xp_lock (list_lock (c));
  bool busy = c->oldest != NULL;
  xp_unlock (list_lock (c));
  return busy ? EBUSY : 0;
}
XP_EXPORT (pthread_cond_destroy)

/* The hidden names of cond.h.  */
#define XP_COND_INTERNAL(internal, public) \
  extern __typeof (public) internal XP_HIDDEN XP_ALIAS_OF (public);

XP_COND_INTERNAL (xp_cond_init, pthread_cond_init)
XP_COND_INTERNAL (xp_cond_destroy, pthread_cond_destroy)
XP_COND_INTERNAL (xp_cond_signal, pthread_cond_signal)
XP_COND_INTERNAL (xp_cond_broadcast, pthread_cond_broadcast)
XP_COND_INTERNAL (xp_cond_wait, pthread_cond_wait)
XP_COND_INTERNAL (xp_cond_timedwait, pthread_cond_timedwait)
