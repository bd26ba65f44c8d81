/* Read-write lock internals shared by the lock and its attributes.

   pthread_rwlock_t keeps glibc's size and the two fields glibc's static
   initialisers and pthread_rwlock_init write: the kind in __flags and the
   process-shared indicator in __shared.  The rest of the 56 bytes holds
   xpthread's own protocol (see rwlock.c); it never stores a pointer, so a
   process-shared lock works between xpthread processes.  */
#ifndef XP_SYNC_RWLOCK_H
#define XP_SYNC_RWLOCK_H

#include "common.h"
#include <pthread.h>

_Static_assert (sizeof (pthread_rwlock_t) == __SIZEOF_PTHREAD_RWLOCK_T,
                "pthread_rwlock_t size");
_Static_assert (sizeof (pthread_rwlockattr_t) >= 2 * sizeof (int),
                "pthread_rwlockattr_t holds a kind and a pshared value");

/* glibc's pthread_rwlockattr_t: the kind, then the pshared value.  */
struct xp_rwlockattr
{
  int kind;
  int pshared;
};

static inline struct xp_rwlockattr *
xp_rwlockattr (const pthread_rwlockattr_t *attr)
{
  return (struct xp_rwlockattr *) attr;
}

#endif
