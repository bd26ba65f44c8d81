/* Read-write lock attributes: the kind (reader or writer preference) and
   the process-shared flag, in glibc's layout (rwlock.h).  */
#define _GNU_SOURCE
#include "rwlock.h"
#include "export.h"
#include <errno.h>

int
pthread_rwlockattr_init (pthread_rwlockattr_t *attr)
{
  xp_rwlockattr (attr)->kind = PTHREAD_RWLOCK_DEFAULT_NP;
  xp_rwlockattr (attr)->pshared = PTHREAD_PROCESS_PRIVATE;
  return 0;
}
XP_EXPORT (pthread_rwlockattr_init)

int
pthread_rwlockattr_destroy (pthread_rwlockattr_t *attr)
{
  return 0;
}
XP_EXPORT (pthread_rwlockattr_destroy)

int
pthread_rwlockattr_setkind_np (pthread_rwlockattr_t *attr, int kind)
{
  if (kind != PTHREAD_RWLOCK_PREFER_READER_NP
      && kind != PTHREAD_RWLOCK_PREFER_WRITER_NP
      && kind != PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)
    return EINVAL;
  xp_rwlockattr (attr)->kind = kind;
  return 0;
}
XP_EXPORT (pthread_rwlockattr_setkind_np)

int
pthread_rwlockattr_getkind_np (const pthread_rwlockattr_t *attr, int *kind)
{
  *kind = xp_rwlockattr (attr)->kind;
  return 0;
}
XP_EXPORT (pthread_rwlockattr_getkind_np)

int
pthread_rwlockattr_setpshared (pthread_rwlockattr_t *attr, int pshared)
{
  if (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)
    return EINVAL;
  xp_rwlockattr (attr)->pshared = pshared;
  return 0;
}
XP_EXPORT (pthread_rwlockattr_setpshared)

int
pthread_rwlockattr_getpshared (const pthread_rwlockattr_t *attr, int *pshared)
{
  *pshared = xp_rwlockattr (attr)->pshared;
  return 0;
}
XP_EXPORT (pthread_rwlockattr_getpshared)
