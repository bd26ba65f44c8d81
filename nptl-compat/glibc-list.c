/* Membership of raw threads in glibc's list of threads.

   glibc keeps every thread it knows on two lists in the dynamic linker's
   global state: threads on stacks it allocated, and threads on stacks the
   application provided (the main thread among them).  Walking those lists
   is how glibc
     - initialises the static TLS of a library dlopen'ed later in every
       running thread,
     - makes dlclose wait until no thread is still inside a symbol lookup,
     - applies setuid and the other set*id calls to every thread,
     - lets libthread_db, hence gdb, enumerate threads.
   A raw thread therefore joins the application-stack list for its lifetime
   and glibc treats it like one of its own.  Both lists are guarded by one
   lock in the same structure, a futex word with the 0/1/2 protocol that
   xp_lock_t also follows; list changes are announced in an "in flight"
   word so that a fork in the middle of one can be repaired in the child,
   as glibc's own list changes are.

   Offsets: libthread_db's descriptors give the two lists; the stack cache
   list, its size, the in-flight word and the lock follow the user list in
   that order (measured on glibc 2.36 with its debug information), and the
   discovery below checks what it can: the main thread's node is on the
   user list, the cache list is well formed, nothing is in flight.  */
#define _GNU_SOURCE
#include "glibc-list.h"
#include "layout.h"
#include "lock.h"
#include <dlfcn.h>

struct list_node
{
  struct list_node *next;
  struct list_node *prev;
};

static char *rtld_global;
static struct list_node *user_list;
static uintptr_t *in_flight;
static xp_lock_t *list_lock;

static bool
list_is_well_formed (struct list_node *head)
{
  struct list_node *n = head;
  for (int steps = 0; steps < 1 << 16; steps++)
    {
      if (n->next == NULL || n->next->prev != n)
        return false;
      n = n->next;
      if (n == head)
        return true;
    }
  return false;
}

static bool
list_contains (struct list_node *head, struct list_node *node)
{
  for (struct list_node *n = head->next; n != head; n = n->next)
    if (n == node)
      return true;
  return false;
}

const char *
xp_glibc_list_discover (const char *main_tp)
{
  const uint32_t *used
    = dlvsym (RTLD_DEFAULT, "_thread_db_rtld_global__dl_stack_used",
              "GLIBC_PRIVATE");
  const uint32_t *user
    = dlvsym (RTLD_DEFAULT, "_thread_db_rtld_global__dl_stack_user",
              "GLIBC_PRIVATE");
  rtld_global = dlvsym (RTLD_DEFAULT, "_rtld_global", "GLIBC_PRIVATE");
  size_t node = sizeof (struct list_node);
  if (used == NULL || user == NULL || rtld_global == NULL
      || used[0] != 8 * node || user[0] != 8 * node
      || user[2] != used[2] + node)
    return "glibc's thread lists are missing or unexpected";
  user_list = (struct list_node *) (rtld_global + user[2]);
  struct list_node *cache = user_list + 1;
  in_flight = (uintptr_t *) ((char *) (cache + 1) + sizeof (size_t));
  list_lock = (xp_lock_t *) (in_flight + 1);
  struct list_node *main_node
    = (struct list_node *) (main_tp + xp_glibc.off_list);
  if (!list_is_well_formed (user_list) || !list_is_well_formed (cache)
      || !list_contains (user_list, main_node) || *in_flight != 0
      || (unsigned) list_lock->word > 2)
    return "glibc's thread lists do not validate";
  return NULL;
}

void
xp_glibc_list_lock (void)
{
  xp_lock (list_lock);
}

void
xp_glibc_list_unlock (void)
{
  xp_unlock (list_lock);
}

/* Called with the list lock held.  */
void
xp_glibc_list_add (void *tp)
{
  struct list_node *n = (struct list_node *) ((char *) tp + xp_glibc.off_list);
  xp_store_relaxed (in_flight, (uintptr_t) n | 1);
  __atomic_thread_fence (__ATOMIC_RELEASE);
  n->next = user_list->next;
  n->prev = user_list;
  user_list->next->prev = n;
  user_list->next = n;
  __atomic_thread_fence (__ATOMIC_RELEASE);
  xp_store_relaxed (in_flight, 0);
}

/* Called with the list lock held.  */
void
xp_glibc_list_remove (void *tp)
{
  struct list_node *n = (struct list_node *) ((char *) tp + xp_glibc.off_list);
  xp_store_relaxed (in_flight, (uintptr_t) n);
  __atomic_thread_fence (__ATOMIC_RELEASE);
  n->prev->next = n->next;
  n->next->prev = n->prev;
  /* Self-linked again: fork's child may still look at this node.  */
  n->next = n->prev = n;
  __atomic_thread_fence (__ATOMIC_RELEASE);
  xp_store_relaxed (in_flight, 0);
}
