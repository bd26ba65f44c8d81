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
   glibc's functions are reached through the glibc layer
   (nptl-compat/glibc-create.h).  */
#define _GNU_SOURCE
#include "attr.h"
#include "compat.h"
#include "glibc-create.h"
#include "glibc-threads.h"
#include "lock-hooks.h"
#include "probes.h"
#include "sched-util.h"
#include "thread.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>

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
  struct xp_thread *t = xp_descriptor_new ();
  if (t == NULL)
    return EAGAIN;
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
  int err = xp_glibc_create (&t->host, a, hosted_main, t);
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

int
xp_hosted_join (struct xp_thread *t)
{
  return xp_glibc_join (t->host);
}

int
xp_hosted_detach (pthread_t host, struct xp_thread *exited)
{
  if (exited == NULL)
    return xp_glibc_detach (host);
  int err = xp_glibc_join (host);
  xp_descriptor_retire (exited);
  return err;
}

void
xp_hosted_exit (void *result)
{
  xp_glibc_exit (result);
}
