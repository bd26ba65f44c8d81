/* Priority-inheritance mutexes, robust or not, in the kernel's PI-futex
   protocol (Documentation/locking/pi-futex.rst, futex(2)) as glibc uses
   it, so that a process-shared one works between xpthread and glibc.

   Lock word (__lock), a private futex unless the mutex is process-shared
   (robust ones always are, as in mutex-robust.c):
     0                                    unlocked
     tid                                  held by tid, no waiter in the kernel
     tid | FUTEX_WAITERS                  held, the kernel queues waiters
     [tid |] FUTEX_OWNER_DIED [| WAITERS] robust only: the owner died
   __owner and __count mean what they mean for robust mutexes
   (mutex-robust.c): tid, or INCONSISTENT / NOTRECOVERABLE after a death.

   Transitions:
     lock      0 -> tid by CAS in user space.  Otherwise FUTEX_LOCK_PI: the
               kernel sets WAITERS, queues the caller by priority, boosts
               the owner (and the chain behind it), and returns once it
               has written the caller's tid in the word.
     unlock    tid -> 0 by CAS when the word is exactly our tid; anything
               else (WAITERS) goes to FUTEX_UNLOCK_PI, which hands the word
               to the top waiter (tid' | WAITERS if more wait) and ends
               the boost.
     death     (robust) the kernel replaces the tid by OWNER_DIED and, if
               waiters are queued, hands the word to the top one;
               otherwise the next locker's FUTEX_LOCK_PI (or TRYLOCK_PI)
               takes it over, the CAS from 0 having failed.  Either way
               the new owner finds OWNER_DIED, clears it and reports
               EOWNERDEAD.
     recover / unrecoverable: as in mutex-robust.c, with FUTEX_UNLOCK_PI to
               let go.

   No wake-up can be lost: once the word leaves "0 or exactly tid" it is
   the kernel, under its own locks, that queues waiters and hands the word
   over; user space only ever changes the word by CAS from 0 or to 0 from
   exactly its own tid, i.e. when no waiter is queued, and by the new
   owner's atomic AND that clears OWNER_DIED and keeps WAITERS.

   No spinning: a waiter must be queued in the kernel for its priority to
   reach the owner; a spinning high-priority waiter would do the opposite
   of what the protocol is for.

   The kernel answers EDEADLK when the lock would close a cycle of owners
   (itself included).  An error-checking or recursive mutex reports it;
   a normal or adaptive one must deadlock, as POSIX asks and glibc does,
   so the caller sleeps until its deadline, if any.  */
#define _GNU_SOURCE
#include "mutex.h"
#include "robust-list.h"
#include <errno.h>
#include <limits.h>

static inline int *
word_of (pthread_mutex_t *m)
{
  return &m->__data.__lock;
}

static inline long
futex_pi (int *word, int op, bool private_, const struct timespec *abstime)
{
  return xp_syscall4 (SYS_futex, word, op | (private_ ? FUTEX_PRIVATE_FLAG : 0),
                      0, abstime);
}

/* FUTEX_LOCK_PI measures its absolute timeout on CLOCK_REALTIME only;
   FUTEX_LOCK_PI2 (Linux 5.14) on CLOCK_MONOTONIC unless told otherwise.
   Before 5.14 a monotonic deadline becomes a realtime one, recomputed
   whenever the kernel times out early because the clocks moved apart. */
static int no_lock_pi2;

static long
monotonic_lock_pi (int *word, bool private_, const struct timespec *abstime)
{
  if (!xp_load_relaxed (&no_lock_pi2))
    {
      long r = futex_pi (word, FUTEX_LOCK_PI2, private_, abstime);
      if (r != -ENOSYS)
        return r;
      xp_store_relaxed (&no_lock_pi2, 1);
    }
  for (;;)
    {
      struct timespec mono, real;
      clock_gettime (CLOCK_MONOTONIC, &mono);
      clock_gettime (CLOCK_REALTIME, &real);
      long sec = abstime->tv_sec - mono.tv_sec;
      long nsec = abstime->tv_nsec - mono.tv_nsec;
      if (sec < 0 || (sec == 0 && nsec <= 0))
        return -ETIMEDOUT;
      real.tv_sec += sec;
      real.tv_nsec += nsec;
      if (real.tv_nsec < 0)
        {
          real.tv_nsec += 1000000000;
          real.tv_sec--;
        }
      else if (real.tv_nsec >= 1000000000)
        {
          real.tv_nsec -= 1000000000;
          real.tv_sec++;
        }
      long r = futex_pi (word, FUTEX_LOCK_PI, private_, &real);
      if (r != -ETIMEDOUT)
        return r;
    }
}

static long
lock_pi (int *word, bool private_, clockid_t clock,
         const struct timespec *abstime)
{
  if (abstime != NULL && clock == CLOCK_MONOTONIC)
    return monotonic_lock_pi (word, private_, abstime);
  return futex_pi (word, FUTEX_LOCK_PI, private_, abstime);
}

/* Let the word go: the kernel must hand it over when waiters are queued
   (or the word is no longer exactly ours).  */
static void
release_pi (pthread_mutex_t *m, int tid, bool private_)
{
  int *word = word_of (m);
  int current = xp_load_relaxed (word);
  do
    if (current != tid)
      {
        futex_pi (word, FUTEX_UNLOCK_PI, private_, NULL);
        return;
      }
  while (!__atomic_compare_exchange_n (word, &current, 0, false,
                                       __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

static inline void
clear_pending (struct robust_list_head *head)
{
  if (head != NULL)
    xp_robust_clear_pending (head);
}

/* The deadlock a normal mutex owes its caller: no wake-up ever comes.  */
static int
deadlock (clockid_t clock, const struct timespec *abstime)
{
  int never = 0;
  while (xp_futex_wait_abs (&never, 0, clock, abstime, true) != -ETIMEDOUT)
    ;
  return ETIMEDOUT;
}

/* The caller holds the word (left as the kernel or its CAS made it).  */
static int
took_word (struct robust_list_head *head, pthread_mutex_t *m, int tid,
           bool private_)
{
  if (head != NULL && (xp_load_relaxed (word_of (m)) & FUTEX_OWNER_DIED))
    {
      xp_fetch_and (word_of (m), ~FUTEX_OWNER_DIED);
      m->__data.__count = 1;
      m->__data.__owner = XP_MUTEX_INCONSISTENT;
      xp_robust_enqueue (head, m, true);
      xp_robust_clear_pending (head);
      return EOWNERDEAD;
    }
  if (head != NULL && m->__data.__owner == XP_MUTEX_NOTRECOVERABLE)
    {
      m->__data.__count = 0;
      futex_pi (word_of (m), FUTEX_UNLOCK_PI, private_, NULL);
      xp_robust_clear_pending (head);
      return ENOTRECOVERABLE;
    }
  m->__data.__count = 1;
  if (head != NULL)
    {
      xp_robust_enqueue (head, m, true);
      xp_robust_clear_pending (head);
    }
  m->__data.__owner = tid;
  m->__data.__nusers++;
  return 0;
}

static struct robust_list_head *
begin (pthread_mutex_t *m, int kind)
{
  if ((kind & XP_MUTEX_ROBUST) == 0)
    return NULL;
  struct robust_list_head *head = xp_robust_head ();
  xp_robust_set_pending (head, m, true);
  return head;
}

int
xp_mutex_pi_lock (pthread_mutex_t *m, int kind, clockid_t clock,
                  const struct timespec *abstime)
{
  int tid = xp_self_tid ();
  int type = kind & XP_MUTEX_TYPE_MASK;
  bool private_ = xp_mutex_private (kind);
  struct robust_list_head *head = begin (m, kind);
  int *word = word_of (m);
  if ((xp_load_relaxed (word) & FUTEX_TID_MASK) == tid)
    {
      int answer = xp_mutex_held_by_caller (head, m, type);
      if (answer >= 0)
        return answer;
    }
  int expected = 0;
  if (!xp_cas (word, &expected, tid))
    {
      int err = xp_check_abstime (abstime);
      if (err == 0)
        err = (int) -lock_pi (word, private_, clock, abstime);
      if (err != 0)
        {
          clear_pending (head);
          /* ESRCH: the owner of a non-robust mutex is gone; it stays
             locked for ever, as it would with glibc.  */
          if ((err == EDEADLK || err == ESRCH)
              && type != PTHREAD_MUTEX_ERRORCHECK_NP
              && type != PTHREAD_MUTEX_RECURSIVE_NP)
            return deadlock (clock, abstime);
          return err;
        }
    }
  return took_word (head, m, tid, private_);
}

int
xp_mutex_pi_trylock (pthread_mutex_t *m, int kind)
{
  int tid = xp_self_tid ();
  bool private_ = xp_mutex_private (kind);
  struct robust_list_head *head = begin (m, kind);
  int *word = word_of (m);
  if ((xp_load_relaxed (word) & FUTEX_TID_MASK) == tid)
    {
      int answer = xp_mutex_held_by_caller (head, m,
                                            kind & XP_MUTEX_TYPE_MASK);
      if (answer >= 0)
        return answer;
    }
  int expected = 0;
  if (!xp_cas (word, &expected, tid))
    {
      /* Only a dead owner's word may be taken over, and only the kernel
         can do it, as waiters may be queued on it.  */
      if (head == NULL || (expected & FUTEX_OWNER_DIED) == 0
          || futex_pi (word, FUTEX_TRYLOCK_PI, private_, NULL) != 0)
        {
          clear_pending (head);
          return EBUSY;
        }
    }
  return took_word (head, m, tid, private_);
}

int
xp_mutex_pi_unlock (pthread_mutex_t *m, int kind)
{
  int tid = xp_self_tid ();
  bool robust = (kind & XP_MUTEX_ROBUST) != 0;
  bool mine = (xp_load_relaxed (word_of (m)) & FUTEX_TID_MASK) == tid;
  bool inconsistent = robust && mine
                      && m->__data.__owner == XP_MUTEX_INCONSISTENT;
  if ((kind & XP_MUTEX_TYPE_MASK) == PTHREAD_MUTEX_RECURSIVE_NP)
    {
      if (!inconsistent && m->__data.__owner != tid)
        return EPERM;
      if (--m->__data.__count != 0)
        return inconsistent ? ENOTRECOVERABLE : 0;
    }
  else if (!mine)
    return EPERM;
  struct robust_list_head *head = NULL;
  if (robust)
    {
      head = xp_robust_head ();
      xp_robust_set_pending (head, m, true);
      xp_robust_dequeue (head, m);
    }
  m->__data.__owner = inconsistent ? XP_MUTEX_NOTRECOVERABLE : 0;
  m->__data.__nusers--;
  release_pi (m, tid, xp_mutex_private (kind));
  clear_pending (head);
  return 0;
}

/* Whether the kernel implements PI futexes: FUTEX_UNLOCK_PI on a word we
   do not own fails with EPERM where it does.  */
bool
xp_mutex_pi_supported (void)
{
  static int answer;   /* 0 unknown, 1 yes, 2 no */
  int known = xp_load_relaxed (&answer);
  if (known == 0)
    {
      int probe = 0;
      known = futex_pi (&probe, FUTEX_UNLOCK_PI, true, NULL) == -ENOSYS ? 2
                                                                       : 1;
      xp_store_relaxed (&answer, known);
    }
  return known == 1;
}
