/* The calling thread's kernel robust list (robust-list.c).  */
#ifndef XP_SYNC_ROBUST_LIST_H
#define XP_SYNC_ROBUST_LIST_H

#include "thread.h"
#include <linux/futex.h>
#include <pthread.h>

struct robust_list_head *xp_robust_head_slow (struct xp_thread *self)
  XP_HIDDEN;

static inline struct robust_list_head *
xp_robust_head (void)
{
  struct xp_thread *self = xp_self ();
  struct robust_list_head *head = self->robust_head;
  return xp_likely (head != NULL) ? head : xp_robust_head_slow (self);
}

/* The kernel's view of a mutex: the address of its __list.__next, with
   bit 0 set for a priority-inheritance futex.  */
static inline struct robust_list *
xp_robust_entry (pthread_mutex_t *m, bool pi)
{
  return (struct robust_list *) ((uintptr_t) &m->__data.__list.__next
                                 | (pi ? 1 : 0));
}

/* Ordering against the kernel, which only reads these words when this
   same thread dies: the compiler must keep program order, nothing more. */
static inline void
xp_robust_set_pending (struct robust_list_head *head, pthread_mutex_t *m,
                       bool pi)
{
  head->list_op_pending = xp_robust_entry (m, pi);
  __asm__ volatile ("" ::: "memory");
}

static inline void
xp_robust_clear_pending (struct robust_list_head *head)
{
  __asm__ volatile ("" ::: "memory");
  head->list_op_pending = NULL;
}

/* Link m (just acquired) at the front of the list / unlink it (before
   its release).  Both run with list_op_pending naming m.  */
void xp_robust_enqueue (struct robust_list_head *head, pthread_mutex_t *m,
                        bool pi) XP_HIDDEN;
void xp_robust_dequeue (struct robust_list_head *head, pthread_mutex_t *m)
  XP_HIDDEN;

/* In a fork child: the parent's mutexes are not the child's.  */
void xp_robust_list_after_fork (struct xp_thread *self) XP_HIDDEN;

/* A lock of a mutex whose word names the caller (robust or PI, head NULL
   for a PI mutex that is not robust): recursion or EDEADLK, with the
   list's pending entry cleared; -1 to go on (a normal or adaptive mutex
   then deadlocks, as POSIX wants).  */
int xp_mutex_held_by_caller (struct robust_list_head *head,
                             pthread_mutex_t *m, int type) XP_HIDDEN;

#endif
