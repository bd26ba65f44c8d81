/* Condition variable internals; the protocol is described in cond.c.  */
#ifndef XP_SYNC_COND_H
#define XP_SYNC_COND_H

#include "common.h"
#include <pthread.h>
#include <time.h>

struct xp_cond_waiter;

/* A process-private condition variable.  Its flags (clock, and the
   process-shared bit, always clear here) are kept in glibc's __wrefs
   word, whose place depends on the running glibc (glibc-cond.h): bytes
   24 to 47 hold nothing else.  */
struct xp_cond
{
  int lock;                          /* xp_lock_t word, guards the list */
  int unused;
  struct xp_cond_waiter *newest;
  struct xp_cond_waiter *oldest;
  char flags_area[48 - 24];
};

_Static_assert (sizeof (struct xp_cond) == sizeof (pthread_cond_t),
                "struct xp_cond must be pthread_cond_t's size");

static inline struct xp_cond *
xp_cond (pthread_cond_t *c)
{
  return (struct xp_cond *) c;
}

/* Layout of pthread_condattr_t (an int).  */
#define XP_CONDATTR_PSHARED 1
#define XP_CONDATTR_MONOTONIC 2

/* The public functions under hidden names, for the old ABI (cond-old.c)
   and C11 (cnd.c): the public names exist only with their versions
   (export.h).  */
__typeof (pthread_cond_init) xp_cond_init XP_HIDDEN;
__typeof (pthread_cond_destroy) xp_cond_destroy XP_HIDDEN;
__typeof (pthread_cond_signal) xp_cond_signal XP_HIDDEN;
__typeof (pthread_cond_broadcast) xp_cond_broadcast XP_HIDDEN;
__typeof (pthread_cond_wait) xp_cond_wait XP_HIDDEN;
__typeof (pthread_cond_timedwait) xp_cond_timedwait XP_HIDDEN;

#endif
