/* The list of live threads and the count that decides process exit.  */
#include "thread.h"
#include "fork-locks.h"

XP_FORK_LOCK (thread_list, xp_thread_list_lock);
struct xp_thread *xp_thread_list_head;
int xp_live_threads = 1;

void
xp_thread_list_add (struct xp_thread *t)
{
  xp_lock (&xp_thread_list_lock);
  t->prev = NULL;
  t->next = xp_thread_list_head;
  if (t->next != NULL)
    t->next->prev = t;
  xp_thread_list_head = t;
  xp_unlock (&xp_thread_list_lock);
}

void
xp_thread_list_remove (struct xp_thread *t)
{
  xp_lock (&xp_thread_list_lock);
  if (t->prev != NULL)
    t->prev->next = t->next;
  else
    xp_thread_list_head = t->next;
  if (t->next != NULL)
    t->next->prev = t->prev;
  t->next = t->prev = NULL;
  xp_unlock (&xp_thread_list_lock);
}
