/* glibc's own implementation of the mutex kinds and condition variables
   that xpthread hands to it: robust, priority-inheritance and
   priority-protection mutexes, and process-shared condition variables,
   whose protocols must match glibc's bit for bit anyway.  Both keep
   glibc's layout, so glibc's code works on them in xpthread threads,
   whose TCB carries the tid and robust list head it relies on.  */
#define _GNU_SOURCE
#include "compat.h"
#include "cond.h"
#include "mutex.h"

#define LOOKUP(api, field, name, version) \
  api.field = (__typeof (api.field)) xp_glibc_function (name, version)

const struct xp_glibc_mutex_api *
xp_glibc_mutex (void)
{
  static struct xp_glibc_mutex_api api;
  static int ready;
  if (xp_load_acquire (&ready))
    return &api;
  LOOKUP (api, init, "pthread_mutex_init", "GLIBC_2.2.5");
  LOOKUP (api, destroy, "pthread_mutex_destroy", "GLIBC_2.2.5");
  LOOKUP (api, lock, "pthread_mutex_lock", "GLIBC_2.2.5");
  LOOKUP (api, trylock, "pthread_mutex_trylock", "GLIBC_2.34");
  LOOKUP (api, unlock, "pthread_mutex_unlock", "GLIBC_2.2.5");
  LOOKUP (api, clocklock, "pthread_mutex_clocklock", "GLIBC_2.34");
  LOOKUP (api, consistent, "pthread_mutex_consistent", "GLIBC_2.34");
  LOOKUP (api, getprioceiling, "pthread_mutex_getprioceiling", "GLIBC_2.34");
  LOOKUP (api, setprioceiling, "pthread_mutex_setprioceiling", "GLIBC_2.34");
  LOOKUP (api, attr_init, "pthread_mutexattr_init", "GLIBC_2.34");
  LOOKUP (api, attr_settype, "pthread_mutexattr_settype", "GLIBC_2.34");
  LOOKUP (api, attr_setpshared, "pthread_mutexattr_setpshared", "GLIBC_2.34");
  LOOKUP (api, attr_setrobust, "pthread_mutexattr_setrobust", "GLIBC_2.34");
  LOOKUP (api, attr_setprotocol, "pthread_mutexattr_setprotocol",
          "GLIBC_2.34");
  LOOKUP (api, attr_setprioceiling, "pthread_mutexattr_setprioceiling",
          "GLIBC_2.34");
  xp_store_release (&ready, 1);
  return &api;
}

const struct xp_glibc_cond_api *
xp_glibc_cond (void)
{
  static struct xp_glibc_cond_api api;
  static int ready;
  if (xp_load_acquire (&ready))
    return &api;
  LOOKUP (api, init, "pthread_cond_init", "GLIBC_2.3.2");
  LOOKUP (api, destroy, "pthread_cond_destroy", "GLIBC_2.3.2");
  LOOKUP (api, signal, "pthread_cond_signal", "GLIBC_2.3.2");
  LOOKUP (api, broadcast, "pthread_cond_broadcast", "GLIBC_2.3.2");
  LOOKUP (api, wait, "pthread_cond_wait", "GLIBC_2.3.2");
  LOOKUP (api, clockwait, "pthread_cond_clockwait", "GLIBC_2.34");
  LOOKUP (api, timedwait, "pthread_cond_timedwait", "GLIBC_2.3.2");
  LOOKUP (api, attr_init, "pthread_condattr_init", "GLIBC_2.2.5");
  LOOKUP (api, attr_setpshared, "pthread_condattr_setpshared", "GLIBC_2.34");
  LOOKUP (api, attr_setclock, "pthread_condattr_setclock", "GLIBC_2.34");
  xp_store_release (&ready, 1);
  return &api;
}
