/* The glibc thread control block of a raw thread.

   glibc code finds everything per-thread through the thread pointer: its
   TCB header (stack protector canary, pointer guard, DTV), struct pthread
   (tid, robust list, key blocks, rseq area) and the static TLS blocks
   below it.  We build one that glibc accepts, following the steps recorded
   in DESIGN.md (Threads), with offsets from layout.c.

   A block whose previous thread has exited keeps libc's own TLS block: the
   malloc thread cache and arena pointer live there and glibc offers no
   public way to release them, so handing them to the next thread is what
   keeps thread churn from leaking.  What must be fresh per thread (errno,
   locale, ctype tables, resolver) is reset in xp_compat_thread_start.  */
#define _GNU_SOURCE
#include "compat.h"
#include "glibc-arch.h"
#include "layout.h"
#include "glibc-list.h"
#include "thread.h"
#include <errno.h>
#include <locale.h>
#include <netdb.h>
#include <sched.h>
#include <string.h>


static inline void
set_word (char *tp, ptrdiff_t off, const void *value)
{
  *(const void **) (tp + off) = value;
}

size_t
xp_compat_tls_reserve (void)
{
  return xp_glibc.tls_below + xp_glibc.tls_above;
}

size_t
xp_compat_tls_above (void)
{
  return xp_glibc.tls_above;
}

size_t
xp_compat_tls_align (void)
{
  return xp_glibc.static_tls_align;
}

/* struct pthread, and below the thread pointer whatever lies between it
   and there (glibc's TCB header on riscv64).  */
static void
clear_descriptor (char *tp)
{
  if (xp_glibc.desc_offset < 0)
    memset (tp + xp_glibc.desc_offset, 0, (size_t) -xp_glibc.desc_offset);
  else
    memset (tp, 0, xp_glibc.tcb_size);
}

static void
fill_descriptor (char *tp)
{
  /* fork's child walks the list node of the forking thread; a self-linked
     node is an empty list to it.  */
  set_word (tp, xp_glibc.off_list, tp + xp_glibc.off_list);
  set_word (tp, xp_glibc.off_list + sizeof (void *), tp + xp_glibc.off_list);
  set_word (tp, xp_glibc.off_specific, tp + xp_glibc.off_specific_first);
  char *head = tp + xp_glibc.off_robust_head;
  set_word (tp, xp_glibc.off_robust_head - sizeof (void *), head);
  set_word (tp, xp_glibc.off_robust_head, head);
  set_word (tp, xp_glibc.off_robust_head + sizeof (void *),
            (void *) xp_glibc.robust_futex_offset);
}

/* The rseq area may lie in the static TLS area (glibc 2.41 and later),
   which a reused block does not clear: a stale critical-section pointer
   there would be followed by the kernel once the area is registered.
   Until the thread registers it, and for good where glibc registers none,
   make sched_getcpu ask the kernel rather than read a zero cpu_id.  */
static void
reset_rseq (char *tp)
{
  if (xp_glibc.rseq_offset == 0)
    return;
  memset (tp + xp_glibc.rseq_offset, 0, XP_RSEQ_AREA_SIZE);
  *(int *) (tp + xp_glibc.rseq_offset + XP_RSEQ_OFF_CPU_ID)
    = XP_RSEQ_CPU_ID_REGISTRATION_FAILED;
}

/* The TCB joins glibc's thread list before its TLS is allocated, as
   glibc's own threads do, so that a library dlopen'ed meanwhile cannot be
   missed: either the allocation sees it or glibc's walk of the list does.
   Until the thread runs, its tid field is 0 and a set*id broadcast skips
   it; the creator has the new credentials by the time it clones.  */
bool
xp_compat_tcb_build (void *tp, bool fresh)
{
  char *t = tp;
  char *libc_tls = t + xp_glibc.libc_tls_offset;
  char saved[XP_LIBC_TLS_MAX];
  if (!fresh)
    memcpy (saved, libc_tls, xp_glibc.libc_tls_size);
  clear_descriptor (t);
  xp_glibc_fill_tcb_header (t, xp_thread_pointer (), xp_glibc.desc_offset);
  fill_descriptor (t);
  xp_glibc_list_lock ();
  xp_glibc_list_add (t);
  xp_glibc_list_unlock ();
  if (xp_glibc.allocate_tls (tp) == NULL)
    {
      xp_compat_tcb_leave_list (tp);
      return false;
    }
  if (!fresh)
    memcpy (libc_tls, saved, xp_glibc.libc_tls_size);
  reset_rseq (t);
  return true;
}

void
xp_compat_tcb_leave_list (void *tp)
{
  char *node = (char *) tp + xp_glibc.off_list;
  xp_glibc_list_lock ();
  /* Self-linked: it left already, when its thread's exit found a set*id
     broadcast under way (xp_compat_tcb_retire).  */
  if (*(char **) node != node)
    xp_glibc_list_remove (tp);
  xp_glibc_list_unlock ();
}

/* glibc's set*id broadcast (nptl/nptl_setxid.c) holds the list lock, marks
   with SETXID every listed thread not marked EXITING, signals the marked
   ones and waits until each has run its handler.  Both marks are made by
   compare-and-swap on the same word, so exactly one of these holds:
   - we set EXITING first: every later broadcast skips this thread, which
     may block its signals and leave its TCB listed until the block is
     reclaimed (xp_compat_tcb_leave_list then takes it off);
   - a broadcast marked it first: it will signal this thread and wait for
     its handler, so the caller must keep its signals open until the
     broadcast is over, which taking the list lock guarantees.
   This keeps the list lock, which a creator holds across clone, off the
   path of every exiting thread.  */
bool
xp_compat_tcb_retire (void *tp)
{
  int *word = (int *) ((char *) tp + xp_glibc.off_cancelhandling);
  int old = xp_load_relaxed (word);
  while (!xp_cas (word, &old, old | XP_GLIBC_EXITING_BIT))
    ;
  return (old & XP_GLIBC_SETXID_BIT) == 0;
}

void
xp_compat_clone_begin (void)
{
  xp_glibc_list_lock ();
}

/* The new thread may have ended already, but its TCB stays in place until
   its block is reclaimed, which takes it off the list under the lock we
   still hold.  */
void
xp_compat_clone_end (void *tp, long tid)
{
  if (tid > 0)
    *(int *) ((char *) tp + xp_glibc.off_tid) = (int) tid;
  xp_glibc_list_unlock ();
}

void
xp_compat_tcb_destroy (void *tp)
{
  xp_glibc.deallocate_tls (tp, false);
}

/* The area is never unregistered: the kernel writes a task's rseq area
   only on the task's way back to user space, which an exiting thread never
   takes again once it is in exit(2), and its block is reused or unmapped
   only after that, when the kernel has cleared its tid.  glibc relies on
   the same for its own threads.  */
static void
register_rseq (char *tp)
{
  if (xp_glibc.rseq_size == 0)
    return;
  long rc = xp_syscall4 (SYS_rseq, tp + xp_glibc.rseq_offset,
                         XP_RSEQ_AREA_SIZE, 0, XP_RSEQ_SIG);
  if (rc != 0)
    *(int *) (tp + xp_glibc.rseq_offset + XP_RSEQ_OFF_CPU_ID)
      = XP_RSEQ_CPU_ID_REGISTRATION_FAILED;
}

void
xp_compat_thread_start (struct xp_thread *self)
{
  char *tp = self->tp;
  *(int *) (tp + xp_glibc.off_tid) = self->tid;
  self->robust_head = (struct robust_list_head *) (tp
                                                    + xp_glibc.off_robust_head);
  xp_syscall2 (SYS_set_robust_list, self->robust_head,
               sizeof *self->robust_head);
  register_rseq (tp);
  /* A reused block carries the previous thread's libc TLS: start from the
     global locale and a fresh resolver as a new glibc thread does.  */
  uselocale (LC_GLOBAL_LOCALE);
  xp_glibc.ctype_init ();
  memset (&self->resolver, 0, sizeof self->resolver);
  set_word (tp, xp_glibc.resp_offset, &self->resolver);
  errno = 0;
  h_errno = 0;
}

void
xp_compat_call_tls_dtors (void)
{
  if (xp_glibc.call_tls_dtors != NULL)
    xp_glibc.call_tls_dtors ();
}
