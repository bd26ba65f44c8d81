/* Spin-wait hint and cycle counter on x86_64.  */
#ifndef XP_ARCH_CPU_H
#define XP_ARCH_CPU_H

#include <stdint.h>

static inline void
xp_cpu_relax (void)
{
  __asm__ volatile ("pause" ::: "memory");
}

/* The time stamp counter, which the kernel may vouch for as a clock
   (prof-clock.c).  */
#define XP_CPU_HAS_CYCLES 1
static inline uint64_t
xp_cpu_cycles (void)
{
  return __builtin_ia32_rdtsc ();
}

#endif
