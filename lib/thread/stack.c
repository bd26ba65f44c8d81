/* Thread blocks and their cache.

   A block is mapped once and reused by later threads with the same stack
   and guard sizes: creation from the cache is as fast as glibc's, a fresh
   mmap per thread is twice as slow (DESIGN.md section 2), and reuse is also
   what bounds memory on thread churn (see nptl-compat/tcb.c).

   Blocks of exited detached threads wait on the "gone" list until the
   kernel has cleared their tid (the thread no longer runs on the stack);
   every acquisition first moves such blocks into the cache.  The cache is
   bounded; beyond the bound the oldest blocks are unmapped.  */
#define _GNU_SOURCE
#include "stack.h"
#include "compat.h"
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#define XP_CACHE_MAX_BYTES (40u << 20)
#define XP_DESCRIPTOR_ALIGN 64

static xp_lock_t cache_lock = XP_LOCK_INIT;
static struct xp_thread *cache_head;   /* most recently released first */
static size_t cache_bytes;
static struct xp_thread *gone_head;    /* detached, maybe still running */

static size_t
round_up (size_t n, size_t to)
{
  return (n + to - 1) & ~(to - 1);
}

/* Bytes above the stack: descriptor, static TLS, TCB, alignment slack.  */
static size_t
meta_size (void)
{
  size_t align = xp_compat_tls_align ();
  if (align < XP_DESCRIPTOR_ALIGN)
    align = XP_DESCRIPTOR_ALIGN;
  return round_up (sizeof (struct xp_thread) + XP_DESCRIPTOR_ALIGN
                   + xp_compat_tls_reserve () + align, xp_page_size ());
}

/* Place the TCB at the top of the block and the descriptor below the
   static TLS area.  */
static struct xp_thread *
layout_block (char *base, size_t size)
{
  size_t align = xp_compat_tls_align ();
  uintptr_t top = (uintptr_t) base + size;
  uintptr_t tp = (top - xp_compat_tcb_size ()) & ~(uintptr_t) (align - 1);
  uintptr_t tls_low = tp + xp_compat_tcb_size () - xp_compat_tls_reserve ();
  uintptr_t desc = (tls_low - sizeof (struct xp_thread))
                   & ~(uintptr_t) (XP_DESCRIPTOR_ALIGN - 1);
  struct xp_thread *t = (struct xp_thread *) desc;
  memset (t, 0, sizeof *t);
  t->tp = (void *) tp;
  t->map_base = base;
  t->map_size = size;
  return t;
}

static void
unmap_block (struct xp_thread *t)
{
  munmap (t->map_base, t->map_size);
}

/* Move blocks of detached threads that are gone into the cache, and trim
   the cache to its bound.  Called with cache_lock held.  */
static void
collect_gone_locked (void)
{
  struct xp_thread **link = &gone_head;
  while (*link != NULL)
    {
      struct xp_thread *t = *link;
      if (xp_load_acquire (&t->tid) != 0)
        {
          link = &t->cache_next;
          continue;
        }
      *link = t->cache_next;
      xp_tsd_release (t);
      xp_compat_tcb_destroy (t->tp);
      t->cache_next = cache_head;
      cache_head = t;
      cache_bytes += t->map_size;
    }
}

static void
trim_cache_locked (void)
{
  while (cache_bytes > XP_CACHE_MAX_BYTES && cache_head != NULL)
    {
      /* The oldest block sits at the tail.  */
      struct xp_thread **link = &cache_head;
      while ((*link)->cache_next != NULL)
        link = &(*link)->cache_next;
      struct xp_thread *victim = *link;
      *link = NULL;
      cache_bytes -= victim->map_size;
      unmap_block (victim);
    }
}

static struct xp_thread *
take_cached_locked (size_t map_size, size_t guard_size)
{
  for (struct xp_thread **link = &cache_head; *link != NULL;
       link = &(*link)->cache_next)
    {
      struct xp_thread *t = *link;
      if (t->map_size == map_size && t->guard_size == guard_size)
        {
          *link = t->cache_next;
          cache_bytes -= t->map_size;
          return t;
        }
    }
  return NULL;
}

static struct xp_thread *
map_new_block (size_t map_size, size_t guard_size)
{
  char *base = mmap (NULL, map_size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE,
                     -1, 0);
  if (base == MAP_FAILED)
    return NULL;
  if (guard_size != 0 && mprotect (base, guard_size, PROT_NONE) != 0)
    {
      munmap (base, map_size);
      return NULL;
    }
  return layout_block (base, map_size);
}

/* Reset a reused descriptor, keeping what describes its block.  */
static struct xp_thread *
reuse_block (struct xp_thread *old)
{
  return layout_block (old->map_base, old->map_size);
}

int
xp_block_acquire (const struct xp_attr *attr, struct xp_thread **out)
{
  bool user_stack = (attr->flags & XP_ATTR_STACK_SET) != 0;
  size_t page = xp_page_size ();
  size_t guard = user_stack ? 0 : round_up (attr->guard_size, page);
  size_t stack = user_stack ? 0 : round_up (attr->stack_size, page);
  size_t map_size = guard + stack + meta_size ();

  xp_lock (&cache_lock);
  collect_gone_locked ();
  struct xp_thread *cached = take_cached_locked (map_size, guard);
  xp_unlock (&cache_lock);

  struct xp_thread *t
    = cached != NULL ? reuse_block (cached) : map_new_block (map_size, guard);
  if (t == NULL)
    return EAGAIN;
  if (!xp_compat_tcb_build (t->tp, cached == NULL))
    {
      unmap_block (t);
      return EAGAIN;
    }
  t->guard_size = guard;
  t->user_stack = user_stack;
  if (user_stack)
    {
      t->stack_base = attr->stack_addr;
      t->stack_size = attr->stack_size;
    }
  else
    {
      t->stack_base = (char *) t->map_base + guard;
      t->stack_size = stack;
    }
  *out = t;
  return 0;
}

void
xp_block_release (struct xp_thread *t)
{
  xp_tsd_release (t);
  xp_compat_tcb_destroy (t->tp);
  xp_lock (&cache_lock);
  t->cache_next = cache_head;
  cache_head = t;
  cache_bytes += t->map_size;
  trim_cache_locked ();
  xp_unlock (&cache_lock);
}

void
xp_block_release_when_gone (struct xp_thread *t)
{
  xp_lock (&cache_lock);
  t->cache_next = gone_head;
  gone_head = t;
  xp_unlock (&cache_lock);
}

void
xp_block_cache_lock (void)
{
  xp_lock (&cache_lock);
}

void
xp_block_cache_unlock (void)
{
  xp_unlock (&cache_lock);
}

void
xp_block_cache_unlock_in_child (void)
{
  /* Detached threads still running in the parent do not exist in the
     child, so their tids will never clear here: forget their blocks.  */
  gone_head = NULL;
  xp_unlock (&cache_lock);
}
