/* Thread exit, after the return from a start routine or after the
   unwinding of pthread_exit and cancellation (lib/cancel/unwind.c).

   Order, as in glibc: C++ thread_local destructors, then thread-specific
   data destructors; then the thread stops counting as live (the last one
   out ends the process with exit(0)) and marks itself exited under its
   exit lock, after which pthread_kill answers ESRCH.  A raw thread's stack
   is released by its joiner, or for a detached thread once the kernel has
   cleared its tid, never while the thread still runs on it.  */
#define _GNU_SOURCE
#include "cancel.h"
#include "compat.h"
#include "export.h"
#include "lock-hooks.h"
#include "stack.h"
#include "thread.h"
#include <limits.h>
#include <signal.h>
#include <stdlib.h>

/* Also the end of the thread's life for the lock hooks: all it did
   happens before its joiner returns (join.c).  */
static unsigned
mark_exited (struct xp_thread *self)
{
  xp_hook_send (self);
  xp_lock (&self->exit_lock);
  unsigned old = xp_fetch_or (&self->join_state, XP_JOIN_EXITED);
  xp_unlock (&self->exit_lock);
  return old;
}

static void
block_all_signals (void)
{
  sigset_t all;
  sigfillset (&all);
  xp_syscall4 (SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, _NSIG / 8);
}

static void
leave_if_last (const struct xp_thread *self)
{
  if (!self->internal && xp_fetch_add (&xp_live_threads, -1) == 1)
    exit (EXIT_SUCCESS);
}

static __attribute__ ((noreturn)) void
exit_kernel_thread (void)
{
  for (;;)
    xp_syscall1 (SYS_exit, 0);
}

/* The descriptor may be reused as soon as it is retired, so the thread
   forgets it; a handler run in the rest of glibc's exit would find no
   descriptor and adopt the dying thread.  glibc blocks the program's
   signals at that point of a thread's end too.  */
static void
exit_hosted (struct xp_thread *self)
{
  xp_thread_list_remove (self);
  block_all_signals ();
  xp_self_ptr = NULL;
  unsigned old = mark_exited (self);
  if (old & XP_JOIN_DETACHED)
    {
      xp_descriptor_retire (self);
    }
  else
    {
      /* The joiner waits for this, then for glibc's own thread to end,
         before it frees the descriptor.  */
      xp_store_release (&self->tid, 0);
      xp_futex_wake (&self->tid, INT_MAX, false);
    }
}

/* The main thread leaves the process running; the kernel clears its tid
   word at exit so that it can be joined like any other thread.  In hosted
   mode glibc counts the threads and decides when the process ends.  */
static __attribute__ ((noreturn)) void
exit_main (struct xp_thread *self, void *result)
{
  xp_thread_list_remove (self);
  xp_syscall1 (SYS_set_tid_address, &self->tid);
  mark_exited (self);
  if (xp_mode == XP_MODE_HOSTED)
    xp_hosted_exit (result);
  leave_if_last (self);
  block_all_signals ();
  exit_kernel_thread ();
}

/* The TCB normally stays on glibc's thread list until the block is
   reclaimed (stack.c), so that exiting threads do not queue for the list
   lock that creators hold across clone.  */
static __attribute__ ((noreturn)) void
exit_raw (struct xp_thread *self)
{
  leave_if_last (self);
  if (!xp_compat_tcb_retire (self->tp))
    /* Signals still open: the set*id broadcast that holds glibc's list
       waits for this thread's handler.  */
    xp_compat_tcb_leave_list (self->tp);
  block_all_signals ();
  xp_thread_list_remove (self);
  unsigned old = mark_exited (self);
  if (old & XP_JOIN_DETACHED)
    xp_block_release_when_gone (self);
  exit_kernel_thread ();
}

/* What every exit of a thread xpthread started, and of the main thread,
   does before the thread's own end.  */
static struct xp_thread *
leave (struct xp_thread *self, void *result)
{
  xp_cancel_set_exiting (self, result);
  xp_compat_call_tls_dtors ();
  xp_tsd_run_destructors (self);
  xp_hook_thread_exit (self, (xp_load_acquire (&self->join_state)
                              & XP_JOIN_DETACHED) != 0);
  return self;
}

void
xp_exit_raw (struct xp_thread *self, void *result)
{
  exit_raw (leave (self, result));
}

void
xp_exit_hosted (struct xp_thread *self, void *result)
{
  exit_hosted (leave (self, result));
  xp_hosted_exit (result);
}

void
xp_exit_main (struct xp_thread *self, void *result)
{
  exit_main (leave (self, result), result);
}

/* A thread glibc started ends through glibc; its descriptor goes with
   its thread_local destructors.  */
void
xp_exit_adopted (struct xp_thread *self, void *result)
{
  xp_cancel_set_exiting (self, result);
  xp_hosted_exit (result);
}

/* The public exit: the stack is unwound first, running cleanup handlers
   and destructors (lib/cancel/unwind.c), then xp_thread_exit ends the
   thread.  */
void
pthread_exit (void *retval)
{
  xp_unwind_and_exit (retval);
}
XP_EXPORT (pthread_exit)

void
xp_thread_exit (void *result)
{
  struct xp_thread *self = xp_self ();
  self->kind->exit (self, result);
}

void
xp_hosted_return (void *result)
{
  exit_hosted (leave (xp_self (), result));
}
