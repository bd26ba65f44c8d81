/* Cancellation points: the entry points of programs built with
   -D_FORTIFY_SOURCE.

   Such programs call __read_chk instead of read, __open_2 instead of
   open, and so on; glibc's versions call glibc's read and open, which
   are not xpthread's cancellation points (points.h), so these are
   interposed too.  Each makes glibc's check first: a buffer smaller than
   the count, or fewer pollfd than nfds, is __chk_fail (glibc's: message
   and abort); __open_2 & co. with O_CREAT or O_TMPFILE, which need a
   mode the caller did not pass, print glibc's message and abort.  */
#define _GNU_SOURCE
#include "points.h"
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

extern void __chk_fail (void) __attribute__ ((noreturn));

ssize_t __read_chk (int fd, void *buf, size_t nbytes, size_t buflen);
ssize_t __pread_chk (int fd, void *buf, size_t nbytes, off_t offset,
                     size_t buflen);
ssize_t __pread64_chk (int fd, void *buf, size_t nbytes, off64_t offset,
                       size_t buflen);
ssize_t __recv_chk (int fd, void *buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk (int fd, void *buf, size_t n, size_t buflen,
                        int flags, __SOCKADDR_ARG addr, socklen_t *addrlen);
int __poll_chk (struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen);
int __ppoll_chk (struct pollfd *fds, nfds_t nfds,
                 const struct timespec *timeout, const sigset_t *sigmask,
                 size_t fdslen);
int __open_2 (const char *file, int flags);
int __open64_2 (const char *file, int flags);
int __openat_2 (int dirfd, const char *file, int flags);
int __openat64_2 (int dirfd, const char *file, int flags);

ssize_t
__read_chk (int fd, void *buf, size_t nbytes, size_t buflen)
{
  if (nbytes > buflen)
    __chk_fail ();
  return XP_CP (SYS_read, fd, buf, nbytes);
}
XP_EXPORT (__read_chk)

ssize_t
__pread_chk (int fd, void *buf, size_t nbytes, off_t offset, size_t buflen)
{
  if (nbytes > buflen)
    __chk_fail ();
  return XP_CP (SYS_pread64, fd, buf, nbytes, offset);
}
XP_EXPORT (__pread_chk)

ssize_t
__pread64_chk (int fd, void *buf, size_t nbytes, off64_t offset,
               size_t buflen)
{
  if (nbytes > buflen)
    __chk_fail ();
  return XP_CP (SYS_pread64, fd, buf, nbytes, offset);
}
XP_EXPORT (__pread64_chk)

ssize_t
__recv_chk (int fd, void *buf, size_t n, size_t buflen, int flags)
{
  if (n > buflen)
    __chk_fail ();
  return XP_CP (SYS_recvfrom, fd, buf, n, flags, NULL, NULL);
}
XP_EXPORT (__recv_chk)

ssize_t
__recvfrom_chk (int fd, void *buf, size_t n, size_t buflen, int flags,
                __SOCKADDR_ARG addr, socklen_t *addrlen)
{
  if (n > buflen)
    __chk_fail ();
  return XP_CP (SYS_recvfrom, fd, buf, n, flags, addr.__sockaddr__, addrlen);
}
XP_EXPORT (__recvfrom_chk)

int
__poll_chk (struct pollfd *fds, nfds_t nfds, int timeout, size_t fdslen)
{
  if (fdslen / sizeof *fds < nfds)
    __chk_fail ();
  return xp_poll_cp (fds, nfds, timeout);
}
XP_EXPORT (__poll_chk)

int
__ppoll_chk (struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
             const sigset_t *sigmask, size_t fdslen)
{
  if (fdslen / sizeof *fds < nfds)
    __chk_fail ();
  return xp_ppoll_cp (fds, nfds, timeout, sigmask);
}
XP_EXPORT (__ppoll_chk)

/* glibc's __fortify_fail: "*** what ***: terminated" on standard error,
   then abort.  */
static __attribute__ ((noreturn)) void
fortify_fail (const char *what)
{
  struct iovec iov[3] = {
    { (void *) "*** ", 4 },
    { (void *) what, strlen (what) },
    { (void *) " ***: terminated\n", 17 },
  };
  xp_syscall3 (SYS_writev, 2, iov, 3);
  abort ();
}

#define CHECK_MODE(flags, name) \
  do \
    if (xp_open_needs_mode (flags)) \
      fortify_fail ("invalid " name " call: O_CREAT or O_TMPFILE without " \
                    "mode"); \
  while (0)

int
__open_2 (const char *file, int flags)
{
  CHECK_MODE (flags, "open");
  return xp_openat_cp (AT_FDCWD, file, flags, 0);
}
XP_EXPORT (__open_2)

int
__open64_2 (const char *file, int flags)
{
  CHECK_MODE (flags, "open64");
  return xp_openat_cp (AT_FDCWD, file, flags, 0);
}
XP_EXPORT (__open64_2)

int
__openat_2 (int dirfd, const char *file, int flags)
{
  CHECK_MODE (flags, "openat");
  return xp_openat_cp (dirfd, file, flags, 0);
}
XP_EXPORT (__openat_2)

int
__openat64_2 (int dirfd, const char *file, int flags)
{
  CHECK_MODE (flags, "openat64");
  return xp_openat_cp (dirfd, file, flags, 0);
}
XP_EXPORT (__openat64_2)
