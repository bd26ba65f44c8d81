/* Mutex internals shared by the mutex and condition variable code.

   pthread_mutex_t keeps glibc's layout and lock-word protocol, so that
   static initialisers mean what they mean with glibc and a process-shared
   mutex can be used by xpthread and glibc processes at once.  */
#ifndef XP_SYNC_MUTEX_H
#define XP_SYNC_MUTEX_H

#include "thread.h"
#include <pthread.h>
#include <time.h>

/* glibc's __kind: the type in the low bits, then flags.  */
#define XP_MUTEX_TYPE_MASK 3
#define XP_MUTEX_ROBUST 16
#define XP_MUTEX_PRIO_INHERIT 32
#define XP_MUTEX_PRIO_PROTECT 64
#define XP_MUTEX_PSHARED 128
#define XP_MUTEX_ELISION_FLAGS (256 | 512)
/* Kinds whose protocol glibc's own code runs for now.  */
#define XP_MUTEX_GLIBC_KINDS \
  (XP_MUTEX_ROBUST | XP_MUTEX_PRIO_INHERIT | XP_MUTEX_PRIO_PROTECT)

static inline int
xp_mutex_kind (const pthread_mutex_t *m)
{
  return xp_load_relaxed (&m->__data.__kind);
}

static inline bool
xp_mutex_word_protocol (int kind)
{
  return kind >= 0 && (kind & XP_MUTEX_GLIBC_KINDS) == 0;
}

static inline bool
xp_mutex_private (int kind)
{
  return (kind & XP_MUTEX_PSHARED) == 0;
}

/* Lock after a condition wait: other waiters may be asleep on the word,
   so take it in the "waiters" state and let the unlock wake them.  */
int xp_mutex_relock_after_wait (pthread_mutex_t *m) XP_HIDDEN;

/* glibc's implementation of the kinds xpthread does not run itself yet
   (robust, priority inheritance, priority protection).  */
struct xp_glibc_mutex_api
{
  int (*init) (pthread_mutex_t *, const pthread_mutexattr_t *);
  int (*destroy) (pthread_mutex_t *);
  int (*lock) (pthread_mutex_t *);
  int (*trylock) (pthread_mutex_t *);
  int (*unlock) (pthread_mutex_t *);
  int (*clocklock) (pthread_mutex_t *, clockid_t, const struct timespec *);
  int (*consistent) (pthread_mutex_t *);
  int (*getprioceiling) (const pthread_mutex_t *, int *);
  int (*setprioceiling) (pthread_mutex_t *, int, int *);
  int (*attr_init) (pthread_mutexattr_t *);
  int (*attr_settype) (pthread_mutexattr_t *, int);
  int (*attr_setpshared) (pthread_mutexattr_t *, int);
  int (*attr_setrobust) (pthread_mutexattr_t *, int);
  int (*attr_setprotocol) (pthread_mutexattr_t *, int);
  int (*attr_setprioceiling) (pthread_mutexattr_t *, int);
};
const struct xp_glibc_mutex_api *xp_glibc_mutex (void) XP_HIDDEN;

#endif
