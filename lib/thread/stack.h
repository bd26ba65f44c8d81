/* Thread blocks: one mmap per raw thread holding its guard page, stack,
   descriptor, static TLS and glibc TCB; cached for reuse after the thread
   is gone.  */
#ifndef XP_THREAD_STACK_H
#define XP_THREAD_STACK_H

#include "attr.h"
#include "thread.h"

/* A descriptor in a block laid out for attr, with a TCB built; 0 or an
   errno value (EAGAIN when memory or TLS cannot be had, EINVAL when a
   user stack is too small).  */
int xp_block_acquire (const struct xp_attr *attr, struct xp_thread **out)
  XP_HIDDEN;

/* The thread of t is gone (its tid word is 0): keep its block for reuse.  */
void xp_block_release (struct xp_thread *t) XP_HIDDEN;

/* A detached thread about to exit: release its block once the kernel has
   cleared its tid.  */
void xp_block_release_when_gone (struct xp_thread *t) XP_HIDDEN;

/* fork's child, with the cache lock still held (lib/internal/fork-locks.h):
   forget the blocks of threads that exist only in the parent.  */
void xp_block_cache_after_fork_child (void) XP_HIDDEN;

#endif
