/* Thread blocks and their cache.

   A block is mapped once and reused by later threads with the same stack
   and guard sizes: creation from the cache is as fast as glibc's, a fresh
   mmap per thread is twice as slow (DESIGN.md, Threads), and reuse is also
   what bounds memory on thread churn (see nptl-compat/tcb.c).

   An exiting detached thread pushes its block, without taking a lock, on
   the incoming stack; acquisitions move those blocks, oldest first, to the
   "gone" queue and from there into the cache once the kernel has cleared
   their tid (the thread no longer runs on the stack).  Threads leave that
   queue about in the order they joined it, so a scan stops after a few
   still running rather than visit every block in flight, each on pages of
   its own.  The cache hands out the most recently released block first,
   whose pages are still mapped and likely still in the caches and TLB
   (glibc instead gives a dead thread's stack back to the kernel with
   madvise).  Beyond its bound the oldest blocks are unmapped: 40 MiB as in
   glibc, or the most bytes of blocks in use at once lately if that is more,
   since a program that ran that many threads at once is likely to start
   as many again.  With 8 MiB stacks, a bound of five blocks had a creator
   that keeps 256 detached threads in flight unmap and map again a block
   every 60 threads, with a page fault every two to four threads, at about
   half the rate.  The peak decays by 1/1024 at every block that comes
   back, so the cache returns to 40 MiB a few thousand threads after a
   burst; until then it keeps the resident pages of up to that many dead
   threads' stacks.  */
#define _GNU_SOURCE
#include "stack.h"
#include "compat.h"
#include "fork-locks.h"
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#define XP_CACHE_MAX_BYTES (40u << 20)
#define XP_DESCRIPTOR_ALIGN 64
/* Blocks still in use that a scan of the gone queue looks past.  */
#define XP_GONE_SCAN_RUNNING 4

static XP_FORK_LOCK (stack_cache, cache_lock);
static struct xp_thread *cache_head;   /* most recently released first */
static struct xp_thread *cache_tail;
static size_t cache_bytes;
static size_t in_use_bytes;            /* blocks acquired, not reclaimed */
static size_t recent_peak;             /* of in_use_bytes, decaying */
/* Detached threads, maybe still running: pushed newest first by any
   thread, then queued oldest first under cache_lock.  */
static struct xp_thread *gone_incoming;
static struct xp_thread *gone_oldest;
static struct xp_thread **gone_tail = &gone_oldest;

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

/* Place the thread pointer as high as the TCB and static TLS above it
   allow, and our descriptor below everything glibc keeps per thread.  */
static struct xp_thread *
layout_block (char *base, size_t size)
{
  size_t align = xp_compat_tls_align ();
  uintptr_t top = (uintptr_t) base + size;
  uintptr_t tp = (top - xp_compat_tls_above ()) & ~(uintptr_t) (align - 1);
  uintptr_t tls_low = tp + xp_compat_tls_above () - xp_compat_tls_reserve ();
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

/* What the block's last thread held goes back: its place on glibc's
   thread list (unless a fork since then rebuilt that list) and
   second-level TSD blocks.  What glibc allocated for its TLS (the DTV,
   dynamic TLS blocks) stays with the block in the cache, as glibc keeps
   it with a cached stack, and goes back when the block is reused or
   unmapped (retire_tls).  Given back at once, it left the heap's top
   free after a burst of threads ended: malloc returned those pages to
   the kernel, and the next burst faulted them in again.  */
static void
reclaim (struct xp_thread *t)
{
  if (t->tcb_generation == xp_fork_generation)
    xp_compat_tcb_leave_list (t->tp);
  xp_tsd_release (t);
}

/* A cached block leaves the cache: its last thread's TLS goes back.  */
static void
retire_tls (struct xp_thread *t)
{
  xp_compat_tcb_destroy (t->tp);
}

static void
cache_push_locked (struct xp_thread *t)
{
  t->cache_prev = NULL;
  t->cache_next = cache_head;
  if (cache_head != NULL)
    cache_head->cache_prev = t;
  else
    cache_tail = t;
  cache_head = t;
  cache_bytes += t->map_size;
  in_use_bytes -= t->map_size;
  recent_peak -= recent_peak / 1024;
}

/* Append the incoming blocks to the gone queue, reversing them into the
   order their threads exited.  */
static void
queue_incoming_locked (void)
{
  struct xp_thread *t = xp_exchange_acquire (&gone_incoming, NULL);
  struct xp_thread *last = t;
  struct xp_thread *oldest_first = NULL;
  while (t != NULL)
    {
      struct xp_thread *next = t->cache_next;
      t->cache_next = oldest_first;
      oldest_first = t;
      t = next;
    }
  if (last == NULL)
    return;
  *gone_tail = oldest_first;
  gone_tail = &last->cache_next;
}

/* Move the blocks of detached threads that are gone into the cache.  */
static void
collect_gone_locked (void)
{
  queue_incoming_locked ();
  int running = 0;
  struct xp_thread **link = &gone_oldest;
  while (*link != NULL && running < XP_GONE_SCAN_RUNNING)
    {
      struct xp_thread *t = *link;
      if (xp_load_acquire (&t->tid) != 0)
        {
          running++;
          link = &t->cache_next;
          continue;
        }
      *link = t->cache_next;
      if (*link == NULL)
        gone_tail = link;
      reclaim (t);
      cache_push_locked (t);
    }
}

static void
cache_unlink_locked (struct xp_thread *t)
{
  if (t->cache_prev != NULL)
    t->cache_prev->cache_next = t->cache_next;
  else
    cache_head = t->cache_next;
  if (t->cache_next != NULL)
    t->cache_next->cache_prev = t->cache_prev;
  else
    cache_tail = t->cache_prev;
  cache_bytes -= t->map_size;
}

/* Cut the oldest blocks beyond the bound from the cache, from its tail:
   a walk from the head would read a page of every cached block at each
   release once a burst of threads has filled the cache.  The caller
   unmaps them (unmap_chain) once it has let go of the lock.  */
static struct xp_thread *
trim_cache_locked (void)
{
  size_t bound = recent_peak > XP_CACHE_MAX_BYTES ? recent_peak
                                                  : XP_CACHE_MAX_BYTES;
  struct xp_thread *excess = NULL;
  while (cache_bytes > bound)
    {
      struct xp_thread *oldest = cache_tail;
      cache_unlink_locked (oldest);
      oldest->cache_next = excess;
      excess = oldest;
    }
  return excess;
}

static void
unmap_chain (struct xp_thread *t)
{
  while (t != NULL)
    {
      struct xp_thread *next = t->cache_next;
      retire_tls (t);
      unmap_block (t);
      t = next;
    }
}

static struct xp_thread *
take_cached_locked (size_t map_size, size_t guard_size)
{
  for (struct xp_thread *t = cache_head; t != NULL; t = t->cache_next)
    if (t->map_size == map_size && t->guard_size == guard_size)
      {
        cache_unlink_locked (t);
        return t;
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
  retire_tls (old);
  return layout_block (old->map_base, old->map_size);
}

/* A block for a new thread, counted in use: the most recently released
   one that fits, else a fresh one (*fresh).  NULL without memory.  */
static struct xp_thread *
obtain_block (size_t map_size, size_t guard, bool *fresh)
{
  xp_lock (&cache_lock);
  collect_gone_locked ();
  struct xp_thread *cached = take_cached_locked (map_size, guard);
  in_use_bytes += map_size;
  if (in_use_bytes > recent_peak)
    recent_peak = in_use_bytes;
  struct xp_thread *excess = trim_cache_locked ();
  xp_unlock (&cache_lock);
  unmap_chain (excess);
  *fresh = cached == NULL;
  return cached != NULL ? reuse_block (cached)
                        : map_new_block (map_size, guard);
}

/* The block (if any) obtained for a thread that cannot start.  */
static void
give_up_block (struct xp_thread *t, size_t map_size)
{
  if (t != NULL)
    unmap_block (t);
  xp_lock (&cache_lock);
  in_use_bytes -= map_size;
  xp_unlock (&cache_lock);
}

int
xp_block_acquire (const struct xp_attr *attr, struct xp_thread **out)
{
  bool user_stack = (attr->flags & XP_ATTR_STACK_SET) != 0;
  size_t page = xp_page_size ();
  size_t guard = user_stack ? 0 : round_up (attr->guard_size, page);
  size_t stack = user_stack ? 0 : round_up (attr->stack_size, page);
  size_t map_size = guard + stack + meta_size ();

  bool fresh;
  struct xp_thread *t = obtain_block (map_size, guard, &fresh);
  if (t == NULL || !xp_compat_tcb_build (t->tp, fresh))
    {
      give_up_block (t, map_size);
      return EAGAIN;
    }
  t->tcb_generation = xp_fork_generation;
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
  reclaim (t);
  xp_lock (&cache_lock);
  cache_push_locked (t);
  struct xp_thread *excess = trim_cache_locked ();
  xp_unlock (&cache_lock);
  unmap_chain (excess);
}

/* Lock-free, so that exiting threads never wait for a creator.  Only whole
   stacks are taken off (queue_incoming_locked), so a push cannot meet a
   block that left and came back (no ABA).  */
void
xp_block_release_when_gone (struct xp_thread *t)
{
  struct xp_thread *head = xp_load_relaxed (&gone_incoming);
  do
    t->cache_next = head;
  while (!xp_cas (&gone_incoming, &head, t));
}

void
xp_block_cache_after_fork_child (void)
{
  /* Detached threads still running in the parent do not exist in the
     child, so their tids will never clear here: forget their blocks.  */
  gone_incoming = NULL;
  gone_oldest = NULL;
  gone_tail = &gone_oldest;
  struct xp_thread *self = xp_self_ptr;
  self->kind->after_fork_child (self);
}
