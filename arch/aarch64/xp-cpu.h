/* Spin-wait hint on aarch64.  yield is a no-op on most cores; an isb
   waits for the pipeline to drain, a pause of tens of cycles that lets
   the other hardware thread or the coherence traffic make progress.  */
#ifndef XP_ARCH_CPU_H
#define XP_ARCH_CPU_H

static inline void
xp_cpu_relax (void)
{
  __asm__ volatile ("isb" ::: "memory");
}

/* No cycle counter the profiler may use: the generic timer counts at a
   fixed, often low, frequency, so prof-clock.c reads the monotonic clock. */

#endif
