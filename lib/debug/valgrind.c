/* The lock hooks for valgrind's thread checkers, helgrind and DRD.

   Both intercept glibc's pthread functions by library name, so calls that
   bind to xpthread's are invisible to them; instead xpthread describes
   its primitives with client requests (<valgrind/helgrind.h>).  The
   requests used are those the two tools share, numbered alike in
   helgrind.h and drd.h: a lock is a reader-writer lock taken and
   released (a mutex or spinlock as its writer), and everything else
   (semaphores, barriers, condition variables, once, exit and join) a
   happens-before edge between a send and a receive on an address.

   A lock's own words are read and written concurrently by atomic
   instructions, which the tools would report as races: each hook
   excludes them from checking, as the tools exclude glibc's (helgrind
   suppresses every race inside libc, DRD records nothing inside its
   wrappers).

   Outside valgrind a client request is a few instructions that do
   nothing, but the hooks are not even called: xp_lock_hooks stays 0, as
   it does under valgrind's other tools (memcheck, callgrind, which
   bench/count-mutex uses to count the fast paths).  */
#include "valgrind.h"

#if HAVE_VALGRIND_HELGRIND_H
#include "compat.h"
#include <xp-elf-arch.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <valgrind/helgrind.h>

/* drd.h's first request, which answers the thread's number under DRD
   and the default (0) elsewhere; drd.h cannot be included beside
   helgrind.h, which defines the same ANNOTATE macros.  */
#define XP_DRD_GET_VALGRIND_THREAD_ID VG_USERREQ_TOOL_BASE ('D', 'R')

/* A tool's preload object whose own calls to pthread functions must
   reach glibc's, which the tool intercepts, and not xpthread's: their
   jump slots there are pointed at glibc's functions (the default version
   of each, the one an object linked today binds to).  */

struct rebinding
{
  const char *object;           /* part of the preload object's path */
  const char *const *calls;
  size_t count;
};

/* DRD's pthread_create wrapper waits for the new thread on a mutex and a
   condition variable of its own, and asks DRD to ignore that mutex's lock
   order, which DRD answers with "not a mutex" when the wrapper's calls
   bind to xpthread's: DRD saw no pthread_mutex_init.  */
static const char *const drd_own_calls[] = {
  "pthread_mutex_init",
  "pthread_mutex_destroy",
  "pthread_mutex_lock",
  "pthread_mutex_unlock",
  "pthread_cond_init",
  "pthread_cond_destroy",
  "pthread_cond_wait",
  "pthread_cond_signal",
};

/* Helgrind's thread wrapper (valgrind 3.27 seen) asks pthread_self for
   the handle it matches glibc's pthread_join against; xpthread's answer,
   which adopts the thread besides, matches no join.  */
static const char *const helgrind_own_calls[] = {
  "pthread_self",
};

static const struct rebinding drd_rebinding = {
  "/vgpreload_drd-", drd_own_calls,
  sizeof drd_own_calls / sizeof *drd_own_calls,
};
static const struct rebinding helgrind_rebinding = {
  "/vgpreload_helgrind-", helgrind_own_calls,
  sizeof helgrind_own_calls / sizeof *helgrind_own_calls,
};

/* An address from OBJ's dynamic section, which glibc's dynamic linker
   relocates in place, though not in every object (the vDSO's).  */
static uintptr_t
dynamic_address (const struct dl_phdr_info *obj, ElfW (Addr) ptr)
{
  return ptr < obj->dlpi_addr ? obj->dlpi_addr + ptr : ptr;
}

static int
rebind_object (struct dl_phdr_info *obj, size_t size, void *data)
{
  (void) size;
  const struct rebinding *want = data;
  if (strstr (obj->dlpi_name, want->object) == NULL)
    return 0;
  const ElfW (Dyn) *dyn = NULL;
  uintptr_t relro = 0, relro_end = 0;
  for (int i = 0; i < obj->dlpi_phnum; i++)
    if (obj->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = (const void *) (obj->dlpi_addr + obj->dlpi_phdr[i].p_vaddr);
    else if (obj->dlpi_phdr[i].p_type == PT_GNU_RELRO)
      {
        relro = obj->dlpi_addr + obj->dlpi_phdr[i].p_vaddr;
        relro_end = relro + obj->dlpi_phdr[i].p_memsz;
      }
  const ElfW (Rela) *rela = NULL;
  const ElfW (Sym) *symtab = NULL;
  const char *strtab = NULL;
  size_t relsz = 0;
  for (; dyn != NULL && dyn->d_tag != DT_NULL; dyn++)
    if (dyn->d_tag == DT_JMPREL)
      rela = (const void *) dynamic_address (obj, dyn->d_un.d_ptr);
    else if (dyn->d_tag == DT_PLTRELSZ)
      relsz = dyn->d_un.d_val;
    else if (dyn->d_tag == DT_SYMTAB)
      symtab = (const void *) dynamic_address (obj, dyn->d_un.d_ptr);
    else if (dyn->d_tag == DT_STRTAB)
      strtab = (const void *) dynamic_address (obj, dyn->d_un.d_ptr);
  if (rela == NULL || symtab == NULL || strtab == NULL)
    return 1;
  uintptr_t page_size = (uintptr_t) sysconf (_SC_PAGESIZE);
  for (size_t r = 0; r < relsz / sizeof *rela; r++)
    {
      if (ELF64_R_TYPE (rela[r].r_info) != XP_ARCH_JUMP_SLOT)
        continue;
      const char *name = strtab + symtab[ELF64_R_SYM (rela[r].r_info)].st_name;
      for (size_t c = 0; c < want->count; c++)
        if (strcmp (name, want->calls[c]) == 0)
          {
            uintptr_t slot = obj->dlpi_addr + rela[r].r_offset;
            /* Bound at load time (-z now), the slots are read-only.  */
            void *page = (void *) (slot & -(uintptr_t) page_size);
            bool ro = slot >= relro && slot < relro_end;
            if (ro)
              mprotect (page, page_size, PROT_READ | PROT_WRITE);
            *(void **) slot = xp_glibc_function (name);
            if (ro)
              mprotect (page, page_size, PROT_READ);
          }
    }
  return 1;
}

bool
xp_vg_init (bool *observes)
{
  *observes = false;
  if (!RUNNING_ON_VALGRIND)
    return false;
  static char probe;
  /* The number of addressable bytes under helgrind, and elsewhere the
     default, -2 (which the macro widens from 32 bits: not negative).  */
  bool helgrind = VALGRIND_HG_GET_ABITS (&probe, NULL, 1) == 1;
  bool drd = VALGRIND_DO_CLIENT_REQUEST_EXPR (0, XP_DRD_GET_VALGRIND_THREAD_ID,
                                              0, 0, 0, 0, 0) != 0;
  *observes = helgrind || drd;
  if (drd)
    dl_iterate_phdr (rebind_object, (void *) &drd_rebinding);
  if (helgrind)
    dl_iterate_phdr (rebind_object, (void *) &helgrind_rebinding);
  return true;
}

void
xp_vg_acquired (void *lock, size_t size, bool writer)
{
  VALGRIND_HG_DISABLE_CHECKING (lock, size);
  ANNOTATE_RWLOCK_ACQUIRED (lock, writer);
}

void
xp_vg_releasing (void *lock, size_t size, bool writer)
{
  VALGRIND_HG_DISABLE_CHECKING (lock, size);
  ANNOTATE_RWLOCK_RELEASED (lock, writer);
}

void
xp_vg_send (const void *obj)
{
  ANNOTATE_HAPPENS_BEFORE (obj);
}

void
xp_vg_receive (const void *obj)
{
  ANNOTATE_HAPPENS_AFTER (obj);
}

void
xp_vg_sync_words (const void *addr, size_t size)
{
  VALGRIND_HG_DISABLE_CHECKING (addr, size);
}

#else

bool
xp_vg_init (bool *observes)
{
  *observes = false;
  return false;
}

#endif
