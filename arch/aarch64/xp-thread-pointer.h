/* The thread pointer on aarch64 is TPIDR_EL0.  Static TLS lies above it
   (TLS variant I); what the C library keeps per thread lies below.  */
#ifndef XP_ARCH_THREAD_POINTER_H
#define XP_ARCH_THREAD_POINTER_H

static inline void *
xp_thread_pointer (void)
{
  void *tp;
  __asm__ volatile ("mrs %0, tpidr_el0" : "=r" (tp));
  return tp;
}

#include <xp-thread-word.h>

#endif
