/* glibc's layouts of the synchronisation objects whose inside glibc's
   public headers do not show, for the objects a process under glibc and
   a process under xpthread may share: sem_t and pthread_spinlock_t.  */
#ifndef XP_NPTL_COMPAT_SYNC_LAYOUT_H
#define XP_NPTL_COMPAT_SYNC_LAYOUT_H

#include "common.h"
#include <linux/futex.h>
#include <semaphore.h>
#include <pthread.h>

/* sem_t on 64-bit targets (struct new_sem): one 64-bit word holding the
   value in its low half and the number of possibly blocked waiters in
   its high half; waiters sleep on the value half.  private is 0 for a
   process-private semaphore and FUTEX_PRIVATE_FLAG for a shared one
   (glibc XORs it into the futex operation).  */
struct xp_sem
{
  union
  {
    uint64_t whole;
    uint32_t half[2];
  } data;
  int private_;
  int pad;
};

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define XP_SEM_VALUE_HALF 0
#else
# define XP_SEM_VALUE_HALF 1
#endif
#define XP_SEM_VALUE_MASK 0xffffffffu
#define XP_SEM_NWAITERS_SHIFT 32
#define XP_SEM_SHARED FUTEX_PRIVATE_FLAG

_Static_assert (sizeof (uint64_t) == sizeof (long),
                "this sem_t layout is glibc's 64-bit one");
_Static_assert (sizeof (struct xp_sem) <= sizeof (sem_t), "sem_t size");
_Static_assert (_Alignof (sem_t) >= _Alignof (uint64_t), "sem_t alignment");

/* pthread_spinlock_t: glibc's x86 spinlock counts down from 1 with a
   locked decrement, so 1 is unlocked there; elsewhere 0 is unlocked.  */
#if defined __x86_64__ || defined __i386__
# define XP_SPIN_UNLOCKED 1
# define XP_SPIN_LOCKED 0
#else
# define XP_SPIN_UNLOCKED 0
# define XP_SPIN_LOCKED 1
#endif

#endif
