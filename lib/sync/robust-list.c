/* The per-thread robust list: how the kernel learns, when a thread dies,
   which robust mutexes it held (Documentation/locking/robust-futex-ABI).

   Each thread registers one head with set_robust_list:
     list.next        the first entry, or the head itself when empty
     futex_offset     from an entry to the mutex's lock word
     list_op_pending  the entry being locked or unlocked right now
   An entry is the address of a mutex's __list.__next, with bit 0 set for
   a priority-inheritance futex; each __next holds the following entry the
   same way.  glibc's layout and pointer values are kept exactly, so that
   glibc code working on the same thread's list (its process-shared
   condition variables relock mutexes through its own internals) and ours
   agree: __prev, where the type has it, points at the predecessor's
   __next (the head's list.next for the first entry).  glibc also keeps a
   "prev" slot just below the head; it only ever writes it, so we leave it
   alone and need no glibc-private offset.

   Which head: a raw thread's is in the glibc TCB we built
   (nptl-compat/tcb.c registers it and records it in the descriptor);
   another thread's (main, glibc-made threads, hosted mode) is whatever
   glibc registered, asked of the kernel once and cached.

   Why the kernel never sees a half-done change: at death it walks
   list.next and then also looks at list_op_pending.  A mutex is linked
   only once its lock word names us and unlinked only before the word is
   released, and list_op_pending names it throughout; the kernel acts on
   an entry only if the word holds the dead thread's tid, so an entry that
   is pending but not (or no longer) ours is harmless.  The kernel reads
   these words only when this thread is dead, so compiler ordering is all
   that is needed between them.  */
#define _GNU_SOURCE
#include "robust-list.h"
#include <sys/syscall.h>

#if __PTHREAD_MUTEX_HAVE_PREV
/* The links of a mutex, from the address of its __next field.  */
static inline __pthread_list_t *
node_of (struct robust_list *entry)
{
  return (__pthread_list_t *) ((char *) entry
                               - offsetof (__pthread_list_t, __next));
}
#endif

static inline struct robust_list *
untagged (void *entry)
{
  return (struct robust_list *) ((uintptr_t) entry & ~(uintptr_t) 1);
}

struct robust_list_head *
xp_robust_head_slow (struct xp_thread *self)
{
  struct robust_list_head *head = NULL;
  size_t len;
  if (xp_syscall3 (SYS_get_robust_list, 0, &head, &len) != 0 || head == NULL)
    {
      /* Nobody registered one (a libc that does not use robust lists):
         the descriptor carries a head of its own.  */
      head = &self->robust_own;
      head->list.next = &head->list;
      head->futex_offset = (long) offsetof (pthread_mutex_t, __data.__lock)
                           - (long) offsetof (pthread_mutex_t,
                                              __data.__list.__next);
      head->list_op_pending = NULL;
      xp_syscall2 (SYS_set_robust_list, head, sizeof *head);
    }
  self->robust_head = head;
  return head;
}

void
xp_robust_enqueue (struct robust_list_head *head, pthread_mutex_t *m,
                   bool pi)
{
  struct robust_list *first = head->list.next;
#if __PTHREAD_MUTEX_HAVE_PREV
  struct robust_list *first_node = untagged (first);
  if (first_node != &head->list)
    node_of (first_node)->__prev
      = (void *) &m->__data.__list.__next;
  m->__data.__list.__prev = (void *) &head->list;
#endif
  m->__data.__list.__next = (void *) first;
  /* The entry must be complete before the kernel can reach it.  */
  __asm__ volatile ("" ::: "memory");
  head->list.next = xp_robust_entry (m, pi);
}

void
xp_robust_dequeue (struct robust_list_head *head, pthread_mutex_t *m)
{
  void *next = m->__data.__list.__next;
#if __PTHREAD_MUTEX_HAVE_PREV
  struct robust_list *next_node = untagged (next);
  if (next_node != &head->list)
    node_of (next_node)->__prev = m->__data.__list.__prev;
  struct robust_list *prev = untagged (m->__data.__list.__prev);
  prev->next = next;
#else
  /* Singly linked: find the field that points at m.  */
  struct robust_list *mine = (struct robust_list *) &m->__data.__list.__next;
  struct robust_list *at = &head->list;
  while (untagged (at->next) != mine)
    at = untagged (at->next);
  at->next = next;
#endif
  /* Off the list before the links the kernel might follow change.  */
  __asm__ volatile ("" ::: "memory");
#if __PTHREAD_MUTEX_HAVE_PREV
  m->__data.__list.__prev = NULL;
#endif
  m->__data.__list.__next = NULL;
}

/* glibc's fork does the same for the thread it knows as current, which
   is this one; doing it here keeps the child right whoever registered
   the head.  Nothing is pending: fork is not called from inside a mutex
   operation.  */
void
xp_robust_list_after_fork (struct xp_thread *self)
{
  struct robust_list_head *head = self->robust_head;
  if (head == NULL)
    return;
  head->list.next = &head->list;
  head->list_op_pending = NULL;
  xp_syscall2 (SYS_set_robust_list, head, sizeof *head);
}
