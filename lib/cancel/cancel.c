/* pthread_cancel and the cancellation state.

   A request sets REQUESTED in the target's state word (cancel.h) and, when
   the target has cancellation enabled, sends it the cancel signal.  The
   signal is what interrupts a target blocked in a cancellation point; the
   word is what decides.  A target that is not at a cancellation point when
   the signal arrives carries on, and acts at its next one, because every
   cancellation point reads the word before its system call.

   The handler acts at once in asynchronous mode.  In deferred mode it acts
   only if the thread is inside the window of xp_arch_syscall_cp, before
   its system call took effect (arch/<arch>/syscall-cp.S), by sending the
   thread to the cancel path instead of back into the call.  A call that
   completed keeps its result: a read that returned data is never lost.

   Threads glibc started are reached the same way (cancel_foreign).  */
#define _GNU_SOURCE
#include "cancel.h"
#include "export.h"
#include "glibc-threads.h"
#include "sched-util.h"
#include "thread.h"
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <xp-cancel-arch.h>

extern char xp_arch_cp_begin[] XP_HIDDEN;
extern char xp_arch_cp_end[] XP_HIDDEN;
extern char xp_arch_cp_cancel[] XP_HIDDEN;
long xp_cancel_from_cp (void) XP_HIDDEN;

void
xp_cancel_thread_init (struct xp_thread *t)
{
  t->cancel = 0;
  t->cancel_masked = false;
  t->cancel_interrupts_waits = false;
  t->cleanup_jmp_buf = NULL;
  t->cleanup_old = NULL;
}

void
xp_cancel_act (void)
{
  xp_unwind_and_exit (PTHREAD_CANCELED);
}

/* Reached from xp_arch_syscall_cp when a cancel is due before the system
   call took effect; its result becomes the call's.  */
long
xp_cancel_from_cp (void)
{
  if (xp_self_ptr->cancel_masked)
    return -ECANCELED;
  xp_cancel_act ();
}

/* EINTR: the call did nothing, so a cancel that interrupted it acts.
   close is the exception, the descriptor is gone even then.  */
long
xp_syscall_cp_interrupted (struct xp_thread *self, long nr)
{
  if (nr != SYS_close && xp_cancel_due (xp_load_acquire (&self->cancel)))
    return xp_cancel_from_cp ();
  return -EINTR;
}

int
xp_futex_wait_cp (int *word, int expected, clockid_t clock,
                  const struct timespec *abstime, bool private_)
{
  int op = FUTEX_WAIT_BITSET | (private_ ? FUTEX_PRIVATE_FLAG : 0)
           | (clock == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
  struct xp_thread *self = xp_self ();
  bool was_masked = self->cancel_masked;
  self->cancel_masked = true;
  int tid = xp_away_begin ();
  int r = (int) xp_syscall_cp (SYS_futex, (long) word, op, expected,
                               (long) abstime, 0, FUTEX_BITSET_MATCH_ANY);
  xp_away_end (tid);
  self->cancel_masked = was_masked;
  return r;
}

/* A request queued to a thread glibc started (cancel_foreign) names the
   thread by glibc's handle: one that reaches another thread, which got
   the tid after the target ended, is dropped.  The target may have no
   descriptor yet; adoption blocks signals, so none is under way.  */
static struct xp_thread *
foreign_request_target (const siginfo_t *info)
{
  if (info->si_value.sival_ptr != (void *) xp_glibc_threads.self ())
    return NULL;
  struct xp_thread *self = xp_self_ptr;
  if (self == NULL)
    self = xp_try_adopt_current ();
  if (self != NULL)
    xp_fetch_or (&self->cancel, XP_CANCEL_REQUESTED);
  return self;
}

static void
cancel_signal_handler (int sig, siginfo_t *info, void *context)
{
  (void) sig;
  if (info->si_pid != xp_getpid ())
    return;
  struct xp_thread *self = NULL;
  if (info->si_code == SI_TKILL)
    self = xp_self_ptr;
  else if (info->si_code == SI_QUEUE)
    self = foreign_request_target (info);
  if (self == NULL)
    return;
  unsigned word = xp_load_acquire (&self->cancel);
  if (!xp_cancel_due (word))
    return;
  uintptr_t pc = xp_arch_context_pc (context);
  if (pc >= (uintptr_t) xp_arch_cp_begin && pc < (uintptr_t) xp_arch_cp_end)
    xp_arch_context_set_pc (context, (uintptr_t) xp_arch_cp_cancel);
  else if (self->cancel_interrupts_waits)
    xp_arch_context_interrupt_futex_wait (context);
  else if ((word & XP_CANCEL_ASYNC) && !self->cancel_masked)
    xp_cancel_act ();
}

/* Installed on first use, with the kernel call: glibc's sigaction refuses
   the signal.  Two threads installing at once install the same thing.  */
static void
install_cancel_handler (void)
{
  static int installed;
  if (xp_load_acquire (&installed))
    return;
  xp_arch_set_signal_handler (XP_SIGCANCEL, cancel_signal_handler,
                              SA_SIGINFO | SA_RESTART);
  xp_store_release (&installed, 1);
}

static void
act_if_due_and_async (struct xp_thread *self, unsigned word)
{
  if (xp_cancel_due (word) && (word & XP_CANCEL_ASYNC)
      && !self->cancel_masked)
    xp_cancel_act ();
}

/* A target inside glibc's aio_suspend is interrupted only at its futex
   wait (points-aio.c); a signal that lands while it is on its way there
   finds nothing to interrupt.  So signal again, every 100 us, until it has
   left the function (or, at worst, for a second: the cancel then stays
   pending for its next cancellation point).  */
static void
chase_into_glibc_wait (struct xp_thread *t, int tid)
{
  for (int i = 0; i < 10000 && xp_load_relaxed (&t->cancel_interrupts_waits);
       i++)
    {
      struct timespec pause = { 0, 100000 };
      xp_syscall2 (SYS_nanosleep, &pause, NULL);
      xp_tgkill (xp_getpid (), tid, XP_SIGCANCEL);
    }
}

/* A thread glibc started has its state in a descriptor of ours only once
   it has called into xpthread, which nobody else can see without a lock
   the thread may be inside of.  So the thread marks itself: the request
   travels as the cancel signal, queued with the thread's handle, and the
   handler sets REQUESTED (adopting the thread if need be) before acting
   as it does on any request.  glibc's own pthread_cancel would install
   glibc's handler for the signal in place of ours.  */
static int
cancel_foreign (pthread_t thread)
{
  int *tid_word = xp_glibc_thread_tid_word (thread);
  int *exit_word = xp_glibc_thread_exit_word (thread);
  if (tid_word == NULL)
    return ESRCH;
  int tid = xp_load_acquire (tid_word);
  /* An exited thread's outcome is settled; the request has no effect.  */
  if (tid <= 0 || (exit_word != NULL && xp_load_acquire (exit_word) == 0))
    return 0;
  xp_queue_signal (tid, XP_SIGCANCEL,
                   (union sigval) { .sival_ptr = (void *) thread });
  return 0;
}

int
pthread_cancel (pthread_t thread)
{
  struct xp_thread *self = xp_self ();
  install_cancel_handler ();
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL && thread == self->host && self->kind->id_is_host)
    t = self;
  if (t == NULL)
    return cancel_foreign (thread);
  unsigned old = xp_fetch_or (&t->cancel, XP_CANCEL_REQUESTED);
  if (old & XP_CANCEL_REQUESTED)
    return 0;
  if (t == self)
    {
      act_if_due_and_async (self, old | XP_CANCEL_REQUESTED);
      return 0;
    }
  /* Disabled: the target looks at the word when it enables again.  */
  if (old & (XP_CANCEL_DISABLED | XP_CANCEL_EXITING))
    return 0;
  struct xp_pin pin;
  int tid = xp_thread_pin (t, &pin);
  /* An exited thread's outcome is settled; the request has no effect.  */
  if (tid != 0)
    {
      xp_tgkill (xp_getpid (), tid, XP_SIGCANCEL);
      chase_into_glibc_wait (t, tid);
      xp_thread_unpin (&pin);
    }
  return 0;
}
XP_EXPORT (pthread_cancel)

int
pthread_setcancelstate (int state, int *oldstate)
{
  if (state != PTHREAD_CANCEL_ENABLE && state != PTHREAD_CANCEL_DISABLE)
    return EINVAL;
  struct xp_thread *self = xp_self ();
  unsigned old = state == PTHREAD_CANCEL_DISABLE
                 ? xp_fetch_or (&self->cancel, XP_CANCEL_DISABLED)
                 : xp_fetch_and (&self->cancel, ~XP_CANCEL_DISABLED);
  if (oldstate != NULL)
    *oldstate = (old & XP_CANCEL_DISABLED) ? PTHREAD_CANCEL_DISABLE
                                           : PTHREAD_CANCEL_ENABLE;
  if (state == PTHREAD_CANCEL_ENABLE)
    act_if_due_and_async (self, old & ~XP_CANCEL_DISABLED);
  return 0;
}
XP_EXPORT (pthread_setcancelstate)

int
pthread_setcanceltype (int type, int *oldtype)
{
  if (type != PTHREAD_CANCEL_DEFERRED && type != PTHREAD_CANCEL_ASYNCHRONOUS)
    return EINVAL;
  struct xp_thread *self = xp_self ();
  unsigned old = type == PTHREAD_CANCEL_ASYNCHRONOUS
                 ? xp_fetch_or (&self->cancel, XP_CANCEL_ASYNC)
                 : xp_fetch_and (&self->cancel, ~XP_CANCEL_ASYNC);
  if (oldtype != NULL)
    *oldtype = (old & XP_CANCEL_ASYNC) ? PTHREAD_CANCEL_ASYNCHRONOUS
                                       : PTHREAD_CANCEL_DEFERRED;
  if (type == PTHREAD_CANCEL_ASYNCHRONOUS)
    act_if_due_and_async (self, old | XP_CANCEL_ASYNC);
  return 0;
}
XP_EXPORT (pthread_setcanceltype)

void
pthread_testcancel (void)
{
  xp_testcancel ();
}
XP_EXPORT (pthread_testcancel)
