/* Words at a fixed offset from the thread pointer, for architectures
   whose thread pointer is a register that holds the address (aarch64,
   riscv64): one read of the register, then a plain load.  Each read is
   made afresh (fork changes the tid the C library's descriptor holds).  */
#ifndef XP_GENERIC_THREAD_WORD_H
#define XP_GENERIC_THREAD_WORD_H

#include <stddef.h>
#include <stdint.h>

static inline int
xp_thread_int_at (ptrdiff_t off)
{
  return *(volatile const int *) ((const char *) xp_thread_pointer () + off);
}

static inline uintptr_t
xp_thread_word_at (ptrdiff_t off)
{
  return *(volatile const uintptr_t *) ((const char *) xp_thread_pointer ()
                                        + off);
}

#endif
