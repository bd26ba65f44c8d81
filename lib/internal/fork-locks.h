/* The table of the library's process-wide internal locks, held across
   fork.

   A thread of the parent may be inside any of these locks when another
   thread forks; the child has only the forking thread, so a lock copied
   in its held state would stay held forever.  The prepare handler
   (lib/thread/init.c) therefore takes every lock of the table, in table
   order, before glibc's fork goes on, and the parent and child handlers
   release them all.  glibc's own fork then takes the stdio list lock and
   malloc's locks, after our prepare handler: holders of our locks may
   call malloc, which is fine because no thread holds a malloc lock while
   it waits for one of ours.

   Order.  A thread that holds one lock of the table while it waits for
   another one, directly or through a lock of glibc, makes the second come
   after the first: prepare, holding the first, would otherwise wait for
   the second held by a thread that waits for the first.  The nestings:
   - mode: its holder runs glibc's pthread_create and pthread_join
     (xp_compat_go_multithreaded), which take glibc's thread list lock; a
     raw creator holds that lock while it takes thread_list, so mode comes
     before thread_list.
   - shared_cond: its holder (nptl-compat/glibc-cond.c) looks glibc's
     functions up with dlvsym and runs them and xpthread's process-shared
     mutex on scratch objects, once; the mutex may reach lockdep and
     prof, so it comes before them.
   - stack_cache: its holder takes glibc's thread list lock (reclaiming a
     block takes its TCB off glibc's list) and calls free; same chain, so
     it comes before thread_list.
   - lockdep: its holder (lib/debug/lockdep.c) takes only objects of the
     table, but it is taken inside every pthread lock, and so inside
     malloc, while the holders of the locks above may wait for malloc;
     so it comes after them.  It names nothing and writes nothing: its
     reports are named and written after it is released.
   - prof: the contention profiler's tables (lib/debug/prof.c), taken on
     the slow paths of locks, and by its reporter only to copy them (it
     names and writes after); after lockdep, whose holder may be inside
     a profiled lock path.
   - prof_report: the profiler's reports, in the order of their
     snapshots (lib/debug/prof-control.c); its holder takes prof to copy
     the tables, and writes with raw system calls.
   - sym: libdw's session (lib/debug/sym-lines.c), taken by the threads
     that name the sites of a report, holding none of the locks above;
     its holder calls libdw and malloc.  Nobody waits for it longer than
     a second, nor while holding it.
   - objects: the loaded objects (lib/debug/objects.c), taken inside
     lockdep's and the profiler's locks and by threads naming a report's
     sites; its holder calls only dl_iterate_phdr, mmap and the unwinder.
     Every dl_iterate_phdr of the tools runs under it (or under sym):
     glibc's child does not reset the lock dl_iterate_phdr takes.
   - arena: the lock debugging tools' memory (lib/debug/arena.c), taken
     inside the three above; its holder calls only mmap.
   - thread_list: taken with glibc's thread list lock held (create_raw)
     and by exiting threads with every signal blocked, so it comes last:
     once prepare has it, it waits for nothing more.
   - default_attr, keys, named_sems, system, hosted_descriptors: leaves;
     their holders call only malloc, mmap, sigaction or getrlimit.
   - report_write: one lockdep report written at a time
     (lib/debug/lockdep-report.c),
     a leaf; its holder blocks every signal and calls only write(2).
   Apart from those nestings of the lock debugging tools, no lock of
   the table is taken while another of them is held.

   Not in the table, and why:
   - glibc's thread list lock (nptl-compat/glibc-list.c): glibc's, and
     glibc's child resets it and repairs a list change a fork cut in two,
     xpthread's included (the "in flight" word); glibc's fork does not
     take it, so neither do we.
   - the forking thread's own per-thread locks (exit_lock, sched_lock in
     struct xp_thread): another thread may hold them to act on it (a pin,
     pthread_setschedparam); the child resets them (init.c).  Other
     threads' descriptors mean nothing in the child.
   - a condition variable's waiter-list word: an application object,
     whose state across fork is the application's business as in glibc.
   glibc's dynamic-linker locks are glibc's: its child resets them.

   Adding a lock: define it with XP_FORK_LOCK (ENTRY, NAME) and add ENTRY
   to XP_FORK_LOCKS at its place in the order above.  An entry without a
   definition does not link; a definition whose entry is missing does not
   compile; tests/fork-locks.sh fails if an internal lock is defined any
   other way.  */
#ifndef XP_INTERNAL_FORK_LOCKS_H
#define XP_INTERNAL_FORK_LOCKS_H

#include "lock.h"

#define XP_FORK_LOCKS(X) \
  X (mode) \
  X (shared_cond) \
  X (default_attr) \
  X (keys) \
  X (named_sems) \
  X (system) \
  X (hosted_descriptors) \
  X (report_write) \
  X (stack_cache) \
  X (lockdep) \
  X (prof_report) \
  X (prof) \
  X (sym) \
  X (objects) \
  X (arena) \
  X (thread_list)

#define XP_FORK_ORDER(entry) XP_FORK_ORDER_##entry,
enum { XP_FORK_LOCKS (XP_FORK_ORDER) XP_FORK_LOCK_COUNT };
#undef XP_FORK_ORDER

#define XP_FORK_DECLARE(entry) \
  extern xp_lock_t *const xp_fork_lock_##entry XP_HIDDEN;
XP_FORK_LOCKS (XP_FORK_DECLARE)
#undef XP_FORK_DECLARE

/* Define the lock NAME (with its storage class before the macro) as the
   table's ENTRY.  */
#define XP_FORK_LOCK(entry, name) \
  xp_lock_t name = XP_LOCK_INIT; \
  _Static_assert (XP_FORK_ORDER_##entry < XP_FORK_LOCK_COUNT, \
                  #entry " is in XP_FORK_LOCKS"); \
  xp_lock_t *const xp_fork_lock_##entry = &name

/* Take every lock of the table in order; release them all (IN_CHILD:
   in the child of the fork, where no other thread is left).  */
void xp_fork_locks_take (void) XP_HIDDEN;
void xp_fork_locks_release (bool in_child) XP_HIDDEN;

/* Take LOCK, a lock of the table, for a hook of the lock debugging
   tools, which run inside the program's locks; false, without it, when
   a fork has taken or held the table for XP_FORK_HOOK_PATIENCE_MS.  The
   fork handlers that run after ours in the forking thread (those
   registered before it, as jemalloc's) take the program's locks: a hook
   that waited for the table, its caller holding one of them, would wait
   for ever.  So the hook waits only as long as a fork takes when nothing
   holds it up, and then lets its event through unchecked and uncounted:
   a thread locking while another forks keeps its events.  */
#define XP_FORK_HOOK_PATIENCE_MS 50
bool xp_fork_lock_for_hook (xp_lock_t *lock) XP_HIDDEN;

/* True in the thread that holds the table (the forking one) from the
   end of xp_fork_locks_take to the start of xp_fork_locks_release.  In
   that time the fork handlers of others run in it (those registered
   before ours, as jemalloc's, which takes all its mutexes in prepare and
   initialises them again in the child), and their lock calls must not
   wait for a lock of the table: the lock validator lets them through
   unchecked.  */
extern __thread bool xp_fork_locks_mine
  __attribute__ ((tls_model ("initial-exec"))) XP_HIDDEN;

#endif
