/* Raw system calls for the portable core, built on the architecture's
   six-argument primitive.  Results are the kernel's: -errno on failure.  */
#ifndef XP_GENERIC_SYSCALL_H
#define XP_GENERIC_SYSCALL_H

#include <xp-syscall-arch.h>
#include <sys/syscall.h>

#define xp_syscall6(nr, a, b, c, d, e, f) \
  xp_arch_syscall6 ((nr), (long) (a), (long) (b), (long) (c), (long) (d), \
                    (long) (e), (long) (f))
#define xp_syscall0(nr) xp_syscall6 ((nr), 0, 0, 0, 0, 0, 0)
#define xp_syscall1(nr, a) xp_syscall6 ((nr), (a), 0, 0, 0, 0, 0)
#define xp_syscall2(nr, a, b) xp_syscall6 ((nr), (a), (b), 0, 0, 0, 0)
#define xp_syscall3(nr, a, b, c) \
  xp_arch_syscall3 ((nr), (long) (a), (long) (b), (long) (c))
#define xp_syscall4(nr, a, b, c, d) \
  xp_syscall6 ((nr), (a), (b), (c), (d), 0, 0)
#define xp_syscall5(nr, a, b, c, d, e) \
  xp_syscall6 ((nr), (a), (b), (c), (d), (e), 0)

static inline int
xp_gettid (void)
{
  return (int) xp_syscall0 (SYS_gettid);
}

static inline int
xp_getpid (void)
{
  return (int) xp_syscall0 (SYS_getpid);
}

static inline int
xp_tgkill (int pid, int tid, int sig)
{
  return (int) xp_syscall3 (SYS_tgkill, pid, tid, sig);
}

#endif
