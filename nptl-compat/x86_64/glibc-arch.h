/* glibc's private runtime on x86_64: the layout of its TCB header and of
   its jmp_buf.  Only the glibc layer includes this file, and lib/ code
   reaches what it needs of it through the functions below.  */
#ifndef XP_GLIBC_ARCH_H
#define XP_GLIBC_ARCH_H

#include "common.h"

/* Byte offsets in glibc's tcbhead_t, at the thread pointer.  Part of
   them is ABI (GCC emits %fs:0x28 for the stack protector), so they do
   not move between releases.  */
#define XP_TCB_OFF_TCB 0
#define XP_TCB_OFF_DTV 8
#define XP_TCB_OFF_SELF 16
#define XP_TCB_OFF_MULTIPLE_THREADS 24
#define XP_TCB_OFF_STACK_GUARD 40
#define XP_TCB_OFF_POINTER_GUARD 48
#define XP_TCB_OFF_FEATURE_1 72

/* The rseq registration signature glibc and the kernel agree on.  */
#define XP_RSEQ_SIG 0x53053053

/* glibc's __jmp_buf: rbx, rbp, r12-r15, rsp, pc; rsp, rbp and pc are
   mangled with the pointer guard of the TCB (xor, then rotate left by
   17 bits).  */
#define XP_JMPBUF_SP 6

/* The stack pointer a glibc jmp_buf saved.  */
static inline uintptr_t
xp_glibc_jmpbuf_sp (const long *jmpbuf)
{
  uintptr_t sp = (uintptr_t) jmpbuf[XP_JMPBUF_SP];
  uintptr_t guard = xp_thread_word_at (XP_TCB_OFF_POINTER_GUARD);
  sp = (sp >> 17) | (sp << (64 - 17));
  return sp ^ guard;
}

#endif
