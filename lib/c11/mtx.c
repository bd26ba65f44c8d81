/* C11 mutexes on xpthread's pthread mutexes.

   mtx_timed needs nothing of its own: every pthread mutex can be locked
   with a timeout.  Only mtx_recursive changes the kind.  */
#define _GNU_SOURCE
#include "c11.h"
#include "export.h"

/* glibc does not check the type: exactly mtx_plain | mtx_recursive and
   mtx_timed | mtx_recursive make a recursive mutex, any other value a
   normal one, and the call succeeds.  A program that passes a stray value
   works under glibc, so it must keep working here.  */
static int
pthread_type_of (int type)
{
  if (type == (mtx_plain | mtx_recursive)
      || type == (mtx_timed | mtx_recursive))
    return PTHREAD_MUTEX_RECURSIVE;
  return PTHREAD_MUTEX_NORMAL;
}

int
mtx_init (mtx_t *mutex, int type)
{
  pthread_mutexattr_t attr;
  pthread_mutexattr_init (&attr);
  pthread_mutexattr_settype (&attr, pthread_type_of (type));
  int err = pthread_mutex_init ((pthread_mutex_t *) mutex, &attr);
  pthread_mutexattr_destroy (&attr);
  return xp_c11_result (err);
}
XP_EXPORT (mtx_init)

int
mtx_lock (mtx_t *mutex)
{
  return xp_c11_result (pthread_mutex_lock ((pthread_mutex_t *) mutex));
}
XP_EXPORT (mtx_lock)

/* The time point is on CLOCK_REALTIME, pthread_mutex_timedlock's clock.  */
int
mtx_timedlock (mtx_t *restrict mutex,
               const struct timespec *restrict time_point)
{
  return xp_c11_result (pthread_mutex_timedlock ((pthread_mutex_t *) mutex,
                                                 time_point));
}
XP_EXPORT (mtx_timedlock)

int
mtx_trylock (mtx_t *mutex)
{
  return xp_c11_result (pthread_mutex_trylock ((pthread_mutex_t *) mutex));
}
XP_EXPORT (mtx_trylock)

int
mtx_unlock (mtx_t *mutex)
{
  return xp_c11_result (pthread_mutex_unlock ((pthread_mutex_t *) mutex));
}
XP_EXPORT (mtx_unlock)

/* C11 gives mtx_destroy no result to report a busy mutex with.  */
void
mtx_destroy (mtx_t *mutex)
{
  pthread_mutex_destroy ((pthread_mutex_t *) mutex);
}
XP_EXPORT (mtx_destroy)
