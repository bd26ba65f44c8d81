/* Adoption of threads xpthread did not start: the main thread, and
   threads glibc creates itself (SIGEV_THREAD timers, helper threads).
   They get a descriptor the first time they need one.  A foreign thread's
   descriptor is released when the thread ends, through glibc's
   thread_local destructor list, which glibc runs for its own threads.  */
#define _GNU_SOURCE
#include "compat.h"
#include "thread.h"
#include <sched.h>
#include <stdlib.h>

__thread struct xp_thread *xp_self_ptr
  __attribute__ ((tls_model ("initial-exec")));

extern int __cxa_thread_atexit_impl (void (*fn) (void *), void *obj,
                                     void *dso_handle);
extern void *__dso_handle;

static struct xp_thread main_thread;

static void
release_foreign (void *arg)
{
  struct xp_thread *self = arg;
  xp_tsd_run_destructors (self);
  xp_thread_list_remove (self);
  xp_tsd_release (self);
  xp_self_ptr = NULL;
  free (self);
}

bool
xp_is_main_thread (const struct xp_thread *t)
{
  return t == &main_thread;
}

struct xp_thread *
xp_adopt_current (void)
{
  int tid = xp_gettid ();
  struct xp_thread *t;
  if (tid == xp_getpid ())
    t = &main_thread;
  else
    {
      t = calloc (1, sizeof *t);
      if (t == NULL)
        xp_fatal ("out of memory adopting thread %d", tid);
      __cxa_thread_atexit_impl (release_foreign, t, &__dso_handle);
    }
  t->kind = XP_THREAD_ADOPTED;
  t->tid = tid;
  /* glibc's handle of the thread, for what glibc must hear about it.  */
  pthread_t (*glibc_self) (void)
    = xp_glibc_function ("pthread_self", "GLIBC_2.2.5");
  t->host = glibc_self ();
  long policy = xp_syscall1 (SYS_sched_getscheduler, 0);
  t->realtime = policy == SCHED_FIFO || policy == SCHED_RR;
  xp_self_ptr = t;
  xp_thread_list_add (t);
  return t;
}
