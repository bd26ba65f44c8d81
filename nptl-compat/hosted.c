/* Hosted mode: threads started by glibc's pthread_create.

   Used when glibc's layout cannot be validated (or XPTHREAD_MODE=hosted):
   glibc owns the stack and TCB, xpthread keeps its own descriptor, and so
   the rest of the library (thread-specific data, joins, signals,
   scheduling, and later synchronisation and credentials) works the same.

   The creator does not wait for the thread to run.  Until the thread has
   recorded its own tid, its descriptor says XP_TID_STARTING, which joins
   take for "not ended", and pinning reads the tid that the kernel wrote
   into glibc's descriptor before glibc's pthread_create returned.  The
   thread starts with every signal of the program blocked and opens the
   creator's mask only once pthread_self answers its ID, so no handler
   runs in it before.  Where glibc's copy of the tid cannot be found, the
   creator waits (futex on tid: it sleeps only while the word is still
   XP_TID_STARTING, and the thread wakes it after changing the word).

   glibc's threads are joined with pthread_clockjoin_np without a
   deadline, which valgrind's thread checkers do not intercept: their
   pthread_join wrapper looks the thread up under the pthread_t that
   their pthread_create wrapper heard from pthread_self in the new
   thread, which is xpthread's, and helgrind aborts when given glibc's.
   xpthread tells them about exits and joins itself (lock hooks).  */
#define _GNU_SOURCE
#include "attr.h"
#include "compat.h"
#include "glibc-threads.h"
#include "lock-hooks.h"
#include "probes.h"
#include "sched-util.h"
#include "thread.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>

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

#define LOOKUP(field, name, version) \
  glibc.field = (__typeof (glibc.field)) xp_glibc_function (name, version)

static void
lookup_glibc_api (void)
{
  static int done;
  if (xp_load_acquire (&done))
    return;
  LOOKUP (create, "pthread_create", "GLIBC_2.34");
  LOOKUP (join, "pthread_clockjoin_np", "GLIBC_2.34");
  LOOKUP (detach, "pthread_detach", "GLIBC_2.34");
  LOOKUP (exit, "pthread_exit", "GLIBC_2.2.5");
  LOOKUP (attr_init, "pthread_attr_init", "GLIBC_2.2.5");
  LOOKUP (attr_destroy, "pthread_attr_destroy", "GLIBC_2.2.5");
  LOOKUP (attr_setstack, "pthread_attr_setstack", "GLIBC_2.34");
  LOOKUP (attr_setstacksize, "pthread_attr_setstacksize", "GLIBC_2.34");
  LOOKUP (attr_setguardsize, "pthread_attr_setguardsize", "GLIBC_2.34");
  LOOKUP (attr_setdetachstate, "pthread_attr_setdetachstate", "GLIBC_2.2.5");
  LOOKUP (attr_setinheritsched, "pthread_attr_setinheritsched",
          "GLIBC_2.2.5");
  LOOKUP (attr_setschedpolicy, "pthread_attr_setschedpolicy", "GLIBC_2.2.5");
  LOOKUP (attr_setschedparam, "pthread_attr_setschedparam", "GLIBC_2.2.5");
  LOOKUP (attr_setaffinity, "pthread_attr_setaffinity_np", "GLIBC_2.32");
  LOOKUP (attr_setsigmask, "pthread_attr_setsigmask_np", "GLIBC_2.32");
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

/* The mask the thread opens once it knows itself: the attribute's, else
   the creator's.  */
static void
intended_sigmask (const struct xp_attr *a, sigset_t *mask)
{
  if (a->ext != NULL && (a->flags & XP_ATTR_SIGMASK_SET))
    *mask = a->ext->sigmask;
  else
    {
      sigemptyset (mask);
      xp_syscall4 (SYS_rt_sigprocmask, SIG_BLOCK, NULL, mask, _NSIG / 8);
    }
  xp_sigset_drop_reserved (mask);
}

int
xp_hosted_tid (const struct xp_thread *t)
{
  pthread_t host = xp_load_relaxed (&t->host);
  int *word = host != 0 ? xp_glibc_thread_tid_word (host) : NULL;
  return word != NULL ? xp_load_relaxed (word) : 0;
}

static bool
creator_waits (void)
{
  return !xp_glibc_thread_tid_known ();
}

static void *
hosted_main (void *arg)
{
  struct xp_thread *self = arg;
  xp_self_ptr = self;
  xp_store_release (&self->tid, xp_gettid ());
  if (creator_waits ())
    xp_futex_wake (&self->tid, 1, true);
  xp_syscall4 (SYS_rt_sigprocmask, SIG_SETMASK, &self->start_sigmask, NULL,
               _NSIG / 8);
  /* Returned to glibc, not ended by glibc's pthread_exit, as glibc's own
     threads end: its unwinding takes the dynamic linker's locks, which
     valgrind's thread checkers see as the program's, and which order
     everything the thread did before the next pthread_create, hiding
     the program's races from them.  */
  xp_hook_thread_start (self, self->start_routine);
  XP_PROBE (pthread_start, self, self->start_routine, self->arg);
  void *result = self->start_routine (self->arg);
  xp_hosted_return (result);
  return result;
}

int
xp_hosted_start (pthread_t *thread, const struct xp_attr *a,
                 const pthread_attr_t *user_attr,
                 void *(*start_routine) (void *), void *arg)
{
  lookup_glibc_api ();
  pthread_attr_t gattr;
  int err = to_glibc_attr (a, &gattr);
  struct xp_thread *t = err == 0 ? xp_descriptor_new () : NULL;
  if (err == 0 && t == NULL)
    err = EAGAIN;
  if (err != 0)
    {
      glibc.attr_destroy (&gattr);
      return err;
    }
  /* The descriptor is xpthread's, and reused: its accesses are ordered
     by internal locks and atomics that the thread checkers do not see.  */
  xp_hook_sync_words (t, sizeof *t);
  xp_thread_set_kind (t, &xp_hosted_kind);
  t->start_routine = start_routine;
  t->arg = arg;
  xp_hook_thread_created (t, start_routine);
  t->join_state = (a->flags & XP_ATTR_DETACHED) ? XP_JOIN_DETACHED : 0;
  t->realtime = (a->flags & XP_ATTR_EXPLICIT_SCHED)
                ? a->policy == SCHED_FIFO || a->policy == SCHED_RR
                : xp_self ()->realtime;
  intended_sigmask (a, &t->start_sigmask);
  t->tid = XP_TID_STARTING;
  *thread = (pthread_t) t;
  /* As glibc's: the ID published, the thread not started yet.  */
  XP_PROBE (pthread_create, thread, user_attr, start_routine, arg);
  xp_thread_list_add (t);
  bool wait = creator_waits ();
  /* Unless the creator waits, the thread may end, and its descriptor be
     reused, as soon as glibc has started it: t is not touched after.  */
  err = glibc.create (&t->host, &gattr, hosted_main, t);
  glibc.attr_destroy (&gattr);
  if (err != 0)
    {
      xp_thread_list_remove (t);
      t->tid = 0;
      xp_descriptor_retire (t);
      return err;
    }
  while (wait && xp_load_acquire (&t->tid) == XP_TID_STARTING)
    xp_futex_wait (&t->tid, XP_TID_STARTING, true);
  return 0;
}

static int
join_glibc_thread (pthread_t host)
{
  return glibc.join (host, NULL, CLOCK_REALTIME, NULL);
}

int
xp_hosted_join (struct xp_thread *t)
{
  lookup_glibc_api ();
  return join_glibc_thread (t->host);
}

int
xp_hosted_detach (pthread_t host, struct xp_thread *exited)
{
  lookup_glibc_api ();
  if (exited == NULL)
    return glibc.detach (host);
  int err = join_glibc_thread (host);
  xp_descriptor_retire (exited);
  return err;
}

void
xp_hosted_exit (void *result)
{
  lookup_glibc_api ();
  glibc.exit (result);
}
