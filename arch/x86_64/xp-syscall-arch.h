/* Raw system calls on x86_64.  xpthread issues its own system calls so that
   the thread lifecycle never depends on glibc's errno or cancellation
   wrappers: every helper returns the kernel's result, -errno on failure.  */
#ifndef XP_ARCH_SYSCALL_ARCH_H
#define XP_ARCH_SYSCALL_ARCH_H

static inline long
xp_arch_syscall6 (long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
  long ret;
  register long r10 __asm__ ("r10") = a4;
  register long r8 __asm__ ("r8") = a5;
  register long r9 __asm__ ("r9") = a6;
  __asm__ volatile ("syscall"
                    : "=a" (ret)
                    : "0" (nr), "D" (a1), "S" (a2), "d" (a3), "r" (r10),
                      "r" (r8), "r" (r9)
                    : "rcx", "r11", "memory");
  return ret;
}

static inline long
xp_arch_syscall3 (long nr, long a1, long a2, long a3)
{
  long ret;
  __asm__ volatile ("syscall"
                    : "=a" (ret)
                    : "0" (nr), "D" (a1), "S" (a2), "d" (a3)
                    : "rcx", "r11", "memory");
  return ret;
}

#endif
