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
#include "lock-hooks.h"

#if HAVE_VALGRIND_HELGRIND_H
#include <valgrind/helgrind.h>

/* drd.h's first request, which answers the thread's number under DRD
   and the default (0) elsewhere; drd.h cannot be included beside
   helgrind.h, which defines the same ANNOTATE macros.  */
#define XP_DRD_GET_VALGRIND_THREAD_ID VG_USERREQ_TOOL_BASE ('D', 'R')

int xp_lock_hooks;

bool
xp_lock_hooks_init (void)
{
  if (!RUNNING_ON_VALGRIND)
    return false;
  static char probe;
  /* The number of addressable bytes under helgrind, and elsewhere the
     default, -2 (which the macro widens from 32 bits: not negative).  */
  bool helgrind = VALGRIND_HG_GET_ABITS (&probe, NULL, 1) == 1;
  bool drd = VALGRIND_DO_CLIENT_REQUEST_EXPR (0, XP_DRD_GET_VALGRIND_THREAD_ID,
                                              0, 0, 0, 0, 0) != 0;
  xp_lock_hooks = helgrind || drd ? XP_LOCK_HOOKS_ON : 0;
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
xp_lock_hooks_init (void)
{
  return false;
}

#endif
