/* The engine of the process-shared condition variable protocols; the
   fields, the transitions and why no wake-up is lost are described in
   cond-common.h.  */
#define _GNU_SOURCE
#include "cancel.h"
#include "cond-common.h"
#include "futex.h"
#include "mutex.h"
#include <errno.h>
#include <limits.h>
#include <string.h>

#define WREFS_DESTROY_SLEEPS 4u

void
xp_cond_view (const struct xp_cond_protocol *p, pthread_cond_t *cond,
              struct xp_cond_view *v)
{
  char *base = (char *) cond;
  v->cond = cond;
  v->wseq = (uint64_t *) (base + p->off_wseq);
  v->g1_start = (uint64_t *) (base + p->off_g1_start);
  v->g_size = (unsigned *) (base + p->off_g_size);
  v->orig_size = (unsigned *) (base + p->off_orig_size);
  v->wrefs = (unsigned *) (base + p->off_wrefs);
  v->g_signals = (unsigned *) (base + p->off_g_signals);
}

void
xp_cond_wake (unsigned *word, int count)
{
  xp_futex_wake ((int *) word, count, false);
}

void
xp_cond_sleep (unsigned *word, unsigned value)
{
  xp_futex_wait ((int *) word, (int) value, false);
}

uint64_t
xp_cond_g1_start (const struct xp_cond_protocol *p,
                  const struct xp_cond_view *v)
{
  return __atomic_load_n (v->g1_start, __ATOMIC_RELAXED) >> p->g1_start_shift;
}

/* ---- the internal lock (low bits of __g1_orig_size) ------------------ */

static void
lock_internal (const struct xp_cond_view *v)
{
  unsigned *word = v->orig_size;
  unsigned s = xp_load_relaxed (word);
  while ((s & 3) == 0)
    if (__atomic_compare_exchange_n (word, &s, s | 1, true, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
      return;
  for (;;)
    {
      /* Mark the lock as having a sleeper; if it was free, it is ours.  */
      while ((s & 3) != 2)
        if (__atomic_compare_exchange_n (word, &s, (s & ~3u) | 2, true,
                                         __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
          {
            if ((s & 3) == 0)
              return;
            break;
          }
      xp_cond_sleep (word, (s & ~3u) | 2);
      s = xp_load_relaxed (word);
    }
}

static void
unlock_internal (const struct xp_cond_view *v)
{
  if ((__atomic_fetch_and (v->orig_size, ~3u, __ATOMIC_RELEASE) & 3) == 2)
    xp_cond_wake (v->orig_size, 1);
}

unsigned
xp_cond_orig_size (const struct xp_cond_view *v)
{
  return xp_load_relaxed (v->orig_size) >> 2;
}

/* The lock bits may change from 1 to 2 under us, and must survive the
   store.  */
void
xp_cond_set_orig_size (const struct xp_cond_view *v, unsigned size)
{
  unsigned s = (xp_load_relaxed (v->orig_size) & 3) | (size << 2);
  if ((__atomic_exchange_n (v->orig_size, s, __ATOMIC_RELAXED) & 3)
      != (s & 3))
    xp_store_relaxed (v->orig_size, (size << 2) | 2);
}

/* ---- signal and broadcast ------------------------------------------ */

static bool
has_waiters (const struct xp_cond_view *v)
{
  return (xp_load_relaxed (v->wrefs) >> 3) != 0;
}

/* A signaller's start: false when nobody waits; else the internal lock
   is taken, and *next is the next waiter's position and *g1 G1's slot.  */
static bool
begin_signalling (const struct xp_cond_protocol *p, pthread_cond_t *cond,
                  struct xp_cond_view *v, uint64_t *next, unsigned *g1)
{
  xp_cond_view (p, cond, v);
  if (!has_waiters (v))
    return false;
  lock_internal (v);
  uint64_t wseq = xp_load_relaxed (v->wseq);
  *next = wseq >> 1;
  *g1 = (unsigned) (wseq & 1) ^ 1;
  return true;
}

int
xp_cond_protocol_signal (const struct xp_cond_protocol *p,
                         pthread_cond_t *cond)
{
  struct xp_cond_view v;
  uint64_t next;
  unsigned g1;
  if (!begin_signalling (p, cond, &v, &next, &g1))
    return 0;
  bool woke = false;
  if (v.g_size[g1] != 0 || p->switch_groups (&v, next, &g1))
    {
      __atomic_fetch_add (&v.g_signals[g1], p->signal_weight,
                          __ATOMIC_RELAXED);
      v.g_size[g1]--;
      woke = true;
    }
  unlock_internal (&v);
  if (woke)
    xp_cond_wake (&v.g_signals[g1], 1);
  return 0;
}

/* Every unsignalled waiter of slot g gets its signal.  */
static void
signal_group (const struct xp_cond_protocol *p, const struct xp_cond_view *v,
              unsigned g)
{
  __atomic_fetch_add (&v->g_signals[g], v->g_size[g] * p->signal_weight,
                      __ATOMIC_RELAXED);
  v->g_size[g] = 0;
}

int
xp_cond_protocol_broadcast (const struct xp_cond_protocol *p,
                            pthread_cond_t *cond)
{
  struct xp_cond_view v;
  uint64_t next;
  unsigned g1;
  if (!begin_signalling (p, cond, &v, &next, &g1))
    return 0;
  if (v.g_size[g1] != 0)
    {
      signal_group (p, &v, g1);
      /* Before the switch, which may wait for these sleepers to leave.  */
      xp_cond_wake (&v.g_signals[g1], INT_MAX);
    }
  bool woke = p->switch_groups (&v, next, &g1);
  if (woke)
    signal_group (p, &v, g1);
  unlock_internal (&v);
  if (woke)
    xp_cond_wake (&v.g_signals[g1], INT_MAX);
  return 0;
}

/* ---- waiting --------------------------------------------------------- */

void
xp_cond_protocol_withdraw (const struct xp_cond_protocol *p,
                           const struct xp_cond_view *v, uint64_t seq,
                           unsigned g)
{
  bool took_signal = false, overflow = false;
  lock_internal (v);
  uint64_t start = xp_cond_g1_start (p, v);
  if (start > seq)
    took_signal = true;         /* its group was signalled in full */
  else if (start + xp_cond_orig_size (v) <= seq)
    {
      /* Still in G2, whose size counts down from zero.  Past the bound, a
         broadcast gives everyone a clean start (and signals nobody in
         particular).  */
      if (v->g_size[g] + XP_COND_MAX_GROUP_SIZE == 0)
        overflow = true;
      else
        v->g_size[g]--;
    }
  else if (v->g_size[g] == 0)
    took_signal = true;         /* G1's last signal was its */
  else
    v->g_size[g]--;
  unlock_internal (v);
  if (overflow)
    xp_cond_protocol_broadcast (p, v->cond);
  else if (took_signal)
    xp_cond_protocol_signal (p, v->cond);
}

static void
leave (const struct xp_cond_view *v)
{
  /* The last waiter, and destroy sleeps: wake it.  */
  if ((__atomic_fetch_add (v->wrefs, -XP_COND_WREFS_WAITER, __ATOMIC_RELEASE)
       >> 2) == 3)
    xp_cond_wake (v->wrefs, INT_MAX);
}

int
xp_cond_protocol_wait (const struct xp_cond_protocol *p,
                       pthread_cond_t *cond, pthread_mutex_t *m,
                       clockid_t clock, const struct timespec *abstime)
{
  int err = xp_check_abstime (abstime);
  if (err != 0)
    return err;
  /* A cancel already due acts here, the mutex held, nothing registered.  */
  xp_testcancel ();
  struct xp_cond_view v;
  xp_cond_view (p, cond, &v);
  uint64_t wseq = __atomic_fetch_add (v.wseq, 2, __ATOMIC_ACQUIRE);
  __atomic_fetch_add (v.wrefs, XP_COND_WREFS_WAITER, __ATOMIC_RELAXED);
  err = pthread_mutex_unlock (m);
  if (err != 0)
    {
      xp_cond_protocol_withdraw (p, &v, wseq >> 1, (unsigned) (wseq & 1));
      leave (&v);
      return err;
    }
  int outcome = p->await_signal (p, &v, wseq, clock, abstime);
  /* Before re-locking, so that destroy may run under the mutex.  */
  leave (&v);
  int relock = xp_mutex_relock_after_wait (m, NULL, false);
  if (outcome == XP_COND_WAIT_CANCELLED)
    xp_cancel_act ();
  return relock != 0 ? relock : outcome;
}

/* ---- life cycle -------------------------------------------------------- */

void
xp_cond_protocol_init (const struct xp_cond_protocol *p,
                       pthread_cond_t *cond, bool monotonic)
{
  memset (cond, 0, sizeof *cond);
  struct xp_cond_view v;
  xp_cond_view (p, cond, &v);
  *v.wrefs = XP_GLIBC_COND_PSHARED | (monotonic ? XP_GLIBC_COND_MONOTONIC
                                                : 0);
}

/* Waiters still owed a signal: the rest of G1 and all of G2.  */
static unsigned
unsignalled_waiters (const struct xp_cond_protocol *p,
                     const struct xp_cond_view *v)
{
  lock_internal (v);
  uint64_t wseq = xp_load_relaxed (v->wseq);
  unsigned g2 = (unsigned) (wseq & 1);
  unsigned in_g2 = (unsigned) ((wseq >> 1) - xp_cond_g1_start (p, v)
                               - xp_cond_orig_size (v))
                   + v->g_size[g2];
  unsigned n = v->g_size[g2 ^ 1] + in_g2;
  unlock_internal (v);
  return n;
}

int
xp_cond_protocol_destroy (const struct xp_cond_protocol *p,
                          pthread_cond_t *cond)
{
  struct xp_cond_view v;
  xp_cond_view (p, cond, &v);
  if (unsignalled_waiters (p, &v) != 0)
    return EBUSY;
  /* Signalled waiters may still be on their way out: wait for them, as
     POSIX allows destroying right after a broadcast.  */
  unsigned w = __atomic_fetch_or (v.wrefs, WREFS_DESTROY_SLEEPS,
                                  __ATOMIC_ACQUIRE);
  while ((w >> 3) != 0)
    {
      xp_cond_sleep (v.wrefs, w);
      w = xp_load_acquire (v.wrefs);
    }
  return 0;
}
