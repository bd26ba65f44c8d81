/* Raw system calls on aarch64: the number in x8, arguments in x0-x5, the
   kernel's result (-errno on failure) in x0.  The kernel preserves every
   other register.  */
#ifndef XP_ARCH_SYSCALL_ARCH_H
#define XP_ARCH_SYSCALL_ARCH_H

static inline long
xp_arch_syscall6 (long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
  register long x8 __asm__ ("x8") = nr;
  register long x0 __asm__ ("x0") = a1;
  register long x1 __asm__ ("x1") = a2;
  register long x2 __asm__ ("x2") = a3;
  register long x3 __asm__ ("x3") = a4;
  register long x4 __asm__ ("x4") = a5;
  register long x5 __asm__ ("x5") = a6;
  __asm__ volatile ("svc #0"
                    : "+r" (x0)
                    : "r" (x8), "r" (x1), "r" (x2), "r" (x3), "r" (x4),
                      "r" (x5)
                    : "memory");
  return x0;
}

static inline long
xp_arch_syscall3 (long nr, long a1, long a2, long a3)
{
  return xp_arch_syscall6 (nr, a1, a2, a3, 0, 0, 0);
}

#endif
