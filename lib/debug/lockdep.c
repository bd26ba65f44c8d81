/* Lockdep: a lock-order validator for user space, switched on by
   XPTHREAD_LOCKDEP.

   Locks fall into classes (lockdep-int.h: a static lock's address, else
   the site that initialised it, else the site that first took it), so
   that an order seen on some objects of a kind holds for all of them.
   Each thread keeps the locks it holds.  Taking lock L while holding H
   records the order "class of H before class of L" (an edge), once; a
   new edge that closes a cycle of edges is a possible deadlock, reported
   the first time it is seen, before the thread waits, whether or not the
   interleaving that hangs ever happens.  Taking again a lock the thread
   holds, where that blocks forever, is reported before it blocks.

   Waits that cannot deadlock add no edge: a try, and a read lock of an
   rwlock whose readers never wait for readers.  A lock held for reading
   still orders what comes after it: a writer that waits for the reader
   waits for everything the reader waits for.

   Lockdep runs inside pthread_mutex_lock, maybe inside an allocator: it
   takes memory from the kernel (arena.c), never from malloc, and a
   thread that comes back into it from inside it (the unwinder of a
   backtrace taking a lock) is let through unchecked, as is the forking
   thread while it holds the fork lock table (the fork handlers of other
   libraries lock and initialise their mutexes then).  Its tables are
   under one internal lock, in the fork lock table.  */
#define _GNU_SOURCE
#include "lockdep-int.h"
#include "arena.h"
#include "env.h"
#include "fork-locks.h"
#include "thread.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <unwind.h>

int xp_lockdep_on;
bool xp_ld_abort_after_report;
static bool instance_classes;

static XP_FORK_LOCK (lockdep, ld_lock);

/* Classes and edges live in blocks that never move; id 0 is no one.  */
#define BLOCK_BITS 12
#define BLOCK_SIZE (1u << BLOCK_BITS)
#define MAX_BLOCKS 4096

static struct xp_ld_class *class_blocks[MAX_BLOCKS];
static struct xp_ld_edge *edge_blocks[MAX_BLOCKS];
static uint32_t class_count = 1, edge_count = 1;
static unsigned report_count;

static struct xp_addr_map lock_classes;   /* lock -> class */
static struct xp_addr_map key_classes;    /* class key -> class */
static struct xp_addr_map edge_ids;       /* from << 32 | to -> edge */

struct xp_ld_class *
xp_ld_class (uint32_t id)
{
  return &class_blocks[id >> BLOCK_BITS][id & (BLOCK_SIZE - 1)];
}

struct xp_ld_edge *
xp_ld_edge (uint32_t id)
{
  return &edge_blocks[id >> BLOCK_BITS][id & (BLOCK_SIZE - 1)];
}

/* The next id of a table of blocks, or 0 when memory ran out.  */
static uint32_t
next_id (void **blocks, uint32_t *count, size_t entry_size)
{
  uint32_t id = *count;
  if ((id >> BLOCK_BITS) >= MAX_BLOCKS)
    return 0;
  if (blocks[id >> BLOCK_BITS] == NULL
      && (blocks[id >> BLOCK_BITS] = xp_arena_alloc (entry_size
                                                     * BLOCK_SIZE)) == NULL)
    return 0;
  ++*count;
  return id;
}

static void
out_of_memory (void)
{
  static bool said;
  if (!said)
    xp_warn ("lockdep: out of memory; orders from now on go unchecked");
  said = true;
}

/* --- the calling thread's held locks ------------------------------------ */

/* What a thread has seen already, so that taking a lock whose class and
   orders it knows takes no lock of lockdep's: the classes of recent
   locks, valid while class_epoch is unchanged (a lock's class changes
   only when some lock is initialised, destroyed or becomes a thread's),
   and orders, which never change.  */
#define CLASS_CACHE 64
#define ORDER_CACHE 256

struct cached_class
{
  const void *lock;
  uint32_t class_id;
  uint32_t epoch;
};

struct ld_thread
{
  struct xp_ld_held *held;
  unsigned depth, capacity;
  bool inside;              /* in lockdep now */
  struct ld_thread *next_free;
  struct cached_class classes[CLASS_CACHE];
  uint64_t orders[ORDER_CACHE];   /* from << 32 | to; 0: none */
};

static uint32_t class_epoch;

static __thread struct ld_thread *ld_self
  __attribute__ ((tls_model ("initial-exec")));
/* The states of threads that ended, for threads to come.  */
static struct ld_thread *free_states;

/* Under the lockdep lock.  */
static struct ld_thread *
thread_state (void)
{
  if (ld_self == NULL && free_states != NULL)
    {
      ld_self = free_states;
      free_states = ld_self->next_free;
    }
  else if (ld_self == NULL)
    ld_self = xp_arena_alloc (sizeof *ld_self);
  return ld_self;
}

static bool
push_held (struct ld_thread *t, const struct xp_ld_held *h)
{
  if (t->depth == t->capacity)
    {
      unsigned capacity = t->capacity == 0 ? 16 : 2 * t->capacity;
      struct xp_ld_held *held = xp_arena_alloc (capacity * sizeof *held);
      if (held == NULL)
        return false;
      if (t->depth != 0)
        memcpy (held, t->held, t->depth * sizeof *held);
      t->held = held;
      t->capacity = capacity;
    }
  t->held[t->depth++] = *h;
  return true;
}

struct stack_walk
{
  struct xp_ld_stack *stack;
  bool in_xpthread;         /* still in the frames of xpthread's own */
};

static bool
in_xpthread (const void *pc)
{
  Dl_info info, own;
  return dladdr (pc, &info) != 0 && dladdr ((void *) in_xpthread, &own) != 0
         && info.dli_fbase == own.dli_fbase;
}

/* Records the frames from the first one outside xpthread on.  */
static _Unwind_Reason_Code
record_frame (struct _Unwind_Context *context, void *arg)
{
  struct stack_walk *walk = arg;
  void *pc = (void *) _Unwind_GetIP (context);
  if (pc == NULL || walk->stack->depth == XP_LD_STACK_DEPTH)
    return _URC_END_OF_STACK;
  if (walk->in_xpthread && in_xpthread (pc))
    return _URC_NO_REASON;
  walk->in_xpthread = false;
  walk->stack->pc[walk->stack->depth++] = pc;
  return _URC_NO_REASON;
}

static void
capture_stack (struct xp_ld_stack *stack)
{
  struct stack_walk walk = { stack, true };
  stack->depth = 0;
  _Unwind_Backtrace (record_frame, &walk);
}

/* --- classes ------------------------------------------------------------- */

static uint32_t
class_for_key (const void *key, enum xp_ld_origin origin, const void *lock)
{
  uint32_t id = xp_addr_map_get (&key_classes, (uintptr_t) key);
  if (id != 0)
    return id;
  id = next_id ((void **) class_blocks, &class_count,
                sizeof (struct xp_ld_class));
  if (id == 0 || !xp_addr_map_put (&key_classes, (uintptr_t) key, id))
    return 0;
  struct xp_ld_class *c = xp_ld_class (id);
  c->origin = origin;
  c->key = key;
  c->lock = lock;
  return id;
}

/* Is PC in xpthread or in a library that wraps its locks (libstdc++),
   whose callers are the sites that tell locks apart?  */
static bool
in_wrapper (const void *pc)
{
  Dl_info info;
  return in_xpthread (pc)
         || (dladdr (pc, &info) != 0 && info.dli_fname != NULL
             && strstr (info.dli_fname, "libstdc++") != NULL);
}

/* SITE, or when it lies in a wrapper (C11's mtx_lock, a libstdc++
   function), the first caller outside.  */
static const void *
program_site (const void *site)
{
  if (site == NULL || !in_wrapper (site))
    return site;
  struct xp_ld_stack stack;
  capture_stack (&stack);
  for (unsigned i = 0; i < stack.depth; i++)
    if (!in_wrapper (stack.pc[i]))
      return stack.pc[i];
  return site;
}

/* A lock inside a loaded object's image is in static storage.  */
static bool
is_static (const void *lock)
{
  Dl_info info;
  return dladdr (lock, &info) != 0;
}

/* Memory of a lock that was never destroyed (a std::mutex) may be freed
   and become another lock, which must not keep the first one's class.
   A mutex that is not robust has a word nobody else uses, __list.__prev:
   lockdep keeps there the lock's own address while it knows its class.
   A new mutex (zero-filled, or initialised) does not have it.  */
static const void **
stamp_of (const void *lock)
{
  return (const void **) ((char *) lock
                          + offsetof (pthread_mutex_t, __data.__list.__prev));
}

static bool
stamp_matches (const void *lock, unsigned flags)
{
  return !(flags & XP_LD_STAMPED) || *stamp_of (lock) == lock;
}

static void
stamp (const void *lock, unsigned flags)
{
  if (flags & XP_LD_STAMPED)
    *stamp_of (lock) = lock;
}

static uint32_t
class_of (const void *lock, unsigned flags, const void *site)
{
  uint32_t id = xp_addr_map_get (&lock_classes, (uintptr_t) lock);
  if (id != 0 && stamp_matches (lock, flags))
    return id;
  stamp (lock, flags);
  if (instance_classes)
    id = class_for_key (lock, XP_LD_INSTANCE, lock);
  else if (is_static (lock))
    id = class_for_key (lock, XP_LD_STATIC, lock);
  else
    id = class_for_key (program_site (site), XP_LD_FIRST_LOCK, lock);
  if (id != 0 && !xp_addr_map_put (&lock_classes, (uintptr_t) lock, id))
    id = 0;
  return id;
}

/* --- edges and cycles ---------------------------------------------------- */


/* Is there a path of edges from FROM to TO?  Depth first, remembering in
   each class the edge that reached it, so that the path can be read back
   from TO.  */
static bool
path_exists (uint32_t from, uint32_t to)
{
  static uint32_t search;
  static uint32_t *pending;
  static size_t pending_size;
  if (pending_size < class_count)
    {
      size_t size = 2 * (size_t) class_count;
      uint32_t *p = xp_arena_alloc (size * sizeof *p);
      if (p == NULL)
        return false;
      pending = p;
      pending_size = size;
    }
  search++;
  size_t n = 0;
  xp_ld_class (from)->visited = search;
  pending[n++] = from;
  while (n > 0)
    {
      uint32_t c = pending[--n];
      for (uint32_t e = xp_ld_class (c)->first_out; e != 0;
           e = xp_ld_edge (e)->next_out)
        {
          uint32_t next = xp_ld_edge (e)->to;
          struct xp_ld_class *nc = xp_ld_class (next);
          if (nc->visited == search)
            continue;
          nc->visited = search;
          nc->came_by = e;
          if (next == to)
            return true;
          pending[n++] = next;
        }
    }
  return false;
}

static void
report_new_cycle (uint32_t edge, const void *lock, const struct ld_thread *t)
{
  struct xp_ld_edge *closing = xp_ld_edge (edge);
  /* The path to -> ... -> from, read back from "from", then the edge.  */
  static uint32_t *cycle;
  static size_t cycle_size;
  size_t n = 0;
  for (uint32_t c = closing->from; c != closing->to;
       c = xp_ld_edge (xp_ld_class (c)->came_by)->from)
    n++;
  if (cycle_size < n + 1)
    {
      uint32_t *p = xp_arena_alloc ((n + 1) * 2 * sizeof *p);
      if (p == NULL)
        return;
      cycle = p;
      cycle_size = (n + 1) * 2;
    }
  size_t i = n;
  for (uint32_t c = closing->from; c != closing->to;)
    {
      uint32_t e = xp_ld_class (c)->came_by;
      cycle[--i] = e;
      c = xp_ld_edge (e)->from;
    }
  cycle[n] = edge;
  report_count++;
  xp_ld_report_cycle (lock, cycle, (unsigned) n + 1, t->held, t->depth);
}

/* The key of the order FROM -> TO, in edge_ids and the threads' caches. */
static uint64_t
order_key (uint32_t from, uint32_t to)
{
  return (uint64_t) from << 32 | to;
}

/* Record that H was held when LOCK, of class TO, was taken with
   STACK.  */
static void
add_edge (const struct ld_thread *t, const struct xp_ld_held *h,
          const void *lock, uint32_t to, const struct xp_ld_stack *stack)
{
  uint64_t key = order_key (h->class_id, to);
  if (xp_addr_map_get (&edge_ids, key) != 0)
    return;
  uint32_t id = next_id ((void **) edge_blocks, &edge_count,
                         sizeof (struct xp_ld_edge));
  if (id == 0 || !xp_addr_map_put (&edge_ids, key, id))
    {
      out_of_memory ();
      return;
    }
  struct xp_ld_edge *e = xp_ld_edge (id);
  e->from = h->class_id;
  e->to = to;
  e->tid = xp_self_tid ();
  e->held_for_read = (h->flags & XP_LD_READ) != 0;
  e->held_site = h->site;
  e->stack = *stack;
  bool closes = path_exists (to, h->class_id);
  struct xp_ld_class *from = xp_ld_class (h->class_id);
  e->next_out = from->first_out;
  from->first_out = id;
  if (closes)
    report_new_cycle (id, lock, t);
}

/* Does any held lock order a new class?  Only then is a stack worth its
   cost.  */
static bool
needs_edges (const struct ld_thread *t, uint32_t to)
{
  for (unsigned i = 0; i < t->depth; i++)
    if (t->held[i].class_id != to
        && xp_addr_map_get (&edge_ids, order_key (t->held[i].class_id, to))
           == 0)
      return true;
  return false;
}

/* --- the entry points ---------------------------------------------------- */

/* Enter lockdep; NULL when the thread is inside it already, or holds
   the fork lock table, ours among them (fork-locks.h).  */
static struct ld_thread *
enter (void)
{
  struct ld_thread *t = ld_self;
  if ((t != NULL && t->inside) || xp_fork_locks_mine)
    return NULL;
  xp_lock (&ld_lock);
  t = thread_state ();
  if (t == NULL)
    {
      xp_unlock (&ld_lock);
      out_of_memory ();
      return NULL;
    }
  t->inside = true;
  return t;
}

static void
leave (struct ld_thread *t)
{
  t->inside = false;
  xp_unlock (&ld_lock);
}

static const struct xp_ld_held *
find_held (const struct ld_thread *t, const void *lock)
{
  for (unsigned i = t->depth; i-- > 0;)
    if (t->held[i].lock == lock)
      return &t->held[i];
  return NULL;
}

static bool
self_deadlock (const struct xp_ld_held *held, unsigned flags)
{
  if (flags & XP_LD_SELF_HANGS)
    return true;
  /* Over its own write lock an rwlock answers EDEADLK.  Over its own
     read lock a writer waits for itself, and a reader for a writer that
     waits for it, unless readers share.  */
  if (!(held->flags & XP_LD_READ))
    return false;
  return !(flags & XP_LD_READ) || !(flags & XP_LD_READERS_SHARE);
}

static struct cached_class *
class_slot (struct ld_thread *t, const void *lock)
{
  return &t->classes[((uintptr_t) lock >> 4) % CLASS_CACHE];
}

static uint64_t *
order_slot (struct ld_thread *t, uint64_t order)
{
  return &t->orders[(order * 0x9e3779b97f4a7c15u >> 56) % ORDER_CACHE];
}

/* LOCK's class if the thread knows it, else 0.  Always inline: both
   fast paths below test it, and a call would cost them more than the
   test.  */
static inline __attribute__ ((always_inline)) uint32_t
known_class (struct ld_thread *t, const void *lock, unsigned flags)
{
  const struct cached_class *k = class_slot (t, lock);
  return k->lock == lock && k->epoch == xp_load_relaxed (&class_epoch)
         && stamp_matches (lock, flags) ? k->class_id : 0;
}

/* Does the thread know every order that taking class C adds?  */
static bool
orders_known (struct ld_thread *t, uint32_t c)
{
  for (unsigned i = 0; i < t->depth; i++)
    if (t->held[i].class_id != c)
      {
        uint64_t key = order_key (t->held[i].class_id, c);
        if (*order_slot (t, key) != key)
          return false;
      }
  return true;
}

/* Under the lockdep lock: remember LOCK's class C, and the orders
   taking it added.  */
static void
remember (struct ld_thread *t, const void *lock, uint32_t c, bool orders)
{
  *class_slot (t, lock) = (struct cached_class) {
    lock, c, xp_load_relaxed (&class_epoch)
  };
  for (unsigned i = 0; orders && i < t->depth; i++)
    if (t->held[i].class_id != c)
      {
        uint64_t key = order_key (t->held[i].class_id, c);
        *order_slot (t, key) = key;
      }
}

static bool
adds_orders (unsigned flags)
{
  return !((flags & XP_LD_READ) && (flags & XP_LD_READERS_SHARE));
}

/* The entry points xp_lockdep_acquire and xp_lockdep_acquired are in
   two parts: the fast path (a lock whose class and orders the thread
   knows: no lock of lockdep's, no call), and the rest, out of line, so
   that the fast path saves no registers for it.  */
static __attribute__ ((noinline)) void
acquire_slow (const void *lock, unsigned flags, const void *site)
{
  struct ld_thread *t = enter ();
  if (t == NULL)
    return;
  uint32_t c = class_of (lock, flags, site);
  const struct xp_ld_held *again = find_held (t, lock);
  if (c == 0)
    out_of_memory ();
  else if (again != NULL)
    {
      if (self_deadlock (again, flags))
        {
          struct xp_ld_held h = { lock, c, flags, site };
          report_count++;
          xp_ld_report_self (&h, t->held, t->depth);
        }
    }
  else if (adds_orders (flags) && needs_edges (t, c))
    {
      struct xp_ld_stack stack;
      capture_stack (&stack);
      for (unsigned i = 0; i < t->depth; i++)
        if (t->held[i].class_id != c)
          add_edge (t, &t->held[i], lock, c, &stack);
    }
  if (c != 0)
    remember (t, lock, c, again == NULL && adds_orders (flags));
  leave (t);
}

void
xp_lockdep_acquire (const void *lock, unsigned flags, const void *site)
{
  if (flags & XP_LD_TRY)
    return;
  struct ld_thread *t = ld_self;
  if (t != NULL && !t->inside)
    {
      uint32_t known = known_class (t, lock, flags);
      if (known != 0 && find_held (t, lock) == NULL
          && (!adds_orders (flags) || orders_known (t, known)))
        return;
    }
  acquire_slow (lock, flags, site);
}

static __attribute__ ((noinline)) void
acquired_slow (const void *lock, unsigned flags, const void *site)
{
  struct ld_thread *t = enter ();
  if (t == NULL)
    return;
  struct xp_ld_held h = { lock, class_of (lock, flags, site), flags, site };
  if (h.class_id == 0 || !push_held (t, &h))
    out_of_memory ();
  else
    remember (t, lock, h.class_id, false);
  leave (t);
}

void
xp_lockdep_acquired (const void *lock, unsigned flags, const void *site)
{
  struct ld_thread *t = ld_self;
  if (t != NULL && !t->inside && t->depth < t->capacity)
    {
      uint32_t known = known_class (t, lock, flags);
      if (known != 0)
        {
          t->held[t->depth++] = (struct xp_ld_held) { lock, known, flags,
                                                      site };
          return;
        }
    }
  acquired_slow (lock, flags, site);
}

void
xp_lockdep_release (const void *lock)
{
  struct ld_thread *t = ld_self;
  if (t == NULL || t->inside)
    return;
  /* The thread's own list: no lock needed.  A lock this thread does not
     hold (taken before lockdep saw it, or a read lock another thread
     took) is not on it.  Mostly the last one taken, which needs no
     move.  */
  unsigned depth = t->depth;
  if (depth != 0 && t->held[depth - 1].lock == lock)
    {
      t->depth = depth - 1;
      return;
    }
  for (unsigned i = depth; i-- > 0;)
    if (t->held[i].lock == lock)
      {
        memmove (&t->held[i], &t->held[i + 1],
                 (t->depth - i - 1) * sizeof t->held[i]);
        t->depth--;
        return;
      }
}

/* The class of THREAD's end, from now on.  */
/* Under the lockdep lock: the class of some lock changes.  */
static void
classes_change (void)
{
  xp_store_relaxed (&class_epoch, class_epoch + 1);
}

static uint32_t
thread_end_class (const void *thread, const void *routine)
{
  classes_change ();
  uint32_t c = class_for_key (routine, XP_LD_THREAD_END, thread);
  if (c == 0 || !xp_addr_map_put (&lock_classes, (uintptr_t) thread, c))
    return 0;
  return c;
}

void
xp_lockdep_thread_created (const void *thread, const void *routine)
{
  struct ld_thread *t = enter ();
  if (t == NULL)
    return;
  if (thread_end_class (thread, routine) == 0)
    out_of_memory ();
  leave (t);
}

void
xp_lockdep_thread_start (const void *thread, const void *routine)
{
  struct ld_thread *t = enter ();
  if (t == NULL)
    return;
  struct xp_ld_held h = { thread, thread_end_class (thread, routine), 0,
                          NULL };
  if (h.class_id == 0 || !push_held (t, &h))
    out_of_memory ();
  leave (t);
}

void
xp_lockdep_thread_exit (const void *thread, bool detached)
{
  struct ld_thread *t = enter ();
  if (t == NULL)
    return;
  /* A joiner still needs the class of the thread's end.  */
  if (detached)
    {
      classes_change ();
      xp_addr_map_remove (&lock_classes, (uintptr_t) thread);
    }
  t->depth = 0;
  t->inside = false;
  t->next_free = free_states;
  free_states = t;
  ld_self = NULL;
  xp_unlock (&ld_lock);
}

/* Warned of already: the pairs of a wait site and a class kept held.  */
static struct xp_addr_map cond_warnings;

void
xp_lockdep_cond_wait (const void *cond, const void *mutex, const void *site)
{
  struct ld_thread *t = enter ();
  if (t == NULL)
    return;
  for (unsigned i = 0; i < t->depth; i++)
    {
      const struct xp_ld_held *h = &t->held[i];
      if (h->lock == mutex
          || xp_ld_class (h->class_id)->origin == XP_LD_THREAD_END)
        continue;
      uintptr_t key = (uintptr_t) site ^ ((uintptr_t) h->class_id << 40);
      if (xp_addr_map_get (&cond_warnings, key) != 0)
        continue;
      if (!xp_addr_map_put (&cond_warnings, key, 1))
        out_of_memory ();
      report_count++;
      xp_ld_report_cond_wait (cond, mutex, site, h);
    }
  leave (t);
}

void
xp_lockdep_lock_init (const void *lock, unsigned flags, const void *site)
{
  struct ld_thread *t = enter ();
  if (t == NULL)
    return;
  classes_change ();
  uint32_t c = instance_classes ? class_for_key (lock, XP_LD_INSTANCE, lock)
                                : class_for_key (program_site (site),
                                                 XP_LD_INIT_SITE, lock);
  if (c == 0 || !xp_addr_map_put (&lock_classes, (uintptr_t) lock, c))
    out_of_memory ();
  stamp (lock, flags);
  leave (t);
}

void
xp_lockdep_lock_destroy (const void *lock)
{
  struct ld_thread *t = enter ();
  if (t == NULL)
    return;
  classes_change ();
  xp_addr_map_remove (&lock_classes, (uintptr_t) lock);
  leave (t);
}

static void __attribute__ ((destructor))
summary_at_exit (void)
{
  if (xp_lockdep_on)
    xp_ld_report_summary (class_count - 1, edge_count - 1, report_count);
}

bool
xp_lockdep_init (void)
{
  const char *mode = xp_env_string ("XPTHREAD_LOCKDEP");
  if (mode == NULL || strcmp (mode, "0") == 0)
    return false;
  if (strcmp (mode, "abort") == 0)
    xp_ld_abort_after_report = true;
  else if (strcmp (mode, "1") != 0)
    xp_warn ("XPTHREAD_LOCKDEP=%s is not 0, 1 or abort; using 1", mode);
  const char *classes = xp_env_string ("XPTHREAD_LOCKDEP_CLASSES");
  instance_classes = classes != NULL && strcmp (classes, "instance") == 0;
  if (classes != NULL && !instance_classes && strcmp (classes, "site") != 0)
    xp_warn ("XPTHREAD_LOCKDEP_CLASSES=%s is not site or instance; "
             "using site", classes);
  xp_ld_report_open ();
  xp_lockdep_on = 1;
  return true;
}
