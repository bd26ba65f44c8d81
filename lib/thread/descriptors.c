/* Descriptors of hosted threads (started through glibc's pthread_create,
   lib/thread/hosted.c).  Like raw threads' blocks, they are kept for
   reuse rather than given back to malloc, so that the ID of a joined
   thread still names readable memory: joining or detaching it again
   answers ESRCH, as glibc does, instead of reading freed memory.  */
#include "fork-locks.h"
#include "thread.h"
#include <stdlib.h>
#include <string.h>

static XP_FORK_LOCK (hosted_descriptors, free_list_lock);
static struct xp_thread *free_list;

struct xp_thread *
xp_descriptor_new (void)
{
  xp_lock (&free_list_lock);
  struct xp_thread *t = free_list;
  if (t != NULL)
    free_list = t->cache_next;
  xp_unlock (&free_list_lock);
  if (t == NULL)
    return calloc (1, sizeof *t);
  memset (t, 0, sizeof *t);
  return t;
}

void
xp_descriptor_retire (struct xp_thread *t)
{
  xp_tsd_release (t);
  xp_lock (&free_list_lock);
  t->cache_next = free_list;
  free_list = t;
  xp_unlock (&free_list_lock);
}
