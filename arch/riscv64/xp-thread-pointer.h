/* The thread pointer on riscv64 is the tp register.  It points at the
   start of static TLS (TLS variant I); what the C library keeps per
   thread lies below it.  */
#ifndef XP_ARCH_THREAD_POINTER_H
#define XP_ARCH_THREAD_POINTER_H

static inline void *
xp_thread_pointer (void)
{
  void *tp;
  __asm__ volatile ("mv %0, tp" : "=r" (tp));
  return tp;
}

#include <xp-thread-word.h>

#endif
