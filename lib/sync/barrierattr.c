/* Barrier attributes: glibc's layout, one int holding the pshared
   value.  */
#define _GNU_SOURCE
#include "export.h"
#include <errno.h>
#include <pthread.h>

static inline int *
pshared_word (const pthread_barrierattr_t *attr)
{
  return (int *) attr;
}

int
pthread_barrierattr_init (pthread_barrierattr_t *attr)
{
  *pshared_word (attr) = PTHREAD_PROCESS_PRIVATE;
  return 0;
}
XP_EXPORT (pthread_barrierattr_init)

int
pthread_barrierattr_destroy (pthread_barrierattr_t *attr)
{
  return 0;
}
XP_EXPORT (pthread_barrierattr_destroy)

int
pthread_barrierattr_setpshared (pthread_barrierattr_t *attr, int pshared)
{
  if (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)
    return EINVAL;
  *pshared_word (attr) = pshared;
  return 0;
}
XP_EXPORT (pthread_barrierattr_setpshared)

int
pthread_barrierattr_getpshared (const pthread_barrierattr_t *attr,
                                int *pshared)
{
  *pshared = *pshared_word (attr);
  return 0;
}
XP_EXPORT (pthread_barrierattr_getpshared)
