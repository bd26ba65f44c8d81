/* Acting on another thread through the kernel: signals, scheduling,
   affinity, names, clocks.  Each of those names the thread by its tid, and
   a tid is only meaningful while the thread lives: once it has exited the
   kernel may hand the same number to a new thread.  Pinning a thread holds
   its exit_lock, which the thread itself takes to become exited, so for
   as long as the pin lasts the tid names that thread and no other.

   All signals are blocked while a pin is held: a handler running in the
   pinning thread could otherwise try to pin the same thread again (or
   exit) and deadlock on the lock it already holds.  */
#ifndef XP_INTERNAL_SCHED_UTIL_H
#define XP_INTERNAL_SCHED_UTIL_H

#include "thread.h"
#include <string.h>

static inline bool
xp_signal_is_reserved (int sig)
{
  return sig == XP_SIGCANCEL || sig == XP_SIGSETXID;
}

/* The kernel's sigset_t is _NSIG bits, smaller than glibc's.  */
#define XP_KERNEL_SIGSET_BYTES (_NSIG / 8)

/* glibc's sigdelset refuses the reserved signals, so their bits are
   cleared directly.  */
/* Block every signal, the reserved ones too (glibc's sigfillset leaves
   them out), keeping the mask that was in *SAVED; put it back.  */
static inline void
xp_signals_block_all (sigset_t *saved)
{
  sigset_t all;
  memset (&all, 0xff, sizeof all);
  xp_syscall4 (SYS_rt_sigprocmask, SIG_BLOCK, &all, saved,
               XP_KERNEL_SIGSET_BYTES);
}

static inline void
xp_signals_restore (const sigset_t *saved)
{
  xp_syscall4 (SYS_rt_sigprocmask, SIG_SETMASK, saved, NULL,
               XP_KERNEL_SIGSET_BYTES);
}

static inline void
xp_sigset_clear_bit (sigset_t *set, int sig)
{
  const unsigned bits = 8 * sizeof set->__val[0];
  set->__val[(sig - 1) / bits] &= ~(1UL << (sig - 1) % bits);
}

static inline void
xp_sigset_drop_reserved (sigset_t *set)
{
  xp_sigset_clear_bit (set, XP_SIGCANCEL);
  xp_sigset_clear_bit (set, XP_SIGSETXID);
}

/* Queue SIG with VALUE to thread TID of this process, as sigqueue(3)
   does (SI_QUEUE, the sender's pid and uid): 0 or -errno.  */
static inline long
xp_queue_signal (int tid, int sig, union sigval value)
{
  int pid = xp_getpid ();
  siginfo_t info;
  memset (&info, 0, sizeof info);
  info.si_signo = sig;
  info.si_code = SI_QUEUE;
  info.si_pid = pid;
  info.si_uid = (uid_t) xp_syscall0 (SYS_getuid);
  info.si_value = value;
  return xp_syscall4 (SYS_rt_tgsigqueueinfo, pid, tid, sig, &info);
}

struct xp_pin
{
  struct xp_thread *thread;   /* NULL when the caller pinned itself */
  sigset_t saved_mask;
};

/* Pin t and return its tid, or 0 when t has already exited (nothing is
   then held).  The calling thread is always alive and needs no lock; its
   tid comes from the kernel so that it is right even in a vfork child.  */
static inline int
xp_thread_pin (struct xp_thread *t, struct xp_pin *pin)
{
  if (t == xp_self_ptr)
    {
      pin->thread = NULL;
      return xp_gettid ();
    }
  /* Every signal: a cancellation unwinding out of here would keep the
     lock.  */
  xp_signals_block_all (&pin->saved_mask);
  xp_lock (&t->exit_lock);
  int tid = xp_thread_tid (t);
  if (!xp_thread_exited (t) && tid > 0)
    {
      pin->thread = t;
      return tid;
    }
  xp_unlock (&t->exit_lock);
  xp_signals_restore (&pin->saved_mask);
  return 0;
}

/* As xp_thread_pin, for the system calls that take 0 for the calling
   thread (sched_*): the caller is 0, which costs no system call to learn
   its tid; -1 when t has already exited.  */
static inline int
xp_thread_pin_sched (struct xp_thread *t, struct xp_pin *pin)
{
  if (t == xp_self_ptr)
    {
      pin->thread = NULL;
      return 0;
    }
  int tid = xp_thread_pin (t, pin);
  return tid != 0 ? tid : -1;
}

static inline void
xp_thread_unpin (struct xp_pin *pin)
{
  if (pin->thread == NULL)
    return;
  xp_unlock (&pin->thread->exit_lock);
  xp_signals_restore (&pin->saved_mask);
}

#endif
