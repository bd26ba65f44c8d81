/* Per-thread signal functions.  Signals 32 and 33 are xpthread's and
   glibc's own (cancellation, set*id broadcast): an application may neither
   block them nor send them, which is what glibc enforces too.  Results are
   error numbers; errno is never touched.  Threads glibc started are
   glibc's to signal.  */
#define _GNU_SOURCE
#include "sched-util.h"
#include "export.h"
#include "glibc-threads.h"
#include <errno.h>
#include <signal.h>

/* Unblocking a reserved signal is left alone: it can only help.  */
int
pthread_sigmask (int how, const sigset_t *set, sigset_t *old)
{
  sigset_t allowed;
  if (set != NULL && (how == SIG_BLOCK || how == SIG_SETMASK))
    {
      allowed = *set;
      xp_sigset_drop_reserved (&allowed);
      set = &allowed;
    }
  return (int) -xp_syscall4 (SYS_rt_sigprocmask, how, set, old,
                             XP_KERNEL_SIGSET_BYTES);
}
XP_EXPORT (pthread_sigmask)

static bool
signal_is_sendable (int sig)
{
  return sig >= 0 && sig < _NSIG && !xp_signal_is_reserved (sig);
}

/* Signal 0 sends nothing and only reports whether the thread lives.  A
   thread that has exited but whose ID is still valid answers
   NO_THREAD: 0 since glibc 2.34 (the ID is not dead yet, and ESRCH would
   say it is), ESRCH for binaries built before.  */
static int
send_signal (pthread_t thread, int sig, int no_thread)
{
  if (!signal_is_sendable (sig))
    return EINVAL;
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return xp_glibc_threads.kill (thread, sig);
  struct xp_pin pin;
  int tid = xp_thread_pin (t, &pin);
  if (tid == 0)
    return no_thread;
  int ret = xp_tgkill (xp_getpid (), tid, sig);
  xp_thread_unpin (&pin);
  return -ret;
}

int
pthread_kill (pthread_t thread, int sig)
{
  return send_signal (thread, sig, 0);
}
XP_EXPORT (pthread_kill)

#ifdef XP_OLD_VERSION_xp_kill_old
int
xp_kill_old (pthread_t thread, int sig)
{
  return send_signal (thread, sig, ESRCH);
}
XP_EXPORT_OLD (xp_kill_old)
#endif

int
pthread_sigqueue (pthread_t thread, int sig, const union sigval value)
{
  if (!signal_is_sendable (sig))
    return EINVAL;
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return xp_glibc_threads.sigqueue (thread, sig, value);
  struct xp_pin pin;
  int tid = xp_thread_pin (t, &pin);
  if (tid == 0)
    return ESRCH;
  long ret = xp_queue_signal (tid, sig, value);
  xp_thread_unpin (&pin);
  return (int) -ret;
}
XP_EXPORT (pthread_sigqueue)
