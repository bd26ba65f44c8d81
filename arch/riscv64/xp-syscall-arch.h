/* Raw system calls on riscv64: the number in a7, arguments in a0-a5, the
   kernel's result (-errno on failure) in a0.  The kernel preserves every
   other register.  */
#ifndef XP_ARCH_SYSCALL_ARCH_H
#define XP_ARCH_SYSCALL_ARCH_H

static inline long
xp_arch_syscall6 (long nr, long a1, long a2, long a3, long a4, long a5, long a6)
{
  register long a7_ __asm__ ("a7") = nr;
  register long a0_ __asm__ ("a0") = a1;
  register long a1_ __asm__ ("a1") = a2;
  register long a2_ __asm__ ("a2") = a3;
  register long a3_ __asm__ ("a3") = a4;
  register long a4_ __asm__ ("a4") = a5;
  register long a5_ __asm__ ("a5") = a6;
  __asm__ volatile ("ecall"
                    : "+r" (a0_)
                    : "r" (a7_), "r" (a1_), "r" (a2_), "r" (a3_), "r" (a4_),
                      "r" (a5_)
                    : "memory");
  return a0_;
}

static inline long
xp_arch_syscall3 (long nr, long a1, long a2, long a3)
{
  return xp_arch_syscall6 (nr, a1, a2, a3, 0, 0, 0);
}

#endif
