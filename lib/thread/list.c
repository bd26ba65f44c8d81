/* The list of live threads and the count that decides process exit.  */
#include "thread.h"
#include "fork-locks.h"
#include "lock-hooks.h"

XP_FORK_LOCK (thread_list, xp_thread_list_lock);
struct xp_thread *xp_thread_list_head;
int xp_live_threads = 1;

void
xp_thread_list_add (struct xp_thread *t)
{
  /* The head, like the descriptors' links (hosted.c, adopt.c), is
     xpthread's, ordered by an internal lock that race checkers do not see
     and must not: every thread takes it at its start and exit, and as a
     lock to them it would order whole threads, hiding races.  */
  xp_hook_sync_words (&xp_thread_list_head, sizeof xp_thread_list_head);
  xp_lock (&xp_thread_list_lock);
  t->prev = NULL;
  t->next = xp_thread_list_head;
  if (t->next != NULL)
    {
      /* Its descriptor may predate the hooks: the main thread's, adopted
         before valgrind was found.  */
      xp_hook_sync_words (&t->next->prev, sizeof t->next->prev);
      t->next->prev = t;
    }
  xp_thread_list_head = t;
  xp_unlock (&xp_thread_list_lock);
}

bool
xp_thread_list_only (const struct xp_thread *t)
{
  xp_lock (&xp_thread_list_lock);
  bool only = xp_thread_list_head == t && t->next == NULL;
  xp_unlock (&xp_thread_list_lock);
  return only;
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
