/* The thread pointer on riscv64 is the tp register.  It points at the
   start of static TLS (TLS variant I); what the C library keeps per
   thread lies below it.  */
#ifndef XP_ARCH_THREAD_POINTER_H
#define XP_ARCH_THREAD_POINTER_H

#include <stddef.h>
#include <stdint.h>

/* The stack grows down and must stay 16-byte aligned.  */
#define XP_STACK_ALIGN 16

static inline void *
xp_thread_pointer (void)
{
  void *tp;
  __asm__ volatile ("mv %0, tp" : "=r" (tp));
  return tp;
}

/* The int at byte offset OFF from the thread pointer, read afresh at
   every call (fork changes the tid the C library's descriptor holds).  */
static inline int
xp_thread_int_at (ptrdiff_t off)
{
  return *(volatile const int *) ((const char *) xp_thread_pointer () + off);
}

/* The word at byte offset OFF from the thread pointer.  */
static inline uintptr_t
xp_thread_word_at (ptrdiff_t off)
{
  return *(volatile const uintptr_t *) ((const char *) xp_thread_pointer ()
                                        + off);
}

#endif
