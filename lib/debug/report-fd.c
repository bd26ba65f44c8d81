/* Raw file access for the lock debugging tools (report-fd.h).  */
#define _GNU_SOURCE
#include "report-fd.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Standard error at start-up; valid false when it was closed.  */
static struct
{
  bool valid;
  dev_t dev;
  ino_t ino;
} start_stderr;

static bool
identify (int fd, dev_t *dev, ino_t *ino)
{
  struct stat st;
  if (xp_syscall2 (SYS_fstat, fd, (long) &st) != 0)
    return false;
  *dev = st.st_dev;
  *ino = st.st_ino;
  return true;
}

void
xp_report_fd_init (void)
{
  start_stderr.valid = identify (STDERR_FILENO, &start_stderr.dev,
                                 &start_stderr.ino);
}

static bool
stderr_is_the_start_one (void)
{
  dev_t dev;
  ino_t ino;
  return start_stderr.valid && identify (STDERR_FILENO, &dev, &ino)
         && dev == start_stderr.dev && ino == start_stderr.ino;
}

int
xp_report_open (const char *path, int flags, int mode)
{
  return (int) xp_syscall4 (SYS_openat, AT_FDCWD, (long) path, flags, mode);
}

ssize_t
xp_report_read (int fd, void *buf, size_t n)
{
  return xp_syscall3 (SYS_read, fd, (long) buf, (long) n);
}

void
xp_report_close (int fd)
{
  xp_syscall1 (SYS_close, fd);
}

off_t
xp_report_file_size (int fd)
{
  struct stat st;
  return xp_syscall2 (SYS_fstat, fd, (long) &st) == 0 ? st.st_size : -1;
}

void
xp_report_set_blocking (int fd)
{
  long flags = xp_syscall2 (SYS_fcntl, fd, F_GETFL);
  if (flags >= 0)
    xp_syscall3 (SYS_fcntl, fd, F_SETFL, flags & ~O_NONBLOCK);
}

bool
xp_report_is_special (const char *path)
{
  struct stat st;
  return xp_syscall4 (SYS_newfstatat, AT_FDCWD, (long) path, (long) &st,
                      AT_SYMLINK_NOFOLLOW) == 0
         && !S_ISREG (st.st_mode);
}

bool
xp_report_rename (const char *from, const char *to)
{
  /* renameat2 without flags is renameat, the only one riscv64 has.  */
  return xp_syscall5 (SYS_renameat2, AT_FDCWD, (long) from, AT_FDCWD,
                      (long) to, 0) == 0;
}

void
xp_report_unlink (const char *path)
{
  xp_syscall3 (SYS_unlinkat, AT_FDCWD, (long) path, 0);
}

bool
xp_report_write (int fd, const char *text, size_t n)
{
  if (fd == STDERR_FILENO && !stderr_is_the_start_one ())
    return false;
  while (n > 0)
    {
      long w = xp_syscall3 (SYS_write, fd, (long) text, (long) n);
      if (w == -EINTR)
        continue;
      if (w <= 0)
        return false;
      text += w;
      n -= (size_t) w;
    }
  return true;
}
