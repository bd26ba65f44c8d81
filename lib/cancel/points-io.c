/* Cancellation points: reading, writing and flushing data.

   Interposed because glibc's own cancellation never acts in xpthread's
   threads, and because glibc 2.36's asynchronous-cancel technique could
   act after a read completed and lose its data (points.h).  Each is the
   system call glibc 2.36 makes on x86_64, through xp_syscall_cp: pread
   and pwrite are pread64 and pwrite64, preadv & co. pass the offset in
   two words, and tcdrain is ioctl TCSBRK with 1.  preadv2 and pwritev2
   fall back as glibc does where the kernel lacks them: ENOTSUP for any
   flag, else readv or preadv (offset -1 meaning the file position).  */
#define _GNU_SOURCE
#include "points.h"
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <termios.h>
#include <unistd.h>

ssize_t
read (int fd, void *buf, size_t count)
{
  return XP_CP (SYS_read, fd, buf, count);
}
XP_EXPORT (read)

ssize_t
readv (int fd, const struct iovec *iov, int iovcnt)
{
  return XP_CP (SYS_readv, fd, iov, iovcnt);
}
XP_EXPORT (readv)

ssize_t
pread (int fd, void *buf, size_t count, off_t offset)
{
  return XP_CP (SYS_pread64, fd, buf, count, offset);
}
XP_EXPORT (pread)
XP_ALIAS_64 (pread64, pread)

ssize_t
preadv (int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
  return XP_CP (SYS_preadv, fd, iov, iovcnt, XP_LO_HI (offset));
}
XP_EXPORT (preadv)
XP_ALIAS_64 (preadv64, preadv)

/* preadv2 and pwritev2: NR_V2 where the kernel has it; else the fallback
   glibc makes, NR_V for the file position (offset -1), NR_PV otherwise,
   leaving errno at ENOSYS as glibc's failed first call does.  */
static ssize_t
vector_v2 (long nr_v2, long nr_v, long nr_pv, int fd,
           const struct iovec *iov, int iovcnt, off_t offset, int flags)
{
  long r = XP_CP_RAW (nr_v2, fd, iov, iovcnt, XP_LO_HI (offset), flags);
  if (xp_likely (r != -ENOSYS))
    return xp_syscall_ret (r);
  errno = ENOSYS;
  if (flags != 0)
    {
      errno = ENOTSUP;
      return -1;
    }
  if (offset == -1)
    return XP_CP (nr_v, fd, iov, iovcnt);
  return XP_CP (nr_pv, fd, iov, iovcnt, XP_LO_HI (offset));
}

ssize_t
preadv2 (int fd, const struct iovec *iov, int iovcnt, off_t offset,
         int flags)
{
  return vector_v2 (SYS_preadv2, SYS_readv, SYS_preadv, fd, iov, iovcnt,
                    offset, flags);
}
XP_EXPORT (preadv2)
XP_ALIAS_64 (preadv64v2, preadv2)

ssize_t
write (int fd, const void *buf, size_t count)
{
  return XP_CP (SYS_write, fd, buf, count);
}
XP_EXPORT (write)

ssize_t
writev (int fd, const struct iovec *iov, int iovcnt)
{
  return XP_CP (SYS_writev, fd, iov, iovcnt);
}
XP_EXPORT (writev)

ssize_t
pwrite (int fd, const void *buf, size_t count, off_t offset)
{
  return XP_CP (SYS_pwrite64, fd, buf, count, offset);
}
XP_EXPORT (pwrite)
XP_ALIAS_64 (pwrite64, pwrite)

ssize_t
pwritev (int fd, const struct iovec *iov, int iovcnt, off_t offset)
{
  return XP_CP (SYS_pwritev, fd, iov, iovcnt, XP_LO_HI (offset));
}
XP_EXPORT (pwritev)
XP_ALIAS_64 (pwritev64, pwritev)

ssize_t
pwritev2 (int fd, const struct iovec *iov, int iovcnt, off_t offset,
          int flags)
{
  return vector_v2 (SYS_pwritev2, SYS_writev, SYS_pwritev, fd, iov, iovcnt,
                    offset, flags);
}
XP_EXPORT (pwritev2)
XP_ALIAS_64 (pwritev64v2, pwritev2)

int
fsync (int fd)
{
  return (int) XP_CP (SYS_fsync, fd);
}
XP_EXPORT (fsync)

int
fdatasync (int fd)
{
  return (int) XP_CP (SYS_fdatasync, fd);
}
XP_EXPORT (fdatasync)

int
msync (void *addr, size_t length, int flags)
{
  return (int) XP_CP (SYS_msync, addr, length, flags);
}
XP_EXPORT (msync)

int
tcdrain (int fd)
{
  return (int) XP_CP (SYS_ioctl, fd, TCSBRK, 1);
}
XP_EXPORT (tcdrain)
