/* Robust mutexes without priority inheritance (robust PI ones are in
   mutex-pi.c), in glibc's protocol so that a process-shared one works
   between xpthread and glibc processes.

   Lock word (__lock), always a shared futex: when an owner dies the
   kernel wakes a waiter with a shared wake, which is also why a robust
   mutex carries glibc's process-shared bit in __kind whatever its
   attribute said.
     0                               unlocked
     tid                             held by tid, nobody announced sleeping
     tid | FUTEX_WAITERS             held, threads may be asleep on it
     FUTEX_OWNER_DIED [| WAITERS]    free: the owner died holding it
   __owner: the owner's tid; PTHREAD_MUTEX_INCONSISTENT from EOWNERDEAD
   until pthread_mutex_consistent; PTHREAD_MUTEX_NOTRECOVERABLE for good
   once unlocked while inconsistent.  __count counts recursive holds.

   Transitions:
     lock      0 -> tid, by CAS.  A thread that has slept takes the word
               as tid | WAITERS: the unlock that woke it may have left
               other sleepers behind, whose announcement it must keep.
     contend   spin (spin-policy.h) while the word is held; then CAS in
               WAITERS and sleep while the word keeps that value.
     death     the kernel, walking the dead thread's robust list (or its
               list_op_pending entry): tid|w -> OWNER_DIED|w, waking one
               sleeper if w.
     recover   OWNER_DIED|w -> tid|w by CAS: EOWNERDEAD, __owner
               INCONSISTENT; pthread_mutex_consistent sets __owner to tid.
     unlock    exchange in 0, waking one sleeper if WAITERS was set; while
               inconsistent, __owner becomes NOTRECOVERABLE first.  Every
               later locker takes the word, sees NOTRECOVERABLE, and
               unlocks again (which wakes the next) to report
               ENOTRECOVERABLE.

   No wake-up is lost: a thread sleeps only while the word carries
   WAITERS (FUTEX_WAIT compares atomically); the only ways out of such a
   value, an unlock's exchange and the kernel's death handling, each wake
   one sleeper, and a woken thread that takes the lock keeps WAITERS so
   that its own unlock wakes the next.

   Around every change of ownership list_op_pending names the mutex, so a
   death between the word changing and the list catching up is still
   handled (robust-list.c).  Spinning is allowed: the waiter is not yet on
   the word, and a spinner that takes the lock behaves as any other
   locker.  */
#define _GNU_SOURCE
#include "mutex.h"
#include "robust-list.h"
#include "spin-policy.h"
#include <errno.h>
#include <limits.h>

static inline int *
word_of (pthread_mutex_t *m)
{
  return &m->__data.__lock;
}

static inline void
release_word (pthread_mutex_t *m)
{
  if (xp_exchange_release (word_of (m), 0) & FUTEX_WAITERS)
    xp_futex_wake (word_of (m), 1, false);
}

/* The caller holds the word after a death: record it and report it.  The
   old owner is still counted in __nusers, so the new one is not.  */
static int
took_from_dead_owner (struct robust_list_head *head, pthread_mutex_t *m)
{
  m->__data.__count = 1;
  m->__data.__owner = XP_MUTEX_INCONSISTENT;
  xp_robust_enqueue (head, m, false);
  xp_robust_clear_pending (head);
  return EOWNERDEAD;
}

/* The caller holds the word: finish taking ownership, or let go again if
   the mutex can no longer be used.  */
static int
took_word (struct robust_list_head *head, pthread_mutex_t *m, int tid)
{
  if (xp_unlikely (m->__data.__owner == XP_MUTEX_NOTRECOVERABLE))
    {
      m->__data.__count = 0;
      release_word (m);
      xp_robust_clear_pending (head);
      return ENOTRECOVERABLE;
    }
  m->__data.__count = 1;
  xp_robust_enqueue (head, m, false);
  xp_robust_clear_pending (head);
  m->__data.__owner = tid;
  m->__data.__nusers++;
  return 0;
}

int
xp_mutex_held_by_caller (struct robust_list_head *head, pthread_mutex_t *m,
                         int type)
{
  if (type == PTHREAD_MUTEX_ERRORCHECK_NP)
    {
      if (head != NULL)
        xp_robust_clear_pending (head);
      return EDEADLK;
    }
  if (type == PTHREAD_MUTEX_RECURSIVE_NP)
    {
      if (head != NULL)
        xp_robust_clear_pending (head);
      if (m->__data.__count == UINT_MAX)
        return EAGAIN;
      m->__data.__count++;
      return 0;
    }
  return -1;
}

int
xp_mutex_robust_lock (pthread_mutex_t *m, int kind, clockid_t clock,
                      const struct timespec *abstime)
{
  int tid = xp_self_tid ();
  int type = kind & XP_MUTEX_TYPE_MASK;
  struct robust_list_head *head = xp_robust_head ();
  int *word = word_of (m);
  xp_robust_set_pending (head, m, false);
  int keep_waiters = 0;
  bool spun = false;
  int old = xp_load_relaxed (word);
  for (;;)
    {
      if (old == 0)
        {
          if (xp_cas (word, &old, tid | keep_waiters))
            break;
          continue;
        }
      if (old & FUTEX_OWNER_DIED)
        {
          if (!xp_cas (word, &old, tid | (old & FUTEX_WAITERS) | keep_waiters))
            continue;
          return took_from_dead_owner (head, m);
        }
      bool mine = (old & FUTEX_TID_MASK) == tid;
      if (mine)
        {
          int answer = xp_mutex_held_by_caller (head, m, type);
          if (answer >= 0)
            return answer;
        }
      if (!spun && !mine)
        {
          spun = true;
          unsigned rounds;
          if (xp_spin_for_word (word_of (m), tid, xp_mutex_spin_state (m),
                                NULL, word_of (m), 0, &rounds))
            break;
          old = xp_load_relaxed (word);
          continue;
        }
      int err = xp_check_abstime (abstime);
      if (err != 0)
        {
          xp_robust_clear_pending (head);
          return err;
        }
      if ((old & FUTEX_WAITERS) == 0)
        {
          if (!xp_cas (word, &old, old | FUTEX_WAITERS))
            continue;
          old |= FUTEX_WAITERS;
        }
      keep_waiters = FUTEX_WAITERS;
      if (xp_futex_wait_abs (word, old, clock, abstime, false) == -ETIMEDOUT)
        {
          xp_robust_clear_pending (head);
          return ETIMEDOUT;
        }
      old = xp_load_relaxed (word);
    }
  return took_word (head, m, tid);
}

int
xp_mutex_robust_trylock (pthread_mutex_t *m, int kind)
{
  int tid = xp_self_tid ();
  struct robust_list_head *head = xp_robust_head ();
  int *word = word_of (m);
  xp_robust_set_pending (head, m, false);
  int old = xp_load_relaxed (word);
  for (;;)
    {
      if (old & FUTEX_OWNER_DIED)
        {
          if (!xp_cas (word, &old, tid | (old & FUTEX_WAITERS)))
            continue;
          return took_from_dead_owner (head, m);
        }
      if ((old & FUTEX_TID_MASK) == tid)
        {
          int answer = xp_mutex_held_by_caller (head, m,
                                            kind & XP_MUTEX_TYPE_MASK);
          if (answer >= 0)
            return answer;
        }
      if (old != 0)
        {
          xp_robust_clear_pending (head);
          return EBUSY;
        }
      if (xp_cas (word, &old, tid))
        return took_word (head, m, tid);
    }
}

int
xp_mutex_robust_unlock (pthread_mutex_t *m, int kind)
{
  int tid = xp_self_tid ();
  bool mine = (xp_load_relaxed (word_of (m)) & FUTEX_TID_MASK) == tid;
  bool inconsistent = mine && m->__data.__owner == XP_MUTEX_INCONSISTENT;
  if ((kind & XP_MUTEX_TYPE_MASK) == PTHREAD_MUTEX_RECURSIVE_NP)
    {
      if (!inconsistent && m->__data.__owner != tid)
        return EPERM;
      if (--m->__data.__count != 0)
        return inconsistent ? ENOTRECOVERABLE : 0;
    }
  else if (!mine)
    return EPERM;
  struct robust_list_head *head = xp_robust_head ();
  xp_robust_set_pending (head, m, false);
  xp_robust_dequeue (head, m);
  m->__data.__owner = inconsistent ? XP_MUTEX_NOTRECOVERABLE : 0;
  m->__data.__nusers--;
  release_word (m);
  xp_robust_clear_pending (head);
  return 0;
}

/* glibc destroys a held robust mutex, and programs go on.  The caller's
   own leaves its robust list first, which would otherwise link a mutex
   that is gone.  Busy: one that another live thread holds (its list
   links it) and one with sleepers (they would never wake).  For robust
   PI mutexes too.  */
int
xp_mutex_robust_destroy (pthread_mutex_t *m, int kind, int word)
{
  int owner = word & FUTEX_TID_MASK;
  if ((word & FUTEX_WAITERS) || (owner != 0 && owner != xp_self_tid ()))
    return EBUSY;
  if (owner != 0)
    {
      struct robust_list_head *head = xp_robust_head ();
      xp_robust_set_pending (head, m, (kind & XP_MUTEX_PRIO_INHERIT) != 0);
      xp_robust_dequeue (head, m);
      xp_robust_clear_pending (head);
    }
  return 0;
}

/* For robust PI mutexes too: the same fields mean the same.  */
int
xp_mutex_robust_consistent (pthread_mutex_t *m)
{
  int tid = xp_self_tid ();
  if (m->__data.__owner != XP_MUTEX_INCONSISTENT
      || (xp_load_relaxed (word_of (m)) & FUTEX_TID_MASK) != tid)
    return EINVAL;
  m->__data.__owner = tid;
  return 0;
}
