/* glibc's private layout, as discovered and validated at start-up.  Only
   nptl-compat/ reads this; the portable core goes through compat.h.  */
#ifndef XP_NPTL_COMPAT_LAYOUT_H
#define XP_NPTL_COMPAT_LAYOUT_H

#include "common.h"

struct xp_glibc_layout
{
  size_t tcb_size;              /* sizeof (struct pthread) */
  size_t static_tls_size;       /* as ld.so reports it */
  size_t static_tls_align;
  /* Where struct pthread starts, from the thread pointer: 0 where it is
     the TCB (x86_64), below it where static TLS lies above (aarch64,
     riscv64).  */
  ptrdiff_t desc_offset;
  /* The bytes a thread's TCB, descriptor and static TLS take at and
     above the thread pointer, and below it.  */
  size_t tls_above;
  size_t tls_below;
  /* Fields of struct pthread, from the thread pointer.  */
  ptrdiff_t off_list;
  ptrdiff_t off_tid;
  ptrdiff_t off_robust_head;
  ptrdiff_t off_specific;
  ptrdiff_t off_specific_first;
  long robust_futex_offset;
  ptrdiff_t off_cancelhandling; /* read by glibc's set*id broadcast */
  /* rseq area, from the thread pointer (0: none); size 0 when glibc
     registers none.  */
  ptrdiff_t rseq_offset;
  unsigned rseq_size;
  /* glibc's own static TLS block and the resolver pointer in it.  */
  ptrdiff_t libc_tls_offset;
  size_t libc_tls_size;
  ptrdiff_t resp_offset;

  void *(*allocate_tls) (void *tp);
  void (*deallocate_tls) (void *tp, bool dealloc_tcb);
  void (*ctype_init) (void);
  void (*call_tls_dtors) (void);
};

/* libc's TLS block is a few hundred bytes; discovery refuses a layout
   whose block would not fit the copy a reused thread block makes.  */
#define XP_LIBC_TLS_MAX 4096

/* Bits of cancelhandling that glibc's set*id broadcast reads and writes
   (nptl/descr.h, unchanged since glibc 2.3): it skips a thread marked
   EXITING, and marks with SETXID each thread it will signal.  */
#define XP_GLIBC_EXITING_BIT (1 << 4)
#define XP_GLIBC_SETXID_BIT (1 << 6)

/* The kernel's struct rseq: the size a thread registers, the cpu_id
   value that says registration failed, and where cpu_id lies.  */
#define XP_RSEQ_AREA_SIZE 32
#define XP_RSEQ_CPU_ID_REGISTRATION_FAILED (-2)
#define XP_RSEQ_OFF_CPU_ID 4

extern struct xp_glibc_layout xp_glibc XP_HIDDEN;

/* Fill xp_glibc from the running glibc.  Returns NULL on success, or the
   reason the layout cannot be trusted.  */
const char *xp_layout_discover (void) XP_HIDDEN;
/* The offset of the rseq area's cpu_id from the thread pointer, from
   glibc's public rseq symbols (any mode); 0 when there is none.  */
ptrdiff_t xp_layout_cpu_id_offset (void) XP_HIDDEN;
/* The offset of glibc's tid field from the thread pointer (any mode),
   checked against the calling thread; 0 when it cannot be trusted (the
   field never lies at the thread pointer itself).  */
ptrdiff_t xp_layout_tid_offset (void) XP_HIDDEN;

/* Hosted mode runs C++ thread_local destructors itself too, before the
   thread-specific data destructors as glibc does; it needs only this one
   private entry point (left NULL if this glibc lacks it, and then glibc
   runs them when the thread ends).  */
void xp_layout_find_tls_dtors (void) XP_HIDDEN;

/* Where glibc keeps the guard it mangles saved stack pointers with as a
   global, not a TCB word (aarch64), read it for xp_glibc_jmpbuf_sp.  */
void xp_layout_find_pointer_guard (void) XP_HIDDEN;

/* Bring static TLS of modules loaded after threads started into those
   threads (glibc only does it for the threads it knows).  */
void xp_tls_sync_new_modules (void) XP_HIDDEN;

#endif
