/* What the portable core asks of glibc.  Everything that knows glibc's
   private layout sits behind these functions.  */
#ifndef XP_NPTL_COMPAT_COMPAT_H
#define XP_NPTL_COMPAT_COMPAT_H

#include "common.h"
#include <pthread.h>
#include <sys/single_threaded.h>

struct xp_thread;

/* glibc's reserved signals: SIGCANCEL carries cancel requests, SIGSETXID
   the set*id calls to every thread.  <signal.h> hides them from
   applications by starting SIGRTMIN above them, and glibc's sigaction and
   sigprocmask refuse or drop them.  */
#define XP_SIGCANCEL 32
#define XP_SIGSETXID 33

enum xp_mode
{
  XP_MODE_RAW,     /* threads from clone(2) with a TCB glibc accepts */
  XP_MODE_HOSTED   /* threads from glibc's pthread_create */
};

extern enum xp_mode xp_mode XP_HIDDEN;
/* Why hosted mode was chosen, for the mode report.  */
extern const char *xp_mode_reason XP_HIDDEN;

/* Offset from the thread pointer of the cpu_id word of the calling
   thread's rseq area (glibc's public __rseq_offset), which the kernel
   rewrites whenever the thread resumes on a CPU; 0 when glibc registers
   no rseq area.  Set by xp_compat_init in every mode.  */
extern ptrdiff_t xp_compat_cpu_id_offset XP_HIDDEN;

/* The CPU the calling thread last resumed on, or a negative value when
   that is unknown (no rseq area, or not registered).  A hint only: the
   thread may have moved since.  */
static inline int
xp_compat_current_cpu (void)
{
  ptrdiff_t off = xp_compat_cpu_id_offset;
  if (off == 0)
    return -1;
  return *(volatile const int *) ((const char *) xp_thread_pointer () + off);
}

/* Offset from the thread pointer of glibc's copy of the calling thread's
   tid, checked against the main thread at start-up; 0 when unknown.  */
extern ptrdiff_t xp_compat_tid_offset XP_HIDDEN;

/* The calling thread's tid without its descriptor: glibc's copy, or one
   system call where this glibc's layout is unknown.  */
static inline int
xp_compat_current_tid (void)
{
  ptrdiff_t off = xp_compat_tid_offset;
  if (off == 0)
    return xp_gettid ();
  return *(volatile const int *) ((const char *) xp_thread_pointer () + off);
}

/* Whether the process has had a single thread all along: glibc's public
   flag (since 2.32), which it clears before its first thread starts, and
   which xpthread has glibc clear before the first thread of its own
   (xp_compat_go_multithreaded), and never sets again (read in 2.36's and
   2.41's sources, fork's child included).  The one place that relies on
   it.  */
static inline bool
xp_compat_single_threaded (void)
{
  return __libc_single_threaded != 0;
}

/* Find what every mode needs of glibc (its thread functions, the tid and
   cpu words, the condition variable layout).  Then choose the mode
   (environment XPTHREAD_MODE=raw|hosted|auto), validating glibc's layout
   for raw mode; under valgrind, hosted.  Each called once, in this
   order, from the constructor.  */
void xp_compat_init (void) XP_HIDDEN;
void xp_compat_choose_mode (bool under_valgrind) XP_HIDDEN;

/* Before the first thread: let glibc put itself in multi-threaded mode.
   0, or the error of glibc's pthread_create (tried again next call).  */
int xp_compat_go_multithreaded (void) XP_HIDDEN;

/* Bytes a raw thread needs at the top of its block for static TLS, the
   TCB and glibc's descriptor; how many of them lie at and above the
   thread pointer; and the alignment of the thread pointer.  */
size_t xp_compat_tls_reserve (void) XP_HIDDEN;
size_t xp_compat_tls_above (void) XP_HIDDEN;
size_t xp_compat_tls_align (void) XP_HIDDEN;

/* Build a TCB whose thread pointer is tp (inside a block, below which the
   static TLS area lies).  fresh: the block is new; otherwise it held an
   exited thread whose libc TLS (malloc cache, arena) the new thread keeps.
   Returns false when glibc cannot allocate the thread's TLS.  */
bool xp_compat_tcb_build (void *tp, bool fresh) XP_HIDDEN;

/* Take a TCB off glibc's thread list: its thread is gone, never started,
   or is leaving while a set*id broadcast waits for it.  */
void xp_compat_tcb_leave_list (void *tp) XP_HIDDEN;

/* The thread of tp is exiting and will run no more glibc code: have
   glibc's set*id broadcasts pass it by.  False when a broadcast already
   counts on this thread; it must then keep its signals open and leave the
   list itself (xp_compat_tcb_leave_list), which waits for the broadcast. */
bool xp_compat_tcb_retire (void *tp) XP_HIDDEN;

/* Bracket the clone of a raw thread: glibc's thread list stays locked so
   that no set*id broadcast can run between the clone (which copies the
   creator's credentials) and the moment the new thread can be signalled.
   Call with signals unblocked; clone_end records the new tid (clone's
   result, -errno on failure) for glibc.  */
void xp_compat_clone_begin (void) XP_HIDDEN;
void xp_compat_clone_end (void *tp, long tid) XP_HIDDEN;

/* Give back what glibc allocated for a TCB (DTV, dynamic TLS).  */
void xp_compat_tcb_destroy (void *tp) XP_HIDDEN;

/* Runs first in a new raw thread, on its own stack.  */
void xp_compat_thread_start (struct xp_thread *self) XP_HIDDEN;

/* C++ thread_local destructors of the calling thread (any mode).  */
void xp_compat_call_tls_dtors (void) XP_HIDDEN;

/* Add fork handlers to glibc's registry (its fork runs them); DSO_HANDLE:
   the object whose unloading removes them, or NULL.  */
int xp_glibc_register_atfork (void (*prepare) (void), void (*parent) (void),
                              void (*child) (void), void *dso_handle)
  XP_HIDDEN;

/* glibc's definition of name, in its default version: the one a program
   linked against this glibc gets, whatever the architecture's oldest
   version is.  The first ends the process when glibc lacks it, the second
   answers NULL.  */
void *xp_glibc_function (const char *name) XP_HIDDEN;
void *xp_glibc_function_if_any (const char *name) XP_HIDDEN;

#endif
