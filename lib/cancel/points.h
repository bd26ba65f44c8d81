/* What the cancellation-point interposers (lib/cancel/points-*.c) share.

   Why xpthread interposes read, write, accept, poll, nanosleep and every
   other blocking function that POSIX names a cancellation point: glibc's
   wrappers act on glibc's own cancellation state, which never changes in
   xpthread's threads, so without these a thread blocked in read could
   not be cancelled at all.  And glibc's technique (2.36: switch to
   asynchronous cancellation around the system call) could act after the
   call completed, losing the data a read returned.  Each interposer
   issues its system call through xp_syscall_cp (cancel.h), which acts on
   a due cancel only before the call took effect; otherwise it behaves as
   glibc's wrapper does: same system call, arguments, result and errno.

   xpthread's own calls of these functions reach the interposers too;
   where glibc's counterpart is no cancellation point (sem_open), it
   disables cancellation around them, as glibc does.  */
#ifndef XP_CANCEL_POINTS_H
#define XP_CANCEL_POINTS_H

/* These files define read, open, poll...: the fortified inline versions
   of the headers must not be in the way.  */
#undef _FORTIFY_SOURCE

#include "cancel.h"
#include "export.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>

/* The system call nr, with up to six arguments, as a cancellation point;
   the result in libc's convention: the value, or -1 with errno set.  */
#define XP_CP(...) xp_syscall_ret (XP_CP_RAW (__VA_ARGS__))
/* The same with the kernel's result: -errno on failure.  */
#define XP_CP_RAW(...) xp_cp_args (__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0)
#define xp_cp_args(nr, a, b, c, d, e, f, ...) \
  xp_syscall_cp ((nr), (long) (a), (long) (b), (long) (c), (long) (d), \
                 (long) (e), (long) (f))

/* The 64 forms (pread64, open64...) are the same functions where off_t
   is 64 bits wide, as glibc defines them: aliases of the plain ones.  */
#define XP_ALIAS_64(alias, name) \
  _Static_assert (sizeof (off_t) == sizeof (off64_t), "off_t is 64-bit"); \
  extern __typeof (name) alias XP_ALIAS_OF (name); \
  XP_EXPORT (alias)

/* A file offset as preadv and pwritev take it: low word, high word.  */
#define XP_LO_HI(off) \
  (long) (off), (long) (((uint64_t) (off) >> (__WORDSIZE / 2)) \
                        >> (__WORDSIZE / 2))

/* The size of the kernel's signal set, which the rt_sig* calls, ppoll,
   pselect6 and epoll_pwait take along with a sigset_t.  */
#define XP_KERNEL_SIGSET_SIZE (_NSIG / 8)

/* open's third argument is read only for these flags.  */
static inline bool
xp_open_needs_mode (int flags)
{
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

/* Shared with the _FORTIFY_SOURCE entry points (points-fortify.c).  */
int xp_openat_cp (int dirfd, const char *file, int flags, mode_t mode)
  XP_HIDDEN;
int xp_poll_cp (struct pollfd *fds, nfds_t nfds, int timeout) XP_HIDDEN;
int xp_ppoll_cp (struct pollfd *fds, nfds_t nfds,
                 const struct timespec *timeout, const sigset_t *sigmask)
  XP_HIDDEN;

#endif
