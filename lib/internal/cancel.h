/* Cancellation: the per-thread state word and the cancellable system call.

   xp_thread.cancel holds the bits below.  Only the thread itself changes
   DISABLED, ASYNC and EXITING; any thread may set REQUESTED.  All changes
   are atomic read-modify-writes, because other threads set REQUESTED at
   any moment.  */
#ifndef XP_INTERNAL_CANCEL_H
#define XP_INTERNAL_CANCEL_H

#include "cancel-bits.h"
#include "common.h"
#include "thread.h"
#include <errno.h>
#include <time.h>


/* A cancel acts when it is requested, enabled, and the thread is not
   already on its way out.  */
static inline bool
xp_cancel_due (unsigned word)
{
  return (word & (XP_CANCEL_DISABLED | XP_CANCEL_REQUESTED
                  | XP_CANCEL_EXITING)) == XP_CANCEL_REQUESTED;
}

/* SELF is on its way out with RESULT: from now on no cancel acts.  */
static inline void
xp_cancel_set_exiting (struct xp_thread *self, void *result)
{
  xp_fetch_or (&self->cancel, XP_CANCEL_EXITING);
  self->result = result;
}

/* Act on the calling thread's pending cancel: unwind with PTHREAD_CANCELED
   as the result.  */
void xp_cancel_act (void) XP_HIDDEN __attribute__ ((noreturn));

/* pthread_testcancel for library code, and for the cancellation points
   that act whether or not they block (sem_wait): one load when no cancel
   is due.  A thread without a descriptor has no cancel pending: asking
   for one needs its pthread_t, which adopts it.  */
static inline void
xp_testcancel (void)
{
  struct xp_thread *self = xp_self_ptr;
  if (xp_unlikely (self != NULL
                   && xp_cancel_due (xp_load_acquire (&self->cancel))))
    xp_cancel_act ();
}

/* Hold off the calling thread's cancellation while the lock debugging
   tools run in it: what they call (the symbol reader, libdw) may be a
   cancellation point, and a cancel acted on there would unwind the
   thread with the tools' lock held.  Returns what xp_cancel_resume
   gives back; a request that comes meanwhile stays pending.  */
static inline unsigned
xp_cancel_hold (void)
{
  struct xp_thread *self = xp_self_ptr;
  if (self == NULL)
    return XP_CANCEL_DISABLED;
  return xp_fetch_or (&self->cancel, XP_CANCEL_DISABLED) & XP_CANCEL_DISABLED;
}

static inline void
xp_cancel_resume (unsigned held)
{
  struct xp_thread *self = xp_self_ptr;
  if (self != NULL && (held & XP_CANCEL_DISABLED) == 0)
    xp_fetch_and (&self->cancel, ~XP_CANCEL_DISABLED);
}

/* A system call that is a cancellation point: if a cancel is due before
   the call has taken effect (before the system call instruction, or while
   it blocks and the kernel will restart it, or when it failed with EINTR),
   the thread acts on the cancel and this never returns.  Otherwise the
   kernel's result, -errno on failure.  A completed call is never undone.
   Inside xp_futex_wait_cp a due cancel returns -ECANCELED instead.

   Inline, because every interposed read and write goes through it: the
   common path is a load of the thread's cancel word and the system call
   (arch/<arch>/syscall-cp.S), with no further call or page touched.

   In each architecture's xp_arch_syscall_cp, everything from
   xp_arch_cp_begin up to and including the system call instruction is
   the window in which a cancel may still act: the call has not taken
   effect.  The cancel signal handler looks at the interrupted pc: inside
   the window, it sends the thread to xp_arch_cp_cancel instead.  A
   blocked call the kernel restarts (the handler has SA_RESTART) is rewound
   to the system call instruction, so it counts as inside; a call that has
   returned is at xp_arch_cp_end or past it and keeps its result.  The
   window touches neither the stack nor the callee-saved registers, so
   xp_arch_cp_cancel finds the frame exactly as at entry and can tail-call
   C.  */
long xp_arch_syscall_cp (const unsigned *word, long nr, long a1, long a2,
                         long a3, long a4, long a5, long a6) XP_HIDDEN;
/* The call failed with EINTR: act if a cancel interrupted it.  */
long xp_syscall_cp_interrupted (struct xp_thread *self, long nr) XP_HIDDEN;

static inline long
xp_syscall_cp (long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
  struct xp_thread *self = xp_self_ptr;
  if (xp_unlikely (self == NULL))
    return xp_syscall6 (nr, a1, a2, a3, a4, a5, a6);
  long r = xp_arch_syscall_cp (&self->cancel, nr, a1, a2, a3, a4, a5, a6);
  if (xp_unlikely (r == -EINTR))
    r = xp_syscall_cp_interrupted (self, nr);
  return r;
}

#define xp_syscall_cp0(nr) xp_syscall_cp ((nr), 0, 0, 0, 0, 0, 0)
#define xp_syscall_cp1(nr, a) xp_syscall_cp ((nr), (long) (a), 0, 0, 0, 0, 0)
#define xp_syscall_cp2(nr, a, b) \
  xp_syscall_cp ((nr), (long) (a), (long) (b), 0, 0, 0, 0)
#define xp_syscall_cp3(nr, a, b, c) \
  xp_syscall_cp ((nr), (long) (a), (long) (b), (long) (c), 0, 0, 0)
#define xp_syscall_cp4(nr, a, b, c, d) \
  xp_syscall_cp ((nr), (long) (a), (long) (b), (long) (c), (long) (d), 0, 0)
#define xp_syscall_cp5(nr, a, b, c, d, e) \
  xp_syscall_cp ((nr), (long) (a), (long) (b), (long) (c), (long) (d), \
                 (long) (e), 0)
#define xp_syscall_cp6(nr, a, b, c, d, e, f) \
  xp_syscall_cp ((nr), (long) (a), (long) (b), (long) (c), (long) (d), \
                 (long) (e), (long) (f))

/* The libc convention for a kernel result: -1 with errno, or the value.  */
static inline long
xp_syscall_ret (long r)
{
  if (xp_unlikely (r < 0 && r > -4096))
    {
      errno = (int) -r;
      return -1;
    }
  return r;
}

/* Futex wait as a cancellation point, for xpthread's own waits: as
   xp_futex_wait_abs, but -ECANCELED when a cancel is due, so that the
   caller can restore its invariants first (a condition wait re-locks its
   mutex, a joiner gives the thread back) and then call xp_cancel_act.  */
int xp_futex_wait_cp (int *word, int expected, clockid_t clock,
                      const struct timespec *abstime, bool private_)
  XP_HIDDEN;

/* Reset a new thread's cancellation state.  */
void xp_cancel_thread_init (struct xp_thread *t) XP_HIDDEN;

/* Unwind the calling thread's stack, running cleanup handlers and C++
   destructors, then end it with result (pthread_exit).  */
void xp_unwind_and_exit (void *result) XP_HIDDEN __attribute__ ((noreturn));

#endif
