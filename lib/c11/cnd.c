/* C11 condition variables on xpthread's pthread condition variables
   (the current ABI, not the pre-2.3.2 one: cnd_t has the size of the
   current pthread_cond_t).  Waits are cancellation points, as in glibc.  */
#define _GNU_SOURCE
#include "c11.h"
#include "cond.h"
#include "export.h"

/* Default attributes: private, timed waits on CLOCK_REALTIME, which is
   the clock C11 gives cnd_timedwait's time point.  */
int
cnd_init (cnd_t *cond)
{
  return xp_c11_result (xp_cond_init ((pthread_cond_t *) cond, NULL));
}
XP_EXPORT (cnd_init)

int
cnd_signal (cnd_t *cond)
{
  return xp_c11_result (xp_cond_signal ((pthread_cond_t *) cond));
}
XP_EXPORT (cnd_signal)

int
cnd_broadcast (cnd_t *cond)
{
  return xp_c11_result (xp_cond_broadcast ((pthread_cond_t *) cond));
}
XP_EXPORT (cnd_broadcast)

int
cnd_wait (cnd_t *cond, mtx_t *mutex)
{
  return xp_c11_result (xp_cond_wait ((pthread_cond_t *) cond,
                                           (pthread_mutex_t *) mutex));
}
XP_EXPORT (cnd_wait)

int
cnd_timedwait (cnd_t *restrict cond, mtx_t *restrict mutex,
               const struct timespec *restrict time_point)
{
  return xp_c11_result (xp_cond_timedwait ((pthread_cond_t *) cond,
                                                (pthread_mutex_t *) mutex,
                                                time_point));
}
XP_EXPORT (cnd_timedwait)

void
cnd_destroy (cnd_t *cond)
{
  xp_cond_destroy ((pthread_cond_t *) cond);
}
XP_EXPORT (cnd_destroy)
