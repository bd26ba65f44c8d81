/* Cancellation points: opening and closing files, and waiting for locks.

   Interposed because glibc's own cancellation never acts in xpthread's
   threads (points.h).  As glibc 2.36 on x86_64 does:
   - open and openat are openat with O_LARGEFILE, and read their mode
     argument only with O_CREAT or O_TMPFILE; creat is the creat call
     where the kernel has one (openat elsewhere);
   - close is a cancellation point, but once the call was made the
     descriptor is gone, even on EINTR (xp_syscall_cp knows);
   - fcntl is a cancellation point only for the waiting lock commands
     (F_SETLKW, F_OFD_SETLKW); every other command is the plain call with
     the argument taken as a pointer, and F_GETOWN is answered through
     F_GETOWN_EX so that a process group comes back negative even when its
     id would look like an error;
   - lockf is fcntl on a write lock from the current position, and only
     F_LOCK waits.  */
#define _GNU_SOURCE
#include "points.h"
#include <stdarg.h>
#include <unistd.h>

int
xp_openat_cp (int dirfd, const char *file, int flags, mode_t mode)
{
  return (int) XP_CP (SYS_openat, dirfd, file, flags | O_LARGEFILE, mode);
}

int
open (const char *file, int flags, ...)
{
  int mode = 0;
  if (xp_open_needs_mode (flags))
    {
      va_list ap;
      va_start (ap, flags);
      mode = va_arg (ap, int);
      va_end (ap);
    }
  return xp_openat_cp (AT_FDCWD, file, flags, (mode_t) mode);
}
XP_EXPORT (open)
XP_ALIAS_64 (open64, open)

int
openat (int dirfd, const char *file, int flags, ...)
{
  mode_t mode = 0;
  if (xp_open_needs_mode (flags))
    {
      va_list ap;
      va_start (ap, flags);
      mode = va_arg (ap, mode_t);
      va_end (ap);
    }
  return xp_openat_cp (dirfd, file, flags, mode);
}
XP_EXPORT (openat)
XP_ALIAS_64 (openat64, openat)

int
creat (const char *file, mode_t mode)
{
#ifdef SYS_creat
  return (int) XP_CP (SYS_creat, file, mode);
#else
  return xp_openat_cp (AT_FDCWD, file, O_CREAT | O_WRONLY | O_TRUNC, mode);
#endif
}
XP_EXPORT (creat)
XP_ALIAS_64 (creat64, creat)

int
close (int fd)
{
  return (int) XP_CP (SYS_close, fd);
}
XP_EXPORT (close)

static bool
waits_for_lock (int cmd)
{
  return cmd == F_SETLKW || cmd == F_OFD_SETLKW
#if defined F_SETLKW64 && F_SETLKW64 != F_SETLKW
         || cmd == F_SETLKW64
#endif
    ;
}

static int
plain_fcntl (int fd, int cmd, void *arg)
{
  if (cmd == F_GETOWN)
    {
      struct f_owner_ex owner;
      long r = xp_syscall3 (SYS_fcntl, fd, F_GETOWN_EX, &owner);
      if (r < 0)
        return (int) xp_syscall_ret (r);
      return owner.type == F_OWNER_PGRP ? -owner.pid : owner.pid;
    }
  return (int) xp_syscall_ret (xp_syscall3 (SYS_fcntl, fd, cmd, arg));
}

static int
fcntl_common (int fd, int cmd, void *arg)
{
  if (waits_for_lock (cmd))
    return (int) XP_CP (SYS_fcntl, fd, cmd, arg);
  return plain_fcntl (fd, cmd, arg);
}

int
fcntl64 (int fd, int cmd, ...)
{
  va_list ap;
  va_start (ap, cmd);
  void *arg = va_arg (ap, void *);
  va_end (ap);
  return fcntl_common (fd, cmd, arg);
}
XP_EXPORT (fcntl64)

int
fcntl (int fd, int cmd, ...)
{
  va_list ap;
  va_start (ap, cmd);
  void *arg = va_arg (ap, void *);
  va_end (ap);
  return fcntl_common (fd, cmd, arg);
}
XP_EXPORT (fcntl)

static int
lockf_common (int fd, int cmd, off64_t len)
{
  struct flock64 fl = {
    .l_type = F_WRLCK, .l_whence = SEEK_CUR, .l_start = 0, .l_len = len
  };
  switch (cmd)
    {
    case F_TEST:
      /* Locked only if another process holds a conflicting lock.  */
      fl.l_type = F_RDLCK;
      if (plain_fcntl (fd, F_GETLK64, &fl) < 0)
        return -1;
      if (fl.l_type == F_UNLCK || fl.l_pid == xp_getpid ())
        return 0;
      errno = EACCES;
      return -1;
    case F_ULOCK:
      fl.l_type = F_UNLCK;
      return plain_fcntl (fd, F_SETLK64, &fl);
    case F_LOCK:
      return (int) XP_CP (SYS_fcntl, fd, F_SETLKW64, &fl);
    case F_TLOCK:
      return plain_fcntl (fd, F_SETLK64, &fl);
    }
  errno = EINVAL;
  return -1;
}

int
lockf64 (int fd, int cmd, off64_t len)
{
  return lockf_common (fd, cmd, len);
}
XP_EXPORT (lockf64)

int
lockf (int fd, int cmd, off_t len)
{
  return lockf_common (fd, cmd, len);
}
XP_EXPORT (lockf)
