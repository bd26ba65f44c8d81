/* pthread_create.

   A raw thread is started with every signal blocked, so that no handler
   runs before its TCB is live; it restores the intended mask itself.  When
   attributes need the creator to act on the new thread before it runs
   user code (explicit scheduling, CPU affinity), the thread waits at a
   start gate: the creator applies them and opens the gate, or, if the
   kernel refuses, tells the thread to leave and reports the error, as
   POSIX wants pthread_create to fail rather than start a thread with the
   wrong attributes.

   Start gate futex (private): 0 wait, 1 run, 2 leave.  The creator stores
   1 or 2 and wakes; the thread sleeps only while the word is 0, so the
   wake cannot be lost.  */
#define _GNU_SOURCE
#include "attr.h"
#include "cancel.h"
#include "compat.h"
#include "lock-hooks.h"
#include "prof.h"
#include "export.h"
#include "probes.h"
#include "stack.h"
#include "thread.h"
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <xp-clone.h>

#define XP_CLONE_FLAGS \
  (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD \
   | CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID \
   | CLONE_CHILD_CLEARTID)

enum { GATE_WAIT, GATE_RUN, GATE_LEAVE };

static void
set_signal_mask (const sigset_t *mask, sigset_t *old)
{
  xp_syscall4 (SYS_rt_sigprocmask, SIG_SETMASK, mask, old, _NSIG / 8);
}

static bool
wait_at_gate (struct xp_thread *self)
{
  int gate;
  while ((gate = xp_load_acquire (&self->start_gate)) == GATE_WAIT)
    xp_futex_wait (&self->start_gate, GATE_WAIT, true);
  return gate == GATE_RUN;
}

static long
thread_main (void *arg)
{
  struct xp_thread *self = arg;
  xp_self_ptr = self;
  xp_compat_thread_start (self);
  bool run = !self->gated || wait_at_gate (self);
  /* Even a thread told to leave takes its signals, so that a set*id
     broadcast that signalled it does not wait for ever.  */
  set_signal_mask (&self->start_sigmask, NULL);
  if (!run)
    return 0;
  xp_hook_thread_start (self, self->start_routine);
  XP_PROBE (pthread_start, self, self->start_routine, self->arg);
  xp_thread_exit (self->start_routine (self->arg));
}

static int
apply_scheduling (struct xp_thread *t, const struct xp_attr *a)
{
  if (a->flags & XP_ATTR_EXPLICIT_SCHED)
    {
      struct sched_param param = { .sched_priority = a->priority };
      long rc = xp_syscall3 (SYS_sched_setscheduler, t->tid, a->policy,
                             &param);
      if (rc < 0)
        return (int) -rc;
    }
  if (a->ext != NULL && a->ext->cpuset != NULL)
    {
      long rc = xp_syscall3 (SYS_sched_setaffinity, t->tid,
                             a->ext->cpuset_size, a->ext->cpuset);
      if (rc < 0)
        return (int) -rc;
    }
  return 0;
}

static bool
needs_gate (const struct xp_attr *a)
{
  return (a->flags & XP_ATTR_EXPLICIT_SCHED)
         || (a->ext != NULL && a->ext->cpuset != NULL);
}

/* The thread never ran user code: wait until it is gone, then reclaim.  */
static void
abandon_thread (struct xp_thread *t)
{
  xp_store_release (&t->start_gate, GATE_LEAVE);
  xp_futex_wake (&t->start_gate, 1, true);
  int tid;
  while ((tid = xp_load_acquire (&t->tid)) != 0)
    xp_futex_wait (&t->tid, tid, false);
  xp_block_release (t);
}

/* The thread waits at its gate: apply its attributes, then let it run, or
   leave if the kernel refused them.  */
static int
open_gate (struct xp_thread *t, const struct xp_attr *a)
{
  int err = apply_scheduling (t, a);
  if (err != 0)
    {
      xp_fetch_add (&xp_live_threads, -1);
      xp_thread_list_remove (t);
      abandon_thread (t);
      return err;
    }
  xp_store_release (&t->start_gate, GATE_RUN);
  /* The thread may have seen the store and ended already: a wake on a
     reused or unmapped word is harmless (at worst a spurious wake-up, or
     EFAULT).  */
  xp_futex_wake (&t->start_gate, 1, true);
  return 0;
}

static void
resolve_attr (const pthread_attr_t *attr, struct xp_attr *out)
{
  if (attr == NULL)
    xp_default_attr_get (out);
  else
    *out = *xp_attr (attr);
  if (out->stack_size == 0)
    out->stack_size = xp_default_stack_size ();
}

static void
prepare_descriptor (struct xp_thread *t, const struct xp_attr *a,
                    void *(*start) (void *), void *arg, const sigset_t *mask)
{
  xp_thread_set_kind (t, &xp_raw_kind);
  xp_cancel_thread_init (t);
  t->start_routine = start;
  t->arg = arg;
  xp_hook_thread_created (t, start);
  t->join_state = (a->flags & XP_ATTR_DETACHED) ? XP_JOIN_DETACHED : 0;
  t->internal = (a->flags & XP_ATTR_INTERNAL) != 0;
  t->gated = needs_gate (a);
  t->realtime = (a->flags & XP_ATTR_EXPLICIT_SCHED)
                ? a->policy == SCHED_FIFO || a->policy == SCHED_RR
                : xp_self ()->realtime;
  t->start_sigmask = (a->flags & XP_ATTR_SIGMASK_SET) && a->ext != NULL
                     ? a->ext->sigmask : *mask;
}

static int
create_raw (pthread_t *thread, const struct xp_attr *a,
            const pthread_attr_t *user_attr,
            void *(*start) (void *), void *arg)
{
  struct xp_thread *t;
  int err = xp_block_acquire (a, &t);
  if (err != 0)
    return err;

  sigset_t all, old;
  sigfillset (&all);
  xp_compat_clone_begin ();
  set_signal_mask (&all, &old);
  prepare_descriptor (t, a, start, arg, &old);
  /* The descriptor and TLS sit above the stack, so the thread gets
     exactly the stack it asked for, and pthread_getattr_np reports it.  */
  char *stack_top = (char *) t->stack_base + t->stack_size;
  /* Published before the thread runs, which may read it; the probe,
     glibc's, fires in between, as in glibc.  */
  *thread = (pthread_t) t;
  bool internal = t->internal;
  if (!internal)
    XP_PROBE (pthread_create, thread, user_attr, start, arg);
  xp_thread_list_add (t);
  if (!internal)
    xp_fetch_add (&xp_live_threads, 1);

  bool gated = t->gated;
  void *tp = t->tp;
  long tid = xp_arch_clone (XP_CLONE_FLAGS, stack_top, &t->tid, &t->tid,
                            tp, thread_main, t);
  /* From here on, a thread not held at its gate may already have ended,
     been joined or detached, and its block been reused or unmapped: t is
     touched again only if the clone failed or the thread waits.  */
  xp_compat_clone_end (tp, tid);
  /* Signals open again before anything below takes glibc's list lock: a
     set*id broadcast holding it may wait for this thread's handler.  */
  set_signal_mask (&old, NULL);
  if (tid < 0)
    {
      if (!internal)
        xp_fetch_add (&xp_live_threads, -1);
      xp_thread_list_remove (t);
      t->tid = 0;
      xp_block_release (t);
      return EAGAIN;
    }
  return gated ? open_gate (t, a) : 0;
}

int
pthread_create (pthread_t *thread, const pthread_attr_t *attr,
                void *(*start_routine) (void *), void *arg)
{
  struct xp_attr a;
  resolve_attr (attr, &a);
  /* Adopt the creator first: its descriptor must exist before any child
     can look for it (fork handlers, joins of the creator).  */
  if (xp_self_ptr == NULL && xp_try_adopt_current () == NULL)
    return EAGAIN;
  xp_prof_thread_creating ();
  if (xp_mode == XP_MODE_HOSTED)
    return xp_hosted_start (thread, &a, attr, start_routine, arg);
  int err = xp_compat_go_multithreaded ();
  if (err != 0)
    return err;
  return create_raw (thread, &a, attr, start_routine, arg);
}
XP_EXPORT (pthread_create)

int
xp_thread_create_internal (pthread_t *thread, pthread_attr_t *attr,
                           void *(*start) (void *), void *arg)
{
  sigset_t all;
  sigfillset (&all);
  int err = pthread_attr_setsigmask_np (attr, &all);
  if (err != 0)
    return err;
  struct xp_attr a;
  resolve_attr (attr, &a);
  a.flags |= XP_ATTR_INTERNAL;
  if (xp_mode == XP_MODE_HOSTED)
    return xp_hosted_start (thread, &a, attr, start, arg);
  err = xp_compat_go_multithreaded ();
  if (err != 0)
    return err;
  return create_raw (thread, &a, attr, start, arg);
}
