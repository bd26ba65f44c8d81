/* Away marks: the threads that have given up their CPU inside the
   library, so that the waiters of the locks they hold stop spinning.

   A spin can only end when the owner releases the lock, and an owner off
   its CPU releases nothing until it is back.  Where threads outnumber
   CPUs it is worse: a waiter that spins, or waits late, is runnable, so
   an owner that yields hands it its CPU and then waits for the waiter to
   give it back.  The kernel's mutexes spin only while the owner runs on
   a CPU; user space cannot see that, but the library sees where its
   callers leave their CPU: sched_yield and every futex sleep.  There a
   thread writes its tid into its slot of a table indexed by tid (modulo
   its size), and clears the slot when it is back; a waiter that knows
   the owner's tid (a mutex records it) reads the owner's slot before and
   while it waits (spin-policy.h).

   A slot holds a tid, not a count, so that a mark is never another
   thread's: two threads that share a slot can only overwrite each other's
   mark, which makes a waiter spin as it would without marks.  The tid
   comes from glibc's thread descriptor, where every thread has it (0,
   and no marks, while its place is unknown).  */
#ifndef XP_INTERNAL_AWAY_H
#define XP_INTERNAL_AWAY_H

#include "compat.h"

#define XP_AWAY_SLOTS 4096

extern int xp_away_marks[XP_AWAY_SLOTS] XP_HIDDEN;

/* In the child of fork: clear the marks of the threads left behind.  */
void xp_away_after_fork_child (void) XP_HIDDEN;

/* The calling thread's tid, read from glibc's descriptor, without a
   system call; 0 where its place is unknown.  */
static inline int
xp_away_tid (void)
{
  ptrdiff_t off = xp_compat_tid_offset;
  if (xp_unlikely (off == 0))
    return 0;
  return xp_thread_int_at (off);
}

static inline int *
xp_away_slot (int tid)
{
  return &xp_away_marks[(unsigned) tid % XP_AWAY_SLOTS];
}

/* The caller is about to leave its CPU.  Returns its tid, for
   xp_away_end.  */
static inline int
xp_away_begin (void)
{
  int tid = xp_away_tid ();
  if (tid > 0)
    xp_store_relaxed (xp_away_slot (tid), tid);
  return tid;
}

/* The caller TID is back on a CPU: clear its mark, unless another thread
   of its slot has written its own since.  */
static inline void
xp_away_end (int tid)
{
  if (tid > 0 && xp_load_relaxed (xp_away_slot (tid)) == tid)
    xp_store_relaxed (xp_away_slot (tid), 0);
}

/* Whether the thread TID (0: unknown) is off its CPU in the library.  */
static inline bool
xp_away (int tid)
{
  return tid > 0 && xp_load_relaxed (xp_away_slot (tid)) == tid;
}

/* sched_yield, marked.  Linux's cannot fail.  */
static inline void
xp_yield (void)
{
  int tid = xp_away_begin ();
  xp_syscall0 (SYS_sched_yield);
  xp_away_end (tid);
}

#endif
