/* Condition variable attributes (layout in cond.h).  */
#define _GNU_SOURCE
#include "cond.h"
#include "export.h"
#include <errno.h>

static inline int *
word (const pthread_condattr_t *attr)
{
  return (int *) attr;
}

int
pthread_condattr_init (pthread_condattr_t *attr)
{
  *word (attr) = 0;
  return 0;
}
XP_EXPORT (pthread_condattr_init)

int
pthread_condattr_destroy (pthread_condattr_t *attr)
{
  return 0;
}
XP_EXPORT (pthread_condattr_destroy)

int
pthread_condattr_setpshared (pthread_condattr_t *attr, int pshared)
{
  if (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)
    return EINVAL;
  if (pshared == PTHREAD_PROCESS_SHARED)
    *word (attr) |= XP_CONDATTR_PSHARED;
  else
    *word (attr) &= ~XP_CONDATTR_PSHARED;
  return 0;
}
XP_EXPORT (pthread_condattr_setpshared)

int
pthread_condattr_getpshared (const pthread_condattr_t *attr, int *pshared)
{
  *pshared = (*word (attr) & XP_CONDATTR_PSHARED) ? PTHREAD_PROCESS_SHARED
                                                  : PTHREAD_PROCESS_PRIVATE;
  return 0;
}
XP_EXPORT (pthread_condattr_getpshared)

int
pthread_condattr_setclock (pthread_condattr_t *attr, clockid_t clock)
{
  if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
    return EINVAL;
  if (clock == CLOCK_MONOTONIC)
    *word (attr) |= XP_CONDATTR_MONOTONIC;
  else
    *word (attr) &= ~XP_CONDATTR_MONOTONIC;
  return 0;
}
XP_EXPORT (pthread_condattr_setclock)

int
pthread_condattr_getclock (const pthread_condattr_t *attr, clockid_t *clock)
{
  *clock = (*word (attr) & XP_CONDATTR_MONOTONIC) ? CLOCK_MONOTONIC
                                                  : CLOCK_REALTIME;
  return 0;
}
XP_EXPORT (pthread_condattr_getclock)
