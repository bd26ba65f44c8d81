/* Thread names: the kernel's comm, 15 characters and a NUL.  The calling
   thread uses prctl; another thread's name is its /proc comm file, opened
   while the thread is pinned so that the tid cannot belong to a newer
   thread by then.  Raw system calls throughout: neither function is a
   cancellation point, and errno stays untouched.  */
#define _GNU_SOURCE
#include "sched-util.h"
#include "export.h"
#include "glibc-threads.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

/* A thread that has exited: glibc opens the comm file of tid 0 and
   answers what the kernel says of it.  */
#define GONE ENOENT
#include <string.h>
#include <sys/prctl.h>

#define XP_NAME_SIZE 16      /* the kernel's TASK_COMM_LEN */

static int
open_comm (int tid, int flags)
{
  char path[sizeof "/proc/self/task//comm" + 3 * sizeof (int)];
  snprintf (path, sizeof path, "/proc/self/task/%d/comm", tid);
  return (int) xp_syscall4 (SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC,
                            0);
}

static int
write_comm (int tid, const char *name, size_t len)
{
  int fd = open_comm (tid, O_WRONLY);
  if (fd < 0)
    return -fd;
  long written = xp_syscall3 (SYS_write, fd, (long) name, (long) len);
  xp_syscall1 (SYS_close, fd);
  if (written < 0)
    return (int) -written;
  return (size_t) written == len ? 0 : EIO;
}

/* The file ends in a newline, dropped here.  */
static int
read_comm (int tid, char *buf, size_t len)
{
  int fd = open_comm (tid, O_RDONLY);
  if (fd < 0)
    return -fd;
  long got = xp_syscall3 (SYS_read, fd, (long) buf, (long) len);
  xp_syscall1 (SYS_close, fd);
  if (got < 0)
    return (int) -got;
  if (got > 0 && buf[got - 1] == '\n')
    got--;
  else if ((size_t) got == len)
    return ERANGE;
  buf[got] = '\0';
  return 0;
}

int
pthread_setname_np (pthread_t thread, const char *name)
{
  size_t len = strlen (name);
  if (len >= XP_NAME_SIZE)
    return ERANGE;
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return xp_glibc_threads.setname (thread, name);
  if (t == xp_self_ptr)
    return (int) -xp_syscall2 (SYS_prctl, PR_SET_NAME, name);
  struct xp_pin pin;
  int tid = xp_thread_pin (t, &pin);
  if (tid == 0)
    return GONE;
  int err = write_comm (tid, name, len);
  xp_thread_unpin (&pin);
  return err;
}
XP_EXPORT (pthread_setname_np)

int
pthread_getname_np (pthread_t thread, char *buf, size_t len)
{
  if (len < XP_NAME_SIZE)
    return ERANGE;
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return xp_glibc_threads.getname (thread, buf, len);
  if (t == xp_self_ptr)
    return (int) -xp_syscall2 (SYS_prctl, PR_GET_NAME, buf);
  struct xp_pin pin;
  int tid = xp_thread_pin (t, &pin);
  if (tid == 0)
    return GONE;
  int err = read_comm (tid, buf, len);
  xp_thread_unpin (&pin);
  return err;
}
XP_EXPORT (pthread_getname_np)
