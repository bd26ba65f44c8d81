/* Our layout of pthread_mutexattr_t (an int): every mutexattr function is
   xpthread's, so only pthread_mutex_init reads it.  */
#ifndef XP_SYNC_MUTEXATTR_H
#define XP_SYNC_MUTEXATTR_H

#include <pthread.h>

#define XP_MUTEXATTR_TYPE_MASK 0x3
#define XP_MUTEXATTR_ROBUST 0x4
#define XP_MUTEXATTR_PSHARED 0x8
#define XP_MUTEXATTR_PROTOCOL_SHIFT 4      /* PTHREAD_PRIO_NONE/INHERIT/PROTECT */
#define XP_MUTEXATTR_PROTOCOL_MASK (0x3 << XP_MUTEXATTR_PROTOCOL_SHIFT)
#define XP_MUTEXATTR_CEILING_SHIFT 8
#define XP_MUTEXATTR_CEILING_MASK (0xfff << XP_MUTEXATTR_CEILING_SHIFT)
static inline int *
xp_mutexattr_word (const pthread_mutexattr_t *attr)
{
  return (int *) attr;
}

#endif
