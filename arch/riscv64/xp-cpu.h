/* Spin-wait hint on riscv64: the Zihintpause pause, encoded as the
   fence it is (fence w, 0), so that cores without the extension run it
   as a harmless no-op and assemblers without it accept it.  */
#ifndef XP_ARCH_CPU_H
#define XP_ARCH_CPU_H

static inline void
xp_cpu_relax (void)
{
  __asm__ volatile (".insn i 0x0f, 0, x0, x0, 0x010" ::: "memory");
}

/* No cycle counter the profiler may use (rdcycle may be disabled for
   user space), so prof-clock.c reads the monotonic clock.  */

#endif
