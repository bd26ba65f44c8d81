/* glibc's private runtime on x86_64: where its descriptor lies, the
   layout of its TCB header and of its jmp_buf.  Only the glibc layer
   includes this file, and lib/ code reaches what it needs of it through
   the functions below.  */
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

/* The TCB header is the start of struct pthread, at the thread pointer
   (TLS variant II: static TLS lies below).  */
#define XP_GLIBC_DESCRIPTOR_AT_TP 1

/* The main thread's TCB header, as glibc built it, points at itself.  */
static inline bool
xp_glibc_tcb_header_valid (const char *tp)
{
  const char *const *w = (const char *const *) tp;
  return w[XP_TCB_OFF_TCB / 8] == tp && w[XP_TCB_OFF_SELF / 8] == tp;
}

/* A new thread's TCB header: self pointers, and what glibc copies from
   its creator (the canary, the pointer guard, the CET features).  */
static inline void
xp_glibc_fill_tcb_header (char *tp, const char *creator_tp,
                          ptrdiff_t desc_offset)
{
  (void) desc_offset;
  *(char **) (tp + XP_TCB_OFF_TCB) = tp;
  *(char **) (tp + XP_TCB_OFF_SELF) = tp;
  *(int *) (tp + XP_TCB_OFF_MULTIPLE_THREADS) = 1;
  *(uintptr_t *) (tp + XP_TCB_OFF_STACK_GUARD)
    = *(const uintptr_t *) (creator_tp + XP_TCB_OFF_STACK_GUARD);
  *(uintptr_t *) (tp + XP_TCB_OFF_POINTER_GUARD)
    = *(const uintptr_t *) (creator_tp + XP_TCB_OFF_POINTER_GUARD);
  *(unsigned *) (tp + XP_TCB_OFF_FEATURE_1)
    = *(const unsigned *) (creator_tp + XP_TCB_OFF_FEATURE_1);
}

/* The rseq registration signature glibc and the kernel agree on.  */
#define XP_RSEQ_SIG 0x53053053

/* glibc's __jmp_buf: rbx, rbp, r12-r15, rsp, pc; rsp, rbp and pc are
   mangled with the pointer guard of the TCB (xor, then rotate left by
   17 bits).  */
#define XP_JMPBUF_SP 6

/* The stack pointer a glibc jmp_buf saved.  */
static inline uintptr_t
xp_glibc_jmpbuf_sp (const void *jmpbuf)
{
  const long *w = jmpbuf;
  uintptr_t sp = (uintptr_t) w[XP_JMPBUF_SP];
  uintptr_t guard = xp_thread_word_at (XP_TCB_OFF_POINTER_GUARD);
  sp = (sp >> 17) | (sp << (64 - 17));
  return sp ^ guard;
}

#endif
