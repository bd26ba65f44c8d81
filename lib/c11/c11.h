/* What the C11 <threads.h> functions share: turning the error numbers of
   the pthread functions underneath into C11 results, with glibc's table,
   and the layout facts that let a C11 object be used as its pthread twin.

   glibc implements <threads.h> as thin wrappers over its pthread
   functions, so a C11 object is a pthread object in another type, and
   programs may rely on that (a mtx_t handed to code that knows it as a
   pthread_mutex_t).  xpthread wraps its own pthread functions the same
   way, so every property of those (adaptive spinning, cancellation
   points, glibc-compatible layout) carries over unchanged.  */
#ifndef XP_C11_C11_H
#define XP_C11_C11_H

#include "common.h"
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdalign.h>
#include <threads.h>

/* The casts in lib/c11 are sound only while these hold; they are glibc's
   own guarantees, checked here against the installed headers.  */
_Static_assert (sizeof (thrd_t) == sizeof (pthread_t), "thrd_t");
_Static_assert (sizeof (mtx_t) == sizeof (pthread_mutex_t), "mtx_t size");
_Static_assert (alignof (mtx_t) == alignof (pthread_mutex_t), "mtx_t align");
_Static_assert (sizeof (cnd_t) == sizeof (pthread_cond_t), "cnd_t size");
_Static_assert (alignof (cnd_t) == alignof (pthread_cond_t), "cnd_t align");
_Static_assert (sizeof (tss_t) == sizeof (pthread_key_t), "tss_t");
_Static_assert (sizeof (once_flag) == sizeof (pthread_once_t),
                "once_flag size");
_Static_assert (alignof (once_flag) == alignof (pthread_once_t),
                "once_flag align");
_Static_assert (TSS_DTOR_ITERATIONS == PTHREAD_DESTRUCTOR_ITERATIONS,
                "tss destructors run as often as key destructors");

/* glibc's mapping: the few error numbers C11 can name keep a result of
   their own, every other failure is plain thrd_error.  */
static inline int
xp_c11_result (int err)
{
  switch (err)
    {
    case 0:
      return thrd_success;
    case ENOMEM:
      return thrd_nomem;
    case ETIMEDOUT:
      return thrd_timedout;
    case EBUSY:
      return thrd_busy;
    default:
      return thrd_error;
    }
}

#endif
