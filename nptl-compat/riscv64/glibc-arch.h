/* glibc's private runtime on riscv64: where its descriptor lies, its TCB
   header and its jmp_buf.  Only the glibc layer includes this file, and
   lib/ code reaches what it needs of it through the functions below.  */
#ifndef XP_GLIBC_ARCH_H
#define XP_GLIBC_ARCH_H

#include "common.h"

/* TLS variant I: the thread pointer addresses the start of static TLS;
   glibc's two-word TCB header (dtv, reserved) lies right below it and
   struct pthread below that, aligned (32 bytes lower in glibc 2.36).
   The stack canary and the pointer guard are globals, not TCB words, so
   nothing is copied from the creator but the word glibc keeps first in
   its descriptor (multiple_threads where this release still has it).  */
#define XP_GLIBC_MAX_TCB_GAP 64

/* The rseq signature glibc registers on riscv64.  */
#define XP_RSEQ_SIG 0xf1401073

static inline bool
xp_glibc_tcb_header_valid (const char *tp)
{
  return ((void *const *) tp)[-2] != NULL;      /* the main thread's dtv */
}

static inline void
xp_glibc_fill_tcb_header (char *tp, const char *creator_tp,
                          ptrdiff_t desc_offset)
{
  *(int *) (tp + desc_offset) = *(const int *) (creator_tp + desc_offset);
}

/* glibc's __jmp_buf: pc, s0-s11, then sp in slot 13, not mangled.  */
#define XP_JMPBUF_SP 13

/* The stack pointer a glibc jmp_buf saved.  */
static inline uintptr_t
xp_glibc_jmpbuf_sp (const void *jmpbuf)
{
  const long *w = jmpbuf;
  return (uintptr_t) w[XP_JMPBUF_SP];
}

#endif
