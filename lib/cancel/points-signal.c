/* Cancellation points: waiting for signals.

   Interposed because glibc's own cancellation never acts in xpthread's
   threads (points.h).  As glibc 2.36 does on x86_64:
   - pause is the pause call (where the kernel lacks it, a ppoll on no
     descriptors without a timeout, which only a signal ends), sigsuspend
     is rt_sigsuspend;
   - sigtimedwait reports a signal sent with tkill or tgkill (raise,
     pthread_kill) as SI_USER rather than SI_TKILL; sigwaitinfo is
     sigtimedwait without a timeout;
   - sigwait returns an error number, and waits again when a signal
     handler interrupted it (EINTR), which applications do not expect
     from it.  A cancel still acts there: the wait is a cancellation
     point each time.  */
#define _GNU_SOURCE
#include "points.h"
#include <unistd.h>

int
pause (void)
{
#ifdef SYS_pause
  return (int) XP_CP (SYS_pause);
#else
  return (int) XP_CP (SYS_ppoll, NULL, 0, NULL, NULL, XP_KERNEL_SIGSET_SIZE);
#endif
}
XP_EXPORT (pause)

int
sigsuspend (const sigset_t *mask)
{
  return (int) XP_CP (SYS_rt_sigsuspend, mask, XP_KERNEL_SIGSET_SIZE);
}
XP_EXPORT (sigsuspend)

static int
timed_wait (const sigset_t *set, siginfo_t *info,
            const struct timespec *timeout)
{
  int r = (int) XP_CP (SYS_rt_sigtimedwait, set, info, timeout,
                       XP_KERNEL_SIGSET_SIZE);
  if (r != -1 && info != NULL && info->si_code == SI_TKILL)
    info->si_code = SI_USER;
  return r;
}

int
sigtimedwait (const sigset_t *set, siginfo_t *info,
              const struct timespec *timeout)
{
  return timed_wait (set, info, timeout);
}
XP_EXPORT (sigtimedwait)

int
sigwaitinfo (const sigset_t *set, siginfo_t *info)
{
  return timed_wait (set, info, NULL);
}
XP_EXPORT (sigwaitinfo)

int
sigwait (const sigset_t *set, int *sig)
{
  siginfo_t info;
  int r;
  do
    r = timed_wait (set, &info, NULL);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return errno;
  *sig = info.si_signo;
  return 0;
}
XP_EXPORT (sigwait)
