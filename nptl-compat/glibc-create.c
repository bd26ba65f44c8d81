/* glibc's own pthread_create, join, detach and exit, for hosted mode
   (lib/thread/hosted.c): the threads start from xpthread's attributes,
   with every signal blocked, and are joined, detached and ended by
   glibc's functions of the versions xpthread was written against.

   glibc's threads are joined with pthread_clockjoin_np without a
   deadline, which valgrind's thread checkers do not intercept: their
   pthread_join wrapper looks the thread up under the pthread_t that
   their pthread_create wrapper heard from pthread_self in the new
   thread, which is xpthread's, and helgrind aborts when given glibc's.
   xpthread tells them about exits and joins itself (lock hooks).  */
#define _GNU_SOURCE
#include "attr.h"
#include "compat.h"
#include "glibc-create.h"
#include <signal.h>

struct glibc_thread_api
{
  int (*create) (pthread_t *, const pthread_attr_t *, void *(*) (void *),
                 void *);
  int (*join) (pthread_t, void **, clockid_t, const struct timespec *);
  int (*detach) (pthread_t);
  void (*exit) (void *) __attribute__ ((noreturn));
  int (*attr_init) (pthread_attr_t *);
  int (*attr_destroy) (pthread_attr_t *);
  int (*attr_setstack) (pthread_attr_t *, void *, size_t);
  int (*attr_setstacksize) (pthread_attr_t *, size_t);
  int (*attr_setguardsize) (pthread_attr_t *, size_t);
  int (*attr_setdetachstate) (pthread_attr_t *, int);
  int (*attr_setinheritsched) (pthread_attr_t *, int);
  int (*attr_setschedpolicy) (pthread_attr_t *, int);
  int (*attr_setschedparam) (pthread_attr_t *, const struct sched_param *);
  int (*attr_setaffinity) (pthread_attr_t *, size_t, const cpu_set_t *);
  int (*attr_setsigmask) (pthread_attr_t *, const sigset_t *);
};

static struct glibc_thread_api glibc;

#define LOOKUP(field, name) \
  glibc.field = (__typeof (glibc.field)) xp_glibc_function (name)

static void
lookup_glibc_api (void)
{
  static int done;
  if (xp_load_acquire (&done))
    return;
  LOOKUP (create, "pthread_create");
  LOOKUP (join, "pthread_clockjoin_np");
  LOOKUP (detach, "pthread_detach");
  LOOKUP (exit, "pthread_exit");
  LOOKUP (attr_init, "pthread_attr_init");
  LOOKUP (attr_destroy, "pthread_attr_destroy");
  LOOKUP (attr_setstack, "pthread_attr_setstack");
  LOOKUP (attr_setstacksize, "pthread_attr_setstacksize");
  LOOKUP (attr_setguardsize, "pthread_attr_setguardsize");
  LOOKUP (attr_setdetachstate, "pthread_attr_setdetachstate");
  LOOKUP (attr_setinheritsched, "pthread_attr_setinheritsched");
  LOOKUP (attr_setschedpolicy, "pthread_attr_setschedpolicy");
  LOOKUP (attr_setschedparam, "pthread_attr_setschedparam");
  LOOKUP (attr_setaffinity, "pthread_attr_setaffinity_np");
  LOOKUP (attr_setsigmask, "pthread_attr_setsigmask_np");
  xp_store_release (&done, 1);
}

static int
to_glibc_attr (const struct xp_attr *a, pthread_attr_t *g)
{
  int err = glibc.attr_init (g);
  if (err == 0 && (a->flags & XP_ATTR_STACK_SET))
    err = glibc.attr_setstack (g, a->stack_addr, a->stack_size);
  else if (err == 0)
    {
      err = glibc.attr_setstacksize (g, a->stack_size);
      if (err == 0)
        err = glibc.attr_setguardsize (g, a->guard_size);
    }
  if (err == 0 && (a->flags & XP_ATTR_DETACHED))
    err = glibc.attr_setdetachstate (g, PTHREAD_CREATE_DETACHED);
  if (err == 0 && (a->flags & XP_ATTR_EXPLICIT_SCHED))
    {
      struct sched_param param = { .sched_priority = a->priority };
      err = glibc.attr_setinheritsched (g, PTHREAD_EXPLICIT_SCHED);
      if (err == 0)
        err = glibc.attr_setschedpolicy (g, a->policy);
      if (err == 0)
        err = glibc.attr_setschedparam (g, &param);
    }
  if (err == 0 && a->ext != NULL && a->ext->cpuset != NULL)
    err = glibc.attr_setaffinity (g, a->ext->cpuset_size, a->ext->cpuset);
  if (err == 0)
    {
      sigset_t all;
      sigfillset (&all);
      err = glibc.attr_setsigmask (g, &all);
    }
  return err;
}

int
xp_glibc_create (pthread_t *host, const struct xp_attr *a,
                 void *(*start) (void *), void *arg)
{
  lookup_glibc_api ();
  pthread_attr_t gattr;
  int err = to_glibc_attr (a, &gattr);
  if (err == 0)
    err = glibc.create (host, &gattr, start, arg);
  glibc.attr_destroy (&gattr);
  return err;
}

int
xp_glibc_join (pthread_t host)
{
  lookup_glibc_api ();
  return glibc.join (host, NULL, CLOCK_REALTIME, NULL);
}

int
xp_glibc_detach (pthread_t host)
{
  lookup_glibc_api ();
  return glibc.detach (host);
}

void
xp_glibc_exit (void *result)
{
  lookup_glibc_api ();
  glibc.exit (result);
}
