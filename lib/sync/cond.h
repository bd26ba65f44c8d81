/* Condition variable internals; the protocol is described in cond.c.  */
#ifndef XP_SYNC_COND_H
#define XP_SYNC_COND_H

#include "common.h"
#include <pthread.h>
#include <time.h>

/* Flags word, at the offset where glibc keeps the same two bits
   (__wrefs), so that process-shared condition variables, which keep
   glibc's layout, and xpthread's own private ones are told apart by the
   same bit, whoever initialised them.  */
#define XP_COND_PSHARED 1u
#define XP_COND_MONOTONIC 2u

struct xp_cond_waiter;

struct xp_cond
{
  int lock;                          /* xp_lock_t word, guards the list */
  int unused;
  struct xp_cond_waiter *newest;
  struct xp_cond_waiter *oldest;
  char pad[36 - 24];
  unsigned flags;
  char tail[48 - 40];
};

_Static_assert (sizeof (struct xp_cond) == sizeof (pthread_cond_t),
                "struct xp_cond must be pthread_cond_t's size");
_Static_assert (__builtin_offsetof (struct xp_cond, flags)
                == __builtin_offsetof (pthread_cond_t, __data.__wrefs),
                "flags must sit where glibc keeps them");

static inline struct xp_cond *
xp_cond (pthread_cond_t *c)
{
  return (struct xp_cond *) c;
}

/* Layout of pthread_condattr_t (an int).  */
#define XP_CONDATTR_PSHARED 1
#define XP_CONDATTR_MONOTONIC 2

struct xp_glibc_cond_api
{
  int (*destroy) (pthread_cond_t *);
  int (*signal) (pthread_cond_t *);
  int (*broadcast) (pthread_cond_t *);
  int (*wait) (pthread_cond_t *, pthread_mutex_t *);
  int (*timedwait) (pthread_cond_t *, pthread_mutex_t *,
                    const struct timespec *);
  int (*clockwait) (pthread_cond_t *, pthread_mutex_t *, clockid_t,
                    const struct timespec *);
};
const struct xp_glibc_cond_api *xp_glibc_cond (void) XP_HIDDEN;

/* Process-shared condition variables in glibc's protocol (cond-shared.c),
   used while xp_glibc_cond_protocol_known () says the running glibc
   speaks it; glibc's own functions otherwise.  */
bool xp_glibc_cond_protocol_known (void) XP_HIDDEN;
void xp_cond_shared_init (pthread_cond_t *, bool monotonic) XP_HIDDEN;
int xp_cond_shared_destroy (pthread_cond_t *) XP_HIDDEN;
int xp_cond_shared_signal (pthread_cond_t *) XP_HIDDEN;
int xp_cond_shared_broadcast (pthread_cond_t *) XP_HIDDEN;
int xp_cond_shared_wait (pthread_cond_t *, pthread_mutex_t *, clockid_t,
                         const struct timespec *) XP_HIDDEN;

/* The public functions under hidden names, for the old ABI.  */
__typeof (pthread_cond_init) xp_cond_init XP_HIDDEN;
__typeof (pthread_cond_destroy) xp_cond_destroy XP_HIDDEN;
__typeof (pthread_cond_signal) xp_cond_signal XP_HIDDEN;
__typeof (pthread_cond_broadcast) xp_cond_broadcast XP_HIDDEN;
__typeof (pthread_cond_wait) xp_cond_wait XP_HIDDEN;
__typeof (pthread_cond_timedwait) xp_cond_timedwait XP_HIDDEN;

#endif
