/* Cancellation points: waiting for descriptors (poll, select, epoll).

   Interposed because glibc's own cancellation never acts in xpthread's
   threads (points.h).  As glibc 2.36 does on x86_64:
   - ppoll and pselect give the kernel a copy of the timeout, which the
     kernel would otherwise update; pselect passes its mask as the pair
     (mask, size) that pselect6 takes;
   - select is pselect6 without a mask: a negative timeout is EINVAL, a
     tv_usec of a second or more carries into tv_sec, and the timeout is
     given back updated with the time not slept, as Linux's select does,
     whatever the result;
   - epoll_pwait and epoll_pwait2 pass the size of the kernel's mask.
   Where the kernel lacks poll and epoll_wait (aarch64, riscv64), they are
   ppoll and epoll_pwait without a mask, as glibc makes them there.  */
#define _GNU_SOURCE
#include "points.h"
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>

int
xp_poll_cp (struct pollfd *fds, nfds_t nfds, int timeout)
{
#ifdef SYS_poll
  return (int) XP_CP (SYS_poll, fds, nfds, timeout);
#else
  struct timespec ts = { timeout / 1000, (long) (timeout % 1000) * 1000000 };
  return (int) XP_CP (SYS_ppoll, fds, nfds, timeout >= 0 ? &ts : NULL, NULL,
                      XP_KERNEL_SIGSET_SIZE);
#endif
}

int
poll (struct pollfd *fds, nfds_t nfds, int timeout)
{
  return xp_poll_cp (fds, nfds, timeout);
}
XP_EXPORT (poll)

int
xp_ppoll_cp (struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
             const sigset_t *sigmask)
{
  struct timespec copy;
  if (timeout != NULL)
    {
      copy = *timeout;
      timeout = &copy;
    }
  return (int) XP_CP (SYS_ppoll, fds, nfds, timeout, sigmask,
                      XP_KERNEL_SIGSET_SIZE);
}

int
ppoll (struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
       const sigset_t *sigmask)
{
  return xp_ppoll_cp (fds, nfds, timeout, sigmask);
}
XP_EXPORT (ppoll)

/* select's timeout as pselect6 takes it, normalised as glibc does (the
   microseconds are taken as 32 bits); false if it is negative.  */
static bool
select_timeout (const struct timeval *tv, struct timespec *ts)
{
  int64_t s = tv->tv_sec;
  int32_t us = (int32_t) tv->tv_usec;
  if (s < 0 || us < 0)
    return false;
  if (us / 1000000 > INT64_MAX - s)
    {
      ts->tv_sec = INT64_MAX;
      ts->tv_nsec = 999999999;
    }
  else
    {
      ts->tv_sec = s + us / 1000000;
      ts->tv_nsec = (long) (us % 1000000) * 1000;
    }
  return true;
}

int
select (int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
        struct timeval *timeout)
{
  struct timespec ts, *pts = NULL;
  if (timeout != NULL)
    {
      if (!select_timeout (timeout, &ts))
        {
          errno = EINVAL;
          return -1;
        }
      pts = &ts;
    }
  int r = (int) XP_CP (SYS_pselect6, nfds, readfds, writefds, exceptfds,
                       pts, NULL);
  if (timeout != NULL)
    {
      timeout->tv_sec = ts.tv_sec;
      timeout->tv_usec = ts.tv_nsec / 1000;
    }
  return r;
}
XP_EXPORT (select)

int
pselect (int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds,
         const struct timespec *timeout, const sigset_t *sigmask)
{
  struct timespec copy;
  if (timeout != NULL)
    {
      copy = *timeout;
      timeout = &copy;
    }
  unsigned long mask_and_size[2] = {
    (uintptr_t) sigmask, XP_KERNEL_SIGSET_SIZE
  };
  return (int) XP_CP (SYS_pselect6, nfds, readfds, writefds, exceptfds,
                      timeout, mask_and_size);
}
XP_EXPORT (pselect)

int
epoll_wait (int epfd, struct epoll_event *events, int maxevents, int timeout)
{
#ifdef SYS_epoll_wait
  return (int) XP_CP (SYS_epoll_wait, epfd, events, maxevents, timeout);
#else
  return (int) XP_CP (SYS_epoll_pwait, epfd, events, maxevents, timeout,
                      NULL, XP_KERNEL_SIGSET_SIZE);
#endif
}
XP_EXPORT (epoll_wait)

int
epoll_pwait (int epfd, struct epoll_event *events, int maxevents,
             int timeout, const sigset_t *sigmask)
{
  return (int) XP_CP (SYS_epoll_pwait, epfd, events, maxevents, timeout,
                      sigmask, XP_KERNEL_SIGSET_SIZE);
}
XP_EXPORT (epoll_pwait)

int
epoll_pwait2 (int epfd, struct epoll_event *events, int maxevents,
              const struct timespec *timeout, const sigset_t *sigmask)
{
  return (int) XP_CP (SYS_epoll_pwait2, epfd, events, maxevents, timeout,
                      sigmask, XP_KERNEL_SIGSET_SIZE);
}
XP_EXPORT (epoll_pwait2)
