/* glibc's private runtime on aarch64: where its descriptor lies, its TCB
   header and its jmp_buf.  Only the glibc layer includes this file, and
   lib/ code reaches what it needs of it through the functions below.  */
#ifndef XP_GLIBC_ARCH_H
#define XP_GLIBC_ARCH_H

#include "common.h"

/* TLS variant I: the thread pointer addresses a two-word TCB header (dtv,
   reserved) with static TLS after it, and struct pthread ends right below
   it.  The stack canary and the pointer guard are globals, not TCB words,
   so nothing is copied from the creator but the word glibc keeps first in
   its descriptor (multiple_threads where this release still has it).  */
#define XP_GLIBC_MAX_TCB_GAP 64

/* The rseq signature glibc registers on aarch64 (little-endian).  */
#define XP_RSEQ_SIG 0xd428bc00

static inline bool
xp_glibc_tcb_header_valid (const char *tp)
{
  return *(void *const *) tp != NULL;   /* the main thread's dtv */
}

static inline void
xp_glibc_fill_tcb_header (char *tp, const char *creator_tp,
                          ptrdiff_t desc_offset)
{
  *(int *) (tp + desc_offset) = *(const int *) (creator_tp + desc_offset);
}

/* glibc's __jmp_buf: x19-x28, x29, x30, then sp in slot 13, mangled by
   xor with ld.so's __pointer_chk_guard (found at start-up).  */
#define XP_JMPBUF_SP 13
#define XP_GLIBC_GLOBAL_POINTER_GUARD 1
extern uintptr_t xp_glibc_pointer_guard XP_HIDDEN;

/* The stack pointer a glibc jmp_buf saved.  */
static inline uintptr_t
xp_glibc_jmpbuf_sp (const void *jmpbuf)
{
  const long *w = jmpbuf;
  return (uintptr_t) w[XP_JMPBUF_SP] ^ xp_glibc_pointer_guard;
}

#endif
