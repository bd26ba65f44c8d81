/* The condition variable ABI of binaries built before glibc 2.3.2
   (version GLIBC_2.2.5): their pthread_cond_t begins with a pointer to
   the real condition variable, allocated on first use.  */
#define _GNU_SOURCE
#include "cond.h"
#include "export.h"
#include <errno.h>
#include <stdlib.h>

/* Only where glibc's port is that old (x86_64, not aarch64 or riscv64). */
#ifdef XP_OLD_VERSION_xp_cond_init_old

static pthread_cond_t *
real_cond (pthread_cond_t *old)
{
  pthread_cond_t **slot = (pthread_cond_t **) old;
  pthread_cond_t *real = xp_load_acquire (slot);
  if (real != NULL)
    return real;
  real = calloc (1, sizeof *real);
  if (real == NULL)
    return NULL;
  pthread_cond_t *expected = NULL;
  if (!xp_cas (slot, &expected, real))
    {
      free (real);
      real = expected;
    }
  return real;
}

int xp_cond_init_old (pthread_cond_t *, const pthread_condattr_t *);
int
xp_cond_init_old (pthread_cond_t *old, const pthread_condattr_t *attr)
{
  *(pthread_cond_t **) old = NULL;
  pthread_cond_t *real = real_cond (old);
  return real == NULL ? ENOMEM : xp_cond_init (real, attr);
}
XP_EXPORT_OLD (xp_cond_init_old)

int xp_cond_destroy_old (pthread_cond_t *);
int
xp_cond_destroy_old (pthread_cond_t *old)
{
  pthread_cond_t *real = *(pthread_cond_t **) old;
  if (real == NULL)
    return 0;
  int err = xp_cond_destroy (real);
  if (err == 0)
    free (real);
  return err;
}
XP_EXPORT_OLD (xp_cond_destroy_old)

int xp_cond_signal_old (pthread_cond_t *);
int
xp_cond_signal_old (pthread_cond_t *old)
{
  pthread_cond_t *real = xp_load_acquire ((pthread_cond_t **) old);
  return real == NULL ? 0 : xp_cond_signal (real);
}
XP_EXPORT_OLD (xp_cond_signal_old)

int xp_cond_broadcast_old (pthread_cond_t *);
int
xp_cond_broadcast_old (pthread_cond_t *old)
{
  pthread_cond_t *real = xp_load_acquire ((pthread_cond_t **) old);
  return real == NULL ? 0 : xp_cond_broadcast (real);
}
XP_EXPORT_OLD (xp_cond_broadcast_old)

int xp_cond_wait_old (pthread_cond_t *, pthread_mutex_t *);
int
xp_cond_wait_old (pthread_cond_t *old, pthread_mutex_t *m)
{
  pthread_cond_t *real = real_cond (old);
  return real == NULL ? ENOMEM : xp_cond_wait (real, m);
}
XP_EXPORT_OLD (xp_cond_wait_old)

int xp_cond_timedwait_old (pthread_cond_t *, pthread_mutex_t *,
                           const struct timespec *);
int
xp_cond_timedwait_old (pthread_cond_t *old, pthread_mutex_t *m,
                       const struct timespec *abstime)
{
  pthread_cond_t *real = real_cond (old);
  return real == NULL ? ENOMEM : xp_cond_timedwait (real, m, abstime);
}
XP_EXPORT_OLD (xp_cond_timedwait_old)

#endif
