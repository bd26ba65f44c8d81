/* Mutex attributes (layout in mutexattr.h).  */
#define _GNU_SOURCE
#include "mutexattr.h"
#include "common.h"
#include "export.h"
#include <errno.h>
#include <sched.h>

/* glibc reads and writes the fields of any object, initialised or not
   (POSIX leaves the rest undefined): so do we.  */
static inline int
get_field (const pthread_mutexattr_t *attr, int mask, int shift)
{
  return (*xp_mutexattr_word (attr) & mask) >> shift;
}

static inline int
set_field (pthread_mutexattr_t *attr, int mask, int shift, int value)
{
  int *word = xp_mutexattr_word (attr);
  *word = (*word & ~mask) | ((value << shift) & mask);
  return 0;
}

static inline int
answer (int field, int *out)
{
  *out = field;
  return 0;
}

int
pthread_mutexattr_init (pthread_mutexattr_t *attr)
{
  *xp_mutexattr_word (attr) = PTHREAD_MUTEX_DEFAULT;
  return 0;
}
XP_EXPORT (pthread_mutexattr_init)

int
pthread_mutexattr_destroy (pthread_mutexattr_t *attr)
{
  /* The fields stay: glibc keeps them, and programs that destroy an
     attribute before its last pthread_mutex_init work there.  glibc
     touches nothing, so NULL is no error there either.  */
  (void) attr;
  return 0;
}
XP_EXPORT (pthread_mutexattr_destroy)

int
pthread_mutexattr_settype (pthread_mutexattr_t *attr, int type)
{
  if (type < PTHREAD_MUTEX_TIMED_NP || type > PTHREAD_MUTEX_ADAPTIVE_NP)
    return EINVAL;
  return set_field (attr, XP_MUTEXATTR_TYPE_MASK, 0, type);
}
XP_EXPORT (pthread_mutexattr_settype)

int
pthread_mutexattr_gettype (const pthread_mutexattr_t *attr, int *type)
{
  return answer (get_field (attr, XP_MUTEXATTR_TYPE_MASK, 0), type);
}
XP_EXPORT (pthread_mutexattr_gettype)

int
pthread_mutexattr_setpshared (pthread_mutexattr_t *attr, int pshared)
{
  if (pshared != PTHREAD_PROCESS_PRIVATE && pshared != PTHREAD_PROCESS_SHARED)
    return EINVAL;
  return set_field (attr, XP_MUTEXATTR_PSHARED, 0,
                    pshared == PTHREAD_PROCESS_SHARED
                    ? XP_MUTEXATTR_PSHARED : 0);
}
XP_EXPORT (pthread_mutexattr_setpshared)

int
pthread_mutexattr_getpshared (const pthread_mutexattr_t *attr, int *pshared)
{
  int shared = get_field (attr, XP_MUTEXATTR_PSHARED, 0);
  return answer (shared ? PTHREAD_PROCESS_SHARED : PTHREAD_PROCESS_PRIVATE,
                 pshared);
}
XP_EXPORT (pthread_mutexattr_getpshared)

int
pthread_mutexattr_setrobust (pthread_mutexattr_t *attr, int robust)
{
  if (robust != PTHREAD_MUTEX_STALLED && robust != PTHREAD_MUTEX_ROBUST)
    return EINVAL;
  return set_field (attr, XP_MUTEXATTR_ROBUST, 0,
                    robust == PTHREAD_MUTEX_ROBUST ? XP_MUTEXATTR_ROBUST : 0);
}
XP_EXPORT (pthread_mutexattr_setrobust)

int
pthread_mutexattr_getrobust (const pthread_mutexattr_t *attr, int *robust)
{
  int set = get_field (attr, XP_MUTEXATTR_ROBUST, 0);
  return answer (set ? PTHREAD_MUTEX_ROBUST : PTHREAD_MUTEX_STALLED, robust);
}
XP_EXPORT (pthread_mutexattr_getrobust)

int
pthread_mutexattr_setprotocol (pthread_mutexattr_t *attr, int protocol)
{
  if (protocol != PTHREAD_PRIO_NONE && protocol != PTHREAD_PRIO_INHERIT
      && protocol != PTHREAD_PRIO_PROTECT)
    return EINVAL;
  return set_field (attr, XP_MUTEXATTR_PROTOCOL_MASK,
                    XP_MUTEXATTR_PROTOCOL_SHIFT, protocol);
}
XP_EXPORT (pthread_mutexattr_setprotocol)

int
pthread_mutexattr_getprotocol (const pthread_mutexattr_t *attr, int *protocol)
{
  return answer (get_field (attr, XP_MUTEXATTR_PROTOCOL_MASK,
                            XP_MUTEXATTR_PROTOCOL_SHIFT), protocol);
}
XP_EXPORT (pthread_mutexattr_getprotocol)

int
pthread_mutexattr_setprioceiling (pthread_mutexattr_t *attr, int ceiling)
{
  if (ceiling < sched_get_priority_min (SCHED_FIFO)
      || ceiling > sched_get_priority_max (SCHED_FIFO))
    return EINVAL;
  return set_field (attr, XP_MUTEXATTR_CEILING_MASK,
                    XP_MUTEXATTR_CEILING_SHIFT, ceiling);
}
XP_EXPORT (pthread_mutexattr_setprioceiling)

int
pthread_mutexattr_getprioceiling (const pthread_mutexattr_t *attr,
                                  int *ceiling)
{
  int set = get_field (attr, XP_MUTEXATTR_CEILING_MASK,
                      XP_MUTEXATTR_CEILING_SHIFT);
  /* Never set: the lowest priority a ceiling can have, as with glibc.  */
  return answer (set == 0 ? sched_get_priority_min (SCHED_FIFO) : set,
                 ceiling);
}
XP_EXPORT (pthread_mutexattr_getprioceiling)

/* The pre-POSIX names glibc keeps for old binaries.  */
int
pthread_mutexattr_setkind_np (pthread_mutexattr_t *attr, int kind)
{
  return pthread_mutexattr_settype (attr, kind);
}
XP_EXPORT (pthread_mutexattr_setkind_np)

int
pthread_mutexattr_getkind_np (const pthread_mutexattr_t *attr, int *kind)
{
  return pthread_mutexattr_gettype (attr, kind);
}
XP_EXPORT (pthread_mutexattr_getkind_np)

/* <pthread.h> redirects these to the POSIX names, so the definitions
   take their symbol names explicitly.  */
int xp_mutexattr_setrobust_np (pthread_mutexattr_t *, int)
  __asm__ ("pthread_mutexattr_setrobust_np");
int
xp_mutexattr_setrobust_np (pthread_mutexattr_t *attr, int robust)
{
  return pthread_mutexattr_setrobust (attr, robust);
}
XP_EXPORT (pthread_mutexattr_setrobust_np)

int xp_mutexattr_getrobust_np (const pthread_mutexattr_t *, int *)
  __asm__ ("pthread_mutexattr_getrobust_np");
int
xp_mutexattr_getrobust_np (const pthread_mutexattr_t *attr, int *robust)
{
  return pthread_mutexattr_getrobust (attr, robust);
}
XP_EXPORT (pthread_mutexattr_getrobust_np)

#define XP_MUTEXATTR_ALIAS(alias, target) \
  extern __typeof (target) alias XP_ALIAS_OF (target); \
  XP_EXPORT (alias)

XP_MUTEXATTR_ALIAS (__pthread_mutexattr_init, pthread_mutexattr_init)
XP_MUTEXATTR_ALIAS (__pthread_mutexattr_destroy, pthread_mutexattr_destroy)
XP_MUTEXATTR_ALIAS (__pthread_mutexattr_settype, pthread_mutexattr_settype)
