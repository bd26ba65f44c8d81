/* Spin-wait hint on x86_64.  */
#ifndef XP_ARCH_CPU_H
#define XP_ARCH_CPU_H

static inline void
xp_cpu_relax (void)
{
  __asm__ volatile ("pause" ::: "memory");
}

#endif
