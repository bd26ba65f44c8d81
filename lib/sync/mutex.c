/* Mutexes: normal (the default), adaptive, recursive and error-checking,
   private or process-shared.  Robust, priority-inheritance and
   priority-protection mutexes run glibc's implementation for now (same
   layout, so it works in xpthread threads); see nptl-compat/glibc-sync.c.

   Lock word (__lock), glibc's protocol, private or shared futex:
     0  unlocked
     1  locked, no thread asleep on the word
     2  locked, threads may be asleep
   lock:    CAS 0 -> 1.  Failing that, spin (spin-policy.h) trying CAS
            0 -> 1 whenever the word reads 0; failing that, exchange in 2
            and sleep while the word is 2, until the exchange returns 0
            (then the lock is ours, marked 2 at the cost of at most one
            needless wake).
   unlock:  exchange in 0; if the old value was 2, wake one sleeper.
   No wake-up is lost: a thread only sleeps on the value 2, which only an
   unlock's exchange removes, and every such unlock wakes one sleeper;
   FUTEX_WAIT compares the word and sleeps atomically.  A spinner that
   takes the lock with 1 while others sleep is harmless: a sleeper woken
   for it swaps 2 back in before sleeping again, so the next unlock wakes.

   Every kind but the default private one records the owner's tid and
   counts __nusers, as glibc does, so that error checks and recursion work
   and a shared mutex looks the same to a glibc process.  The default
   private mutex skips that bookkeeping, which only a debugger would see:
   it keeps the common lock and unlock to a handful of instructions.  */
#define _GNU_SOURCE
#include "mutex.h"
#include "export.h"
#include "mutexattr.h"
#include "spin-policy.h"
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/single_threaded.h>

static inline int
self_tid (void)
{
  struct xp_thread *self = xp_self_ptr;
  return xp_likely (self != NULL) ? self->tid : xp_adopt_current ()->tid;
}

static inline void
take_ownership (pthread_mutex_t *m, int kind, int tid)
{
  if (kind == 0)
    return;
  m->__data.__owner = tid;
  m->__data.__nusers++;
}

static inline void
give_up_ownership (pthread_mutex_t *m, int kind)
{
  if (kind == 0)
    return;
  m->__data.__owner = 0;
  m->__data.__nusers--;
}

static inline void
release_word (pthread_mutex_t *m, int kind)
{
  if (xp_unlikely (xp_exchange_release (&m->__data.__lock, 0) == 2))
    xp_futex_wake (&m->__data.__lock, 1, xp_mutex_private (kind));
}

static int
check_abstime (const struct timespec *abstime)
{
  if (abstime == NULL)
    return 0;
  if (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000)
    return EINVAL;
  return abstime->tv_sec < 0 ? ETIMEDOUT : 0;
}

/* Sleep until the word is ours (left at 2).  */
static int
sleep_for_word (pthread_mutex_t *m, int kind, clockid_t clock,
                const struct timespec *abstime)
{
  int *word = &m->__data.__lock;
  int err = check_abstime (abstime);
  if (err != 0)
    return err;
  while (xp_exchange_acquire (word, 2) != 0)
    if (xp_futex_wait_abs (word, 2, clock, abstime, xp_mutex_private (kind))
        == -ETIMEDOUT)
      return ETIMEDOUT;
  return 0;
}

static int
acquire_word_slow (pthread_mutex_t *m, int kind, clockid_t clock,
                   const struct timespec *abstime)
{
  if (xp_spin_begin ())
    {
      bool taken = xp_spin_acquire (&m->__data.__lock, 1, &m->__data.__spins);
      xp_spin_end ();
      if (taken)
        return 0;
    }
  return sleep_for_word (m, kind, clock, abstime);
}

static inline int
acquire_word (pthread_mutex_t *m, int kind, clockid_t clock,
              const struct timespec *abstime)
{
  int expected = 0;
  if (xp_likely (xp_cas (&m->__data.__lock, &expected, 1)))
    return 0;
  return acquire_word_slow (m, kind, clock, abstime);
}

static int
lock_typed (pthread_mutex_t *m, int kind, clockid_t clock,
            const struct timespec *abstime)
{
  int tid = self_tid ();
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
  int err = acquire_word (m, kind, clock, abstime);
  if (err != 0)
    return err;
  if (type == PTHREAD_MUTEX_RECURSIVE_NP)
    m->__data.__count = 1;
  take_ownership (m, kind, tid);
  return 0;
}

static int
lock_any (pthread_mutex_t *m, int kind, clockid_t clock,
          const struct timespec *abstime)
{
  if (xp_unlikely (kind < 0))
    return EINVAL;   /* destroyed */
  if (!xp_mutex_word_protocol (kind))
    return xp_glibc_mutex ()->clocklock (m, clock, abstime);
  return lock_typed (m, kind, clock, abstime);
}

static __attribute__ ((noinline)) int
lock_slow (pthread_mutex_t *m, int kind)
{
  if (!xp_mutex_word_protocol (kind) && kind >= 0)
    return xp_glibc_mutex ()->lock (m);
  return lock_any (m, kind, CLOCK_REALTIME, NULL);
}

/* While the process has a single thread (glibc's own flag, cleared for
   good before the first thread starts), a private mutex needs no atomic
   instruction: nothing else can look at it.  */
static inline bool
alone (void)
{
  return __libc_single_threaded != 0;
}

int
pthread_mutex_lock (pthread_mutex_t *m)
{
  int kind = xp_mutex_kind (m);
  if (xp_likely (kind == 0))
    {
      if (alone () && m->__data.__lock == 0)
        {
          m->__data.__lock = 1;
          return 0;
        }
      int expected = 0;
      if (xp_likely (xp_cas (&m->__data.__lock, &expected, 1)))
        return 0;
    }
  return lock_slow (m, kind);
}
XP_EXPORT (pthread_mutex_lock)

int
pthread_mutex_timedlock (pthread_mutex_t *m, const struct timespec *abstime)
{
  return lock_any (m, xp_mutex_kind (m), CLOCK_REALTIME, abstime);
}
XP_EXPORT (pthread_mutex_timedlock)

int
pthread_mutex_clocklock (pthread_mutex_t *m, clockid_t clock,
                         const struct timespec *abstime)
{
  if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
    return EINVAL;
  return lock_any (m, xp_mutex_kind (m), clock, abstime);
}
XP_EXPORT (pthread_mutex_clocklock)

int
pthread_mutex_trylock (pthread_mutex_t *m)
{
  int kind = xp_mutex_kind (m);
  if (xp_unlikely (kind < 0))
    return EINVAL;
  if (!xp_mutex_word_protocol (kind))
    return xp_glibc_mutex ()->trylock (m);
  int tid = self_tid ();
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
    return EBUSY;
  if (type == PTHREAD_MUTEX_RECURSIVE_NP)
    m->__data.__count = 1;
  take_ownership (m, kind, tid);
  return 0;
}
XP_EXPORT (pthread_mutex_trylock)

static int
unlock_typed (pthread_mutex_t *m, int kind)
{
  int type = kind & XP_MUTEX_TYPE_MASK;
  if (type == PTHREAD_MUTEX_RECURSIVE_NP || type == PTHREAD_MUTEX_ERRORCHECK_NP)
    {
      if (m->__data.__owner != self_tid ()
          || xp_load_relaxed (&m->__data.__lock) == 0)
        return EPERM;
      if (type == PTHREAD_MUTEX_RECURSIVE_NP && --m->__data.__count != 0)
        return 0;
    }
  give_up_ownership (m, kind);
  release_word (m, kind);
  return 0;
}

static __attribute__ ((noinline)) int
unlock_slow (pthread_mutex_t *m, int kind)
{
  if (xp_unlikely (kind < 0))
    return EINVAL;
  if (!xp_mutex_word_protocol (kind))
    return xp_glibc_mutex ()->unlock (m);
  return unlock_typed (m, kind);
}

int
pthread_mutex_unlock (pthread_mutex_t *m)
{
  int kind = xp_mutex_kind (m);
  if (xp_unlikely (kind != 0))
    return unlock_slow (m, kind);
  if (alone () && m->__data.__lock == 1)
    m->__data.__lock = 0;
  else if (xp_unlikely (xp_exchange_release (&m->__data.__lock, 0) == 2))
    xp_futex_wake (&m->__data.__lock, 1, true);
  return 0;
}
XP_EXPORT (pthread_mutex_unlock)

int
xp_mutex_relock_after_wait (pthread_mutex_t *m)
{
  int kind = xp_mutex_kind (m);
  if (!xp_mutex_word_protocol (kind))
    return pthread_mutex_lock (m);
  int err = sleep_for_word (m, kind, CLOCK_REALTIME, NULL);
  if (err != 0)
    return err;
  if ((kind & XP_MUTEX_TYPE_MASK) == PTHREAD_MUTEX_RECURSIVE_NP)
    m->__data.__count = 1;
  take_ownership (m, kind, self_tid ());
  return 0;
}

static int
init_with_glibc (pthread_mutex_t *m, int attr)
{
  const struct xp_glibc_mutex_api *glibc = xp_glibc_mutex ();
  pthread_mutexattr_t gattr;
  int err = glibc->attr_init (&gattr);
  if (err == 0)
    err = glibc->attr_settype (&gattr, attr & XP_MUTEXATTR_TYPE_MASK);
  if (err == 0)
    err = glibc->attr_setpshared (&gattr, (attr & XP_MUTEXATTR_PSHARED)
                                  ? PTHREAD_PROCESS_SHARED
                                  : PTHREAD_PROCESS_PRIVATE);
  if (err == 0 && (attr & XP_MUTEXATTR_ROBUST))
    err = glibc->attr_setrobust (&gattr, PTHREAD_MUTEX_ROBUST);
  int protocol = (attr & XP_MUTEXATTR_PROTOCOL_MASK)
                 >> XP_MUTEXATTR_PROTOCOL_SHIFT;
  if (err == 0)
    err = glibc->attr_setprotocol (&gattr, protocol);
  /* An unset ceiling (0) lets glibc pick the lowest FIFO priority.  */
  if (err == 0 && protocol == PTHREAD_PRIO_PROTECT
      && (attr & XP_MUTEXATTR_CEILING_MASK) != 0)
    err = glibc->attr_setprioceiling (&gattr, (attr & XP_MUTEXATTR_CEILING_MASK)
                                              >> XP_MUTEXATTR_CEILING_SHIFT);
  return err != 0 ? err : glibc->init (m, &gattr);
}

int
pthread_mutex_init (pthread_mutex_t *m, const pthread_mutexattr_t *attr)
{
  int a = attr != NULL ? *xp_mutexattr_word (attr) : 0;
  if ((a & (XP_MUTEXATTR_ROBUST | XP_MUTEXATTR_PROTOCOL_MASK)) != 0)
    return init_with_glibc (m, a);
  memset (m, 0, sizeof *m);
  m->__data.__kind = (a & XP_MUTEXATTR_TYPE_MASK)
                     | ((a & XP_MUTEXATTR_PSHARED) ? XP_MUTEX_PSHARED : 0);
  return 0;
}
XP_EXPORT (pthread_mutex_init)

int
pthread_mutex_destroy (pthread_mutex_t *m)
{
  int kind = xp_mutex_kind (m);
  if (kind >= 0 && !xp_mutex_word_protocol (kind))
    return xp_glibc_mutex ()->destroy (m);
  if (xp_load_relaxed (&m->__data.__lock) != 0 || m->__data.__nusers != 0)
    return EBUSY;
  /* Later use of the mutex then fails with EINVAL, as with glibc.  */
  xp_store_relaxed (&m->__data.__kind, -1);
  return 0;
}
XP_EXPORT (pthread_mutex_destroy)

int
pthread_mutex_consistent (pthread_mutex_t *m)
{
  int kind = xp_mutex_kind (m);
  if (kind < 0 || (kind & XP_MUTEX_ROBUST) == 0)
    return EINVAL;
  return xp_glibc_mutex ()->consistent (m);
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
  return xp_glibc_mutex ()->getprioceiling (m, ceiling);
}
XP_EXPORT (pthread_mutex_getprioceiling)

int
pthread_mutex_setprioceiling (pthread_mutex_t *m, int ceiling, int *old)
{
  int kind = xp_mutex_kind (m);
  if (kind < 0 || (kind & XP_MUTEX_PRIO_PROTECT) == 0)
    return EINVAL;
  return xp_glibc_mutex ()->setprioceiling (m, ceiling, old);
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
