/* Layout discovery.  glibc exports, for libthread_db, descriptors of the
   fields of its thread structure: GLIBC_PRIVATE constants of three 32-bit
   words {size in bits, element count, byte offset}.  We read those rather
   than hard-coding offsets, and check every value we derive against the
   running main thread, whose TCB glibc built itself.  Any mismatch sends
   the process to hosted mode instead of a crash later.  */
#define _GNU_SOURCE
#include "glibc-arch.h"
#include "layout.h"
#include "glibc-list.h"
#include <dlfcn.h>
#include <link.h>
#include <string.h>

struct xp_glibc_layout xp_glibc;

extern __attribute__ ((weak)) const ptrdiff_t __rseq_offset;
extern __attribute__ ((weak)) const unsigned int __rseq_size;

struct db_field
{
  uint32_t bits;
  uint32_t count;
  uint32_t offset;
};

static const void *
private_symbol (const char *name)
{
  return dlvsym (RTLD_DEFAULT, name, "GLIBC_PRIVATE");
}

static bool
read_field (const char *name, uint32_t bits, uint32_t count, ptrdiff_t *out)
{
  const struct db_field *f = private_symbol (name);
  if (f == NULL || f->bits != bits || f->count != count)
    return false;
  *out = f->offset;
  return true;
}

static bool
read_size (const char *name, size_t *out)
{
  const uint32_t *v = private_symbol (name);
  if (v == NULL || *v == 0)
    return false;
  *out = *v;
  return true;
}

static void *
word_at (const char *tp, ptrdiff_t off)
{
  return *(void *const *) (tp + off);
}

/* struct pthread keeps, right after the tid and the unused pid, the
   robust-list bookkeeping: robust_prev, then the kernel's list head.  Both
   point at the head while the main thread holds no robust mutex, which is
   the case while constructors run.  */
static const char *
discover_robust_head (const char *tp)
{
  ptrdiff_t prev = xp_glibc.off_tid + 2 * (ptrdiff_t) sizeof (int);
  ptrdiff_t head = prev + (ptrdiff_t) sizeof (void *);
  if (word_at (tp, prev) != tp + head || word_at (tp, head) != tp + head)
    return "robust list head not where expected";
  xp_glibc.off_robust_head = head;
  xp_glibc.robust_futex_offset = (long) word_at (tp, head + sizeof (void *));
  return NULL;
}

/* Where struct pthread starts, from the thread pointer, given its size
   and the offset of its tid field; 1 when the calling thread's tid is not
   where that puts it.  Where the TCB is not the descriptor, glibc puts
   the descriptor below the thread pointer, a few words lower when its TCB
   header and alignment sit in between (riscv64): the tid tells which.  */
static ptrdiff_t
find_descriptor (const char *tp, size_t size, ptrdiff_t tid_field)
{
  int tid = xp_gettid ();
#ifdef XP_GLIBC_DESCRIPTOR_AT_TP
  (void) size;
  return *(const int *) (tp + tid_field) == tid ? 0 : 1;
#else
  for (size_t gap = 0; gap <= XP_GLIBC_MAX_TCB_GAP; gap += sizeof (void *))
    {
      ptrdiff_t desc = -(ptrdiff_t) (size + gap);
      if (*(const int *) (tp + desc + tid_field) == tid)
        return desc;
    }
  return 1;
#endif
}

/* How the TCB, the descriptor and static TLS share a thread's block:
   where the descriptor is the TCB, ld.so's static size counts it and the
   TLS lies below; else the TLS lies above and the descriptor below.  */
static const char *
place_static_tls (void)
{
  size_t align = xp_glibc.static_tls_align;
  if (align == 0 || (align & (align - 1)) != 0)
    return "static TLS alignment is implausible";
#ifdef XP_GLIBC_DESCRIPTOR_AT_TP
  if (xp_glibc.static_tls_size < xp_glibc.tcb_size)
    return "static TLS size is implausible";
  xp_glibc.tls_above = xp_glibc.tcb_size;
  xp_glibc.tls_below = xp_glibc.static_tls_size - xp_glibc.tcb_size;
#else
  xp_glibc.tls_above = xp_glibc.static_tls_size;
  xp_glibc.tls_below = (size_t) -xp_glibc.desc_offset;
#endif
  return NULL;
}

static const char *
discover_thread_fields (const char *tp)
{
  size_t key_block;
  if (!read_size ("_thread_db_sizeof_pthread", &xp_glibc.tcb_size)
      || !read_field ("_thread_db_pthread_tid", 32, 1, &xp_glibc.off_tid)
      || !read_field ("_thread_db_pthread_list", 2 * 8 * sizeof (void *), 1,
                      &xp_glibc.off_list)
      || !read_field ("_thread_db_pthread_specific",
                      32 * 8 * sizeof (void *), 1, &xp_glibc.off_specific)
      || !read_size ("_thread_db_sizeof_pthread_key_data_level2", &key_block)
      || !read_field ("_thread_db_pthread_cancelhandling", 32, 1,
                      &xp_glibc.off_cancelhandling))
    return "glibc's thread descriptors are missing or unexpected";
  ptrdiff_t desc = find_descriptor (tp, xp_glibc.tcb_size, xp_glibc.off_tid);
  if (desc == 1)
    return "tid field does not hold the main thread's tid";
  xp_glibc.desc_offset = desc;
  xp_glibc.off_tid += desc;
  xp_glibc.off_list += desc;
  xp_glibc.off_specific += desc;
  xp_glibc.off_cancelhandling += desc;
  /* The first key block sits just before the pointer array that
     references it; the main thread's specific[0] must say so.  */
  xp_glibc.off_specific_first = xp_glibc.off_specific - (ptrdiff_t) key_block;
  if (word_at (tp, xp_glibc.off_specific) != tp + xp_glibc.off_specific_first)
    return "thread-specific block not where expected";
  if (*(const int *) (tp + xp_glibc.off_cancelhandling)
      & (XP_GLIBC_EXITING_BIT | XP_GLIBC_SETXID_BIT))
    return "cancelhandling of the main thread says it is leaving";
  if (!xp_glibc_tcb_header_valid (tp))
    return "TCB header does not point at itself";
  return discover_robust_head (tp);
}

/* Whether SIZE bytes at OFF from the thread pointer lie in the block a
   raw thread's TCB, descriptor and static TLS occupy.  */
static bool
in_block (ptrdiff_t off, size_t size)
{
  return off >= -(ptrdiff_t) xp_glibc.tls_below
         && off + (ptrdiff_t) size <= (ptrdiff_t) xp_glibc.tls_above;
}

/* glibc up to 2.40 keeps the rseq area inside struct pthread; from 2.41
   (x86_64 and others) it lies in the static TLS area below the
   descriptor, at a negative offset.  Either way it must lie in the block
   a raw thread's TCB and static TLS occupy, and be aligned as the kernel
   asks (32 bytes for the original 32-byte registration).  The area is
   there even when glibc registers none (size 0: the kernel lacks rseq, or
   glibc.pthread.rseq=0), for its cpu_id says so; offset 0 means none at
   all.  Called once the static TLS size is known.  */
static const char *
discover_rseq (void)
{
  if (&__rseq_offset == NULL || &__rseq_size == NULL)
    return "glibc does not export its rseq area";
  xp_glibc.rseq_offset = __rseq_offset;
  xp_glibc.rseq_size = __rseq_size;
  /* A port without rseq support (riscv64 before 2.39) leaves both 0.  */
  if (xp_glibc.rseq_offset == 0)
    return xp_glibc.rseq_size == 0 ? NULL : "rseq area at the thread pointer";
  ptrdiff_t end = xp_glibc.rseq_offset + XP_RSEQ_AREA_SIZE;
  if (!in_block (xp_glibc.rseq_offset, XP_RSEQ_AREA_SIZE)
      || (xp_glibc.rseq_offset < 0 && end > 0))
    return "rseq area outside the thread's TCB and static TLS";
  if (xp_glibc.rseq_offset % XP_RSEQ_AREA_SIZE != 0
      || xp_glibc.static_tls_align < XP_RSEQ_AREA_SIZE)
    return "rseq area not aligned as the kernel requires";
  return NULL;
}

ptrdiff_t
xp_layout_cpu_id_offset (void)
{
  if (&__rseq_offset == NULL || &__rseq_size == NULL
      || __rseq_size < XP_RSEQ_OFF_CPU_ID + sizeof (int))
    return 0;
  return __rseq_offset + XP_RSEQ_OFF_CPU_ID;
}

ptrdiff_t
xp_layout_tid_offset (void)
{
  size_t size;
  ptrdiff_t off;
  if (!read_size ("_thread_db_sizeof_pthread", &size)
      || !read_field ("_thread_db_pthread_tid", 32, 1, &off) || off <= 0)
    return 0;
  ptrdiff_t desc = find_descriptor (xp_thread_pointer (), size, off);
  return desc == 1 ? 0 : desc + off;
}

struct libc_tls_search
{
  const char *resp;
  const char *block;
  size_t size;
};

/* libc's static TLS block is the one holding __resp.  */
static int
find_libc_tls (struct dl_phdr_info *info, size_t size, void *data)
{
  struct libc_tls_search *s = data;
  const char *block = info->dlpi_tls_data;
  if (block == NULL)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_TLS
        && s->resp >= block && s->resp < block + info->dlpi_phdr[i].p_memsz)
      {
        s->block = block;
        s->size = info->dlpi_phdr[i].p_memsz;
        return 1;
      }
  return 0;
}

static const char *
discover_libc_tls (const char *tp)
{
  struct libc_tls_search s = { .resp = private_symbol ("__resp") };
  if (s.resp == NULL)
    return "glibc's __resp is missing";
  xp_glibc.resp_offset = s.resp - tp;
  if (!dl_iterate_phdr (find_libc_tls, &s))
    return "glibc's static TLS block not found";
  xp_glibc.libc_tls_offset = s.block - tp;
  xp_glibc.libc_tls_size = s.size;
  if (s.size > XP_LIBC_TLS_MAX)
    return "glibc's TLS block is larger than expected";
  ptrdiff_t desc_end = xp_glibc.desc_offset + (ptrdiff_t) xp_glibc.tcb_size;
  if (!in_block (xp_glibc.libc_tls_offset, s.size)
      || (xp_glibc.libc_tls_offset < desc_end
          && xp_glibc.libc_tls_offset + (ptrdiff_t) s.size
             > xp_glibc.desc_offset))
    return "glibc's TLS block is not in the static TLS area";
  return NULL;
}

static const char *
discover_functions (void)
{
  xp_glibc.allocate_tls
    = (void *(*) (void *)) private_symbol ("_dl_allocate_tls");
  xp_glibc.deallocate_tls
    = (void (*) (void *, bool)) private_symbol ("_dl_deallocate_tls");
  xp_glibc.ctype_init = (void (*) (void)) private_symbol ("__ctype_init");
  xp_glibc.call_tls_dtors
    = (void (*) (void)) private_symbol ("__call_tls_dtors");
  if (xp_glibc.allocate_tls == NULL || xp_glibc.deallocate_tls == NULL
      || xp_glibc.ctype_init == NULL || xp_glibc.call_tls_dtors == NULL)
    return "glibc's TLS and ctype entry points are missing";
  return NULL;
}

void
xp_layout_find_tls_dtors (void)
{
  if (xp_glibc.call_tls_dtors == NULL)
    xp_glibc.call_tls_dtors
      = (void (*) (void)) private_symbol ("__call_tls_dtors");
}

const char *
xp_layout_discover (void)
{
  const char *tp = xp_thread_pointer ();
  const char *why = discover_functions ();
  if (why != NULL)
    return why;
  void (*tls_static_info) (size_t *, size_t *)
    = (void (*) (size_t *, size_t *)) private_symbol ("_dl_get_tls_static_info");
  if (tls_static_info == NULL)
    return "ld.so does not export its static TLS size";
  tls_static_info (&xp_glibc.static_tls_size, &xp_glibc.static_tls_align);
  if ((why = discover_thread_fields (tp)) != NULL
      || (why = xp_glibc_list_discover (tp)) != NULL)
    return why;
  if ((why = place_static_tls ()) != NULL
      || (why = discover_rseq ()) != NULL)
    return why;
  return discover_libc_tls (tp);
}

#ifdef XP_GLIBC_GLOBAL_POINTER_GUARD
uintptr_t xp_glibc_pointer_guard;
#endif

void
xp_layout_find_pointer_guard (void)
{
#ifdef XP_GLIBC_GLOBAL_POINTER_GUARD
  const uintptr_t *guard = private_symbol ("__pointer_chk_guard");
  if (guard != NULL)
    xp_glibc_pointer_guard = *guard;
#endif
}
