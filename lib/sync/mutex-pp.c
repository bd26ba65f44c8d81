/* Priority-protection (priority ceiling) mutexes, in glibc's protocol so
   that a process-shared one works between xpthread and glibc processes.

   Lock word (__lock), a private futex unless process-shared: the ceiling
   in the high bits (glibc's PTHREAD_MUTEX_PRIO_CEILING_SHIFT 19, mask
   0xfff80000), the state in the low ones, as for a normal mutex:
     ceiling | 0   unlocked
     ceiling | 1   locked, no thread asleep on the word
     ceiling | 2   locked, threads may be asleep
   __owner always holds the owner's tid (the per-thread ceiling record
   must only ever be undone by the thread that made it).

   Transitions:
     lock     first raise the caller to the ceiling it read (refused with
              EINVAL when the caller's own priority is above it), then
              CAS ceiling|0 -> ceiling|1; failing that, CAS 1 -> 2 and
              sleep while the word is ceiling|2, retaking it with 2.  If
              the ceiling changed meanwhile, start again at the new one
              (the raise is moved there).
     unlock   CAS the state to 0 keeping the ceiling; wake one sleeper if
              it was 2; then drop the caller's raise.
     set the ceiling   take the word as lock does, without a raise (or
              keep it, when the caller holds the recursive mutex), store
              the new ceiling with the state it leaves, wake every
              sleeper: each sees a new ceiling and starts again.
   No wake-up is lost: a thread sleeps only on ceiling|2, which only an
   unlock (waking one) or a ceiling change (waking all) replaces, and a
   thread that takes the word after sleeping keeps it at 2.

   The raise follows glibc's __pthread_tpp_change_priority: each thread
   counts the ceilings it holds (struct xp_thread), its kernel priority is
   the highest of them or its own, whichever is higher, and its own
   priority and policy are read from the kernel when the first ceiling is
   taken and restored when the last is let go.  pthread_setschedparam
   changes the remembered one meanwhile (xp_pp_set_scheduling).  Like
   glibc's, this works for SCHED_FIFO and SCHED_RR threads; the kernel
   refuses a priority to a SCHED_OTHER thread, and the lock reports it.

   Waiters do not spin: a lock already costs system calls for the raise,
   and a thread raised to a realtime ceiling must not spin against an
   owner that may share its CPU.  */
#define _GNU_SOURCE
#include "mutex.h"
#include "mutex-pp.h"
#include <errno.h>
#include <limits.h>
#include <sched.h>

#define CEILING_MASK ((int) XP_MUTEX_CEILING_MASK)
/* take_word's answer when the ceiling changed under it.  */
#define CEILING_CHANGED (-1)
#define STATE(word) ((word) & ~CEILING_MASK)

static inline int
ceiling_of (int word)
{
  return (int) (((unsigned) word & XP_MUTEX_CEILING_MASK)
                >> XP_MUTEX_CEILING_SHIFT);
}

static inline int *
word_of (pthread_mutex_t *m)
{
  return &m->__data.__lock;
}

static int
highest_held (const struct xp_thread *self, int from)
{
  for (int p = from; p > 0; p--)
    if (self->pp_held[p] != 0)
      return p;
  return 0;
}

/* Give up one hold at ceiling drop and take one at ceiling take (0:
   none), and set the calling thread's kernel priority to match.  */
static int
change_ceilings (struct xp_thread *self, int drop, int take)
{
  int err = 0;
  xp_lock (&self->sched_lock);
  int old_max = self->pp_ceiling;
  if (take > 0 && self->pp_held[take] == UINT_MAX)
    err = EAGAIN;
  else if (take > 0 && old_max == 0)
    {
      struct sched_param own;
      long policy = xp_syscall1 (SYS_sched_getscheduler, self->tid);
      long r = policy < 0 ? policy
                          : xp_syscall2 (SYS_sched_getparam, self->tid, &own);
      if (r < 0)
        err = (int) -r;
      else
        {
          self->pp_policy = (int) policy;
          self->pp_base = own.sched_priority;
        }
    }
  if (err != 0)
    {
      xp_unlock (&self->sched_lock);
      return err;
    }
  if (take > 0)
    self->pp_held[take]++;
  if (drop > 0)
    self->pp_held[drop]--;
  int new_max = highest_held (self, XP_PP_PRIORITIES - 1);
  if (new_max != old_max
      && (self->pp_base < new_max || self->pp_base < old_max))
    {
      struct sched_param p = {
        .sched_priority = new_max > self->pp_base ? new_max : self->pp_base
      };
      long r = xp_syscall3 (SYS_sched_setscheduler, self->tid,
                            self->pp_policy, &p);
      if (r < 0)
        {
          err = (int) -r;
          if (take > 0)
            self->pp_held[take]--;
          if (drop > 0)
            self->pp_held[drop]++;
          new_max = old_max;
        }
    }
  self->pp_ceiling = new_max;
  xp_unlock (&self->sched_lock);
  return err;
}

/* The priority the caller has of its own, ceilings aside.  */
static int
own_priority (struct xp_thread *self)
{
  xp_lock (&self->sched_lock);
  int held = self->pp_ceiling;
  int base = self->pp_base;
  xp_unlock (&self->sched_lock);
  if (held > 0)
    return base;
  struct sched_param p;
  if (xp_syscall2 (SYS_sched_getparam, self->tid, &p) != 0)
    return -1;
  return p.sched_priority;
}

/* Take the word at ceilval.  0: taken; CEILING_CHANGED (*seen then holds
   the word); EBUSY for a trylock; or the deadline's answer.  */
static int
take_word (int *word, int ceilval, bool try, bool private_, clockid_t clock,
           const struct timespec *abstime, int *seen)
{
  int current = ceilval;
  if (xp_cas (word, &current, ceilval | 1))
    return 0;
  for (;;)
    {
      if ((current & CEILING_MASK) != ceilval)
        {
          *seen = current;
          return CEILING_CHANGED;
        }
      if (try)
        return EBUSY;
      if (STATE (current) == 0)
        {
          if (xp_cas (word, &current, ceilval | 2))
            return 0;
          continue;
        }
      if (STATE (current) == 1 && !xp_cas (word, &current, ceilval | 2))
        continue;
      int err = xp_check_abstime (abstime);
      if (err != 0)
        return err;
      if (xp_futex_wait_abs (word, ceilval | 2, clock, abstime, private_)
          == -ETIMEDOUT)
        return ETIMEDOUT;
      current = xp_load_relaxed (word);
    }
}

static int
lock_pp (pthread_mutex_t *m, int kind, clockid_t clock,
         const struct timespec *abstime, bool try)
{
  struct xp_thread *self = xp_self ();
  int type = kind & XP_MUTEX_TYPE_MASK;
  if (m->__data.__owner == self->tid)
    {
      if (type == PTHREAD_MUTEX_ERRORCHECK_NP)
        return EDEADLK;
      if (type == PTHREAD_MUTEX_RECURSIVE_NP)
        {
          if (m->__data.__count == UINT_MAX)
            return EAGAIN;
          m->__data.__count++;
          return 0;
        }
    }
  int *word = word_of (m);
  int seen = xp_load_relaxed (word);
  int raised = 0;
  for (;;)
    {
      int ceiling = ceiling_of (seen);
      int err = 0;
      if (own_priority (self) > ceiling)
        err = EINVAL;
      else if (ceiling != raised)
        {
          err = change_ceilings (self, raised, ceiling);
          if (err == 0)
            raised = ceiling;
        }
      if (err == 0)
        err = take_word (word, seen & CEILING_MASK, try,
                         xp_mutex_private (kind), clock, abstime, &seen);
      if (err == CEILING_CHANGED)
        continue;
      if (err != 0)
        {
          if (raised > 0)
            change_ceilings (self, raised, 0);
          return err;
        }
      break;
    }
  m->__data.__owner = self->tid;
  m->__data.__count = 1;
  m->__data.__nusers++;
  return 0;
}

int
xp_mutex_pp_lock (pthread_mutex_t *m, int kind, clockid_t clock,
                  const struct timespec *abstime)
{
  return lock_pp (m, kind, clock, abstime, false);
}

int
xp_mutex_pp_trylock (pthread_mutex_t *m, int kind)
{
  return lock_pp (m, kind, CLOCK_REALTIME, NULL, true);
}

int
xp_mutex_pp_unlock (pthread_mutex_t *m, int kind)
{
  struct xp_thread *self = xp_self ();
  if (m->__data.__owner != self->tid)
    return EPERM;
  if ((kind & XP_MUTEX_TYPE_MASK) == PTHREAD_MUTEX_RECURSIVE_NP
      && --m->__data.__count != 0)
    return 0;
  m->__data.__owner = 0;
  m->__data.__nusers--;
  int *word = word_of (m);
  int old = xp_load_relaxed (word);
  while (!__atomic_compare_exchange_n (word, &old, old & CEILING_MASK, false,
                                       __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    ;
  if (STATE (old) > 1)
    xp_futex_wake (word, 1, xp_mutex_private (kind));
  return change_ceilings (self, ceiling_of (old), 0);
}

int
xp_mutex_pp_getprioceiling (const pthread_mutex_t *m)
{
  return ceiling_of (xp_load_relaxed (&m->__data.__lock));
}

int
xp_mutex_pp_setprioceiling (pthread_mutex_t *m, int kind, int ceiling,
                            int *old_ceiling)
{
  if (ceiling < sched_get_priority_min (SCHED_FIFO)
      || ceiling > sched_get_priority_max (SCHED_FIFO)
      || ceiling >= XP_PP_PRIORITIES)
    return EINVAL;
  struct xp_thread *self = xp_self ();
  int type = kind & XP_MUTEX_TYPE_MASK;
  bool held = m->__data.__owner == self->tid;
  if (held && type == PTHREAD_MUTEX_ERRORCHECK_NP)
    return EDEADLK;
  /* A normal mutex held by the caller deadlocks here, as in glibc.  */
  held = held && type == PTHREAD_MUTEX_RECURSIVE_NP;
  int *word = word_of (m);
  bool private_ = xp_mutex_private (kind);
  int seen = xp_load_relaxed (word);
  if (!held)
    while (take_word (word, seen & CEILING_MASK, false, private_,
                      CLOCK_REALTIME, NULL, &seen) != 0)
      ;
  int current = xp_load_relaxed (word);
  int old = ceiling_of (current);
  if (held)
    {
      int err = change_ceilings (self, old, ceiling);
      if (err != 0)
        return err;
    }
  if (old_ceiling != NULL)
    *old_ceiling = old;
  int state = held ? STATE (current) : 0;
  xp_store_release (word,
                    (int) ((unsigned) ceiling << XP_MUTEX_CEILING_SHIFT)
                    | state);
  xp_futex_wake (word, INT_MAX, private_);
  return 0;
}

long
xp_pp_set_scheduling (struct xp_thread *t, int tid, int policy, int priority)
{
  xp_lock (&t->sched_lock);
  struct sched_param p = { .sched_priority = priority };
  if (t->pp_ceiling > 0 && t->pp_ceiling > priority)
    p.sched_priority = t->pp_ceiling;
  long r = policy >= 0 ? xp_syscall3 (SYS_sched_setscheduler, tid, policy, &p)
                       : xp_syscall2 (SYS_sched_setparam, tid, &p);
  if (r == 0 && t->pp_ceiling > 0)
    {
      t->pp_base = priority;
      if (policy >= 0)
        t->pp_policy = policy;
    }
  xp_unlock (&t->sched_lock);
  return r;
}

int
xp_pp_reported_priority (struct xp_thread *t, int kernel_priority)
{
  xp_lock (&t->sched_lock);
  int reported = t->pp_ceiling > 0 ? t->pp_base : kernel_priority;
  xp_unlock (&t->sched_lock);
  return reported;
}
