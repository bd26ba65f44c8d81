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

   A try adds no edge: it cannot wait.  Read locks add edges, of kinds
   of their own (lockdep-int.h): a lock held for reading orders what
   comes after it, since a writer that waits for the reader waits for
   everything the reader waits for; and a read waits for a writer that
   holds the lock.  But a read of a reader-preferring rwlock waits for
   no reader: a cycle that goes through such a read straight on to an
   order from a lock held for reading is no deadlock (find_cycle).

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
#include "objects.h"
#include "thread.h"
#include <pthread.h>
#include <stddef.h>
#include <string.h>

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
static struct xp_ld_link *link_blocks[MAX_BLOCKS];
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

static struct xp_ld_link *
link_of (uint32_t id)
{
  return &link_blocks[id >> BLOCK_BITS][id & (BLOCK_SIZE - 1)];
}

/* Is there a block for entry ID of BLOCKS (made if need be)?  */
static bool
have_block (void **blocks, uint32_t id, size_t entry_size)
{
  void **b = &blocks[id >> BLOCK_BITS];
  if ((id >> BLOCK_BITS) >= MAX_BLOCKS)
    return false;
  if (*b == NULL)
    *b = xp_arena_alloc (entry_size * BLOCK_SIZE);
  return *b != NULL;
}

/* The next id of a table of blocks, or 0 when memory ran out.  */
static uint32_t
next_id (void **blocks, uint32_t *count, size_t entry_size)
{
  uint32_t id = *count;
  if (!have_block (blocks, id, entry_size))
    return 0;
  ++*count;
  return id;
}

static uint32_t
next_edge_id (void)
{
  if (!have_block ((void **) link_blocks, edge_count,
                   sizeof (struct xp_ld_link)))
    return 0;
  return next_id ((void **) edge_blocks, &edge_count,
                  sizeof (struct xp_ld_edge));
}

/* ARRAY, of *SIZE entries of ELEM bytes, or a copy of it with room for
   NEED; NULL when memory ran out (ARRAY stays).  */
static void *
reserve (void *array, size_t *size, size_t need, size_t elem)
{
  if (need <= *size)
    return array;
  void *bigger = xp_arena_alloc (2 * need * elem);
  if (bigger == NULL)
    return NULL;
  if (*size != 0)
    memcpy (bigger, array, *size * elem);
  xp_arena_free (array, *size * elem);
  *size = 2 * need;
  return bigger;
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

/* An order the thread saw, taken inside the gates of GATES_SIG, or in
   any (0) when the order has no gates left to lose.  */
struct cached_order
{
  uint64_t order;           /* from << 32 | to; 0: none */
  uint64_t gates_sig;
};

struct ld_thread
{
  struct xp_ld_held *held;
  unsigned depth;
  size_t capacity;
  bool inside;              /* in lockdep now */
  struct ld_thread *next_free;
  struct cached_class classes[CLASS_CACHE];
  struct cached_order orders[ORDER_CACHE];
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
      /* Which thread took an order matters: the new one must tell.  */
      memset (ld_self->orders, 0, sizeof ld_self->orders);
    }
  else if (ld_self == NULL)
    ld_self = xp_arena_alloc_lines (sizeof *ld_self);
  return ld_self;
}

/* Can H keep other threads out while held?  Not a read lock, nor the
   thread's own end.  */
static bool
can_gate (const struct xp_ld_held *h)
{
  return !(h->flags & (XP_LD_READ | XP_LD_OWN_END));
}

/* The signature of the gates held below entry I: a hash of the gate
   locks, never 0, equal for equal lists.  */
static uint64_t
gates_sig_at (const struct ld_thread *t, unsigned i)
{
  if (i == 0)
    return 1;
  const struct xp_ld_held *below = &t->held[i - 1];
  if (!can_gate (below))
    return below->gates_sig;
  uint64_t x = (below->gates_sig ^ (uintptr_t) below->lock)
               * 0x9e3779b97f4a7c15u;
  return (x ^ x >> 29) | 1;
}

/* Put LOCK on top of the held locks, which have room.  */
static void
put_held (struct ld_thread *t, const void *lock, uint32_t c, unsigned flags,
          const void *site)
{
  t->held[t->depth] = (struct xp_ld_held) { lock, c, flags, site,
                                            gates_sig_at (t, t->depth) };
  t->depth++;
}

static bool
push_held (struct ld_thread *t, const void *lock, uint32_t c,
           unsigned flags, const void *site)
{
  void *held = reserve (t->held, &t->capacity, t->depth + 1,
                        sizeof *t->held);
  if (held == NULL)
    return false;
  t->held = held;
  put_held (t, lock, c, flags, site);
  return true;
}

/* --- classes ------------------------------------------------------------- */

/* Under the lockdep lock: the class of some lock changes.  */
static void
classes_change (void)
{
  xp_store_relaxed (&class_epoch, class_epoch + 1);
}

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

/* --- unloaded objects ----------------------------------------------------- */

/* A class whose key lies in an object that was unloaded (a site in its
   code, a lock in its data) is retired: another object loaded there
   later, or the same one loaded again, has classes of its own.  */
static size_t gone_seen;
static unsigned retired_count;

static void
retire_in (uintptr_t start, uintptr_t end)
{
  for (uint32_t id = 1; id < class_count; id++)
    {
      struct xp_ld_class *c = xp_ld_class (id);
      if (!c->retired && (uintptr_t) c->key >= start
          && (uintptr_t) c->key < end)
        {
          c->retired = true;
          xp_addr_map_remove (&key_classes, (uintptr_t) c->key);
          retired_count++;
        }
    }
}

/* Under the lockdep lock: retire the classes of objects unloaded since
   the last look.  */
static void
notice_unloads (void)
{
  size_t seen = xp_objects_gone (gone_seen, retire_in);
  if (seen != gone_seen)
    classes_change ();
  gone_seen = seen;
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

/* LOCK, a lock new to lockdep, is of class C from now on.  */
static bool
give_class (const void *lock, uint32_t c)
{
  struct xp_ld_class *k = xp_ld_class (c);
  k->instances += k->instances < 2;
  return xp_addr_map_put (&lock_classes, (uintptr_t) lock, c);
}

static uint32_t
class_of (const void *lock, unsigned flags, const void *site)
{
  notice_unloads ();
  uint32_t id = xp_addr_map_get (&lock_classes, (uintptr_t) lock);
  if (id != 0 && !xp_ld_class (id)->retired && stamp_matches (lock, flags))
    return id;
  stamp (lock, flags);
  if (instance_classes)
    id = class_for_key (lock, XP_LD_INSTANCE, lock);
  else if (xp_objects_static (lock))
    id = class_for_key (lock, XP_LD_STATIC, lock);
  else
    id = class_for_key (xp_objects_program_site (site), XP_LD_FIRST_LOCK, lock);
  if (id != 0 && !give_class (lock, id))
    id = 0;
  return id;
}

/* --- edges and cycles ---------------------------------------------------- */

/* The key of the order FROM -> TO of KIND, in edge_ids and the threads'
   caches: class ids leave the top bits of TO's half free.  */
static uint64_t
order_key (uint32_t from, uint32_t to, unsigned kind)
{
  return (uint64_t) from << 32 | (uint64_t) kind << 30 | to;
}

/* The kind of the order from H to a lock taken with FLAGS.  */
static unsigned
order_kind (const struct xp_ld_held *h, unsigned flags)
{
  unsigned kind = (h->flags & XP_LD_READ) ? XP_LD_SHARED_FIRST : 0;
  if ((flags & XP_LD_READ) && (flags & XP_LD_READERS_SHARE))
    kind |= XP_LD_RECURSIVE_SECOND;
  return kind;
}

static bool
has_gate (const struct xp_ld_gate *gates, unsigned n, const void *lock)
{
  for (unsigned i = 0; i < n; i++)
    if (gates[i].lock == lock)
      return true;
  return false;
}

/* The gates of an order from the lock held at I: the locks held before
   it that keep other threads out, the outermost XP_LD_GATES of them.  */
static unsigned
gates_below (const struct ld_thread *t, unsigned i, struct xp_ld_gate *gates)
{
  unsigned n = 0;
  for (unsigned j = 0; j < i && n < XP_LD_GATES; j++)
    if (can_gate (&t->held[j]) && !has_gate (gates, n, t->held[j].lock))
      gates[n++] = (struct xp_ld_gate) { t->held[j].lock,
                                         t->held[j].class_id };
  return n;
}

/* Keep of E's gates those in NOW (N of them); true when some went.  */
static bool
keep_common_gates (struct xp_ld_edge *e, const struct xp_ld_gate *now,
                   unsigned n)
{
  unsigned kept = 0;
  for (unsigned i = 0; i < e->gates_n; i++)
    if (has_gate (now, n, e->gates[i].lock))
      e->gates[kept++] = e->gates[i];
  bool lost = kept < e->gates_n;
  e->gates_n = kept;
  return lost;
}

/* The cycle search, from the target of the checked edge back to its
   source.  A state is a class reached by a path of edges, and the mask
   of the checked edge's gates (bit I: gates[I]) that every edge of the
   path was taken under too; a path is read back through the parents.
   A cycle that reaches the source with a mask left was always taken
   inside one gate, and cannot close.  Only gates of a class of one lock
   count: in another run, two threads could hold two locks of a class.

   A path must be strong, as the kernel's lockdep has it: a recursive
   read, which waits only for a writer that holds the lock, cannot be
   followed by an order from that lock held for reading, whose holder
   is no writer.  The checked edge closes the path, so the rule holds
   between it and the path's first edge and last one too.

   Without gates or recursive reads every mask is 0 and this is a plain
   depth-first search; with them a class is visited at most once per
   mask and way in (by a recursive read or not).  */
struct search_node
{
  uint32_t class_id, edge, parent;
  unsigned mask;
};

enum cycle_kind
{
  NO_CYCLE,
  GATED_CYCLE,
  CYCLE
};

struct cycle_found
{
  uint32_t node;            /* of a cycle: the last node of its path */
  unsigned gate;            /* of a gated cycle: the index of a gate */
};

static struct search_node *nodes;
static uint32_t *pending;
static size_t nodes_size, pending_size;
static uint32_t search;

/* The gates of E that count, as a mask.  */
static unsigned
gates_mask (const struct xp_ld_edge *e)
{
  unsigned mask = 0;
  for (unsigned i = 0; i < e->gates_n; i++)
    if (xp_ld_class (e->gates[i].class_id)->instances == 1)
      mask |= 1u << i;
  return mask;
}

/* Of the gates of E in MASK, those that edge F was taken under too.  */
static unsigned
common_gates (const struct xp_ld_edge *e, uint32_t f, unsigned mask)
{
  if (mask == 0)
    return 0;
  const struct xp_ld_edge *other = xp_ld_edge (f);
  unsigned common = 0;
  for (unsigned i = 0; i < e->gates_n; i++)
    if ((mask >> i & 1)
        && has_gate (other->gates, other->gates_n, e->gates[i].lock))
      common |= 1u << i;
  return common;
}

/* May a path go on from an edge of kind IN to one of kind OUT?  */
static bool
strong_step (unsigned in, unsigned out)
{
  return !((in & XP_LD_RECURSIVE_SECOND) && (out & XP_LD_SHARED_FIRST));
}

/* Is class ID reached for the first time with MASK, by an edge of KIND,
   in this search?  A smaller mask than one seen may lead where that one
   did not: the exact masks seen are remembered, and 0, which leads
   everywhere; and a way in that is no recursive read leads everywhere
   one that is does (the low half of the bits; recursive reads, the high
   half).  */
static bool
first_visit (uint32_t id, unsigned mask, unsigned kind)
{
  struct xp_ld_class *c = xp_ld_class (id);
  if (c->visited != search)
    {
      c->visited = search;
      c->masks = 0;
    }
  uint32_t bits = 1u | 1u << mask;
  if (kind & XP_LD_RECURSIVE_SECOND)
    bits |= bits << 16;
  if (c->masks & bits)
    return false;
  c->masks |= (1u << mask) << ((kind & XP_LD_RECURSIVE_SECOND) ? 16 : 0);
  return true;
}

/* Node *N, and room to wait for it; false when memory ran out.  */
static bool
add_node (uint32_t *n, uint32_t class_id, uint32_t edge, uint32_t parent,
          unsigned mask)
{
  struct search_node *more_nodes = reserve (nodes, &nodes_size, *n + 1,
                                            sizeof *nodes);
  if (more_nodes == NULL)
    return false;
  nodes = more_nodes;
  uint32_t *more_pending = reserve (pending, &pending_size, *n + 1,
                                    sizeof *pending);
  if (more_pending == NULL)
    return false;
  pending = more_pending;
  nodes[(*n)++] = (struct search_node) { class_id, edge, parent, mask };
  return true;
}

static enum cycle_kind
find_cycle (uint32_t edge, struct cycle_found *found)
{
  const struct xp_ld_edge *e = xp_ld_edge (edge);
  enum cycle_kind kind = NO_CYCLE;
  uint32_t n = 0, waiting = 0;
  search++;
  if (!add_node (&n, e->to, edge, 0, gates_mask (e)))
    return kind;
  first_visit (e->to, nodes[0].mask, e->kind);
  pending[waiting++] = 0;
  while (waiting > 0)
    {
      uint32_t at = pending[--waiting];
      unsigned in = link_of (nodes[at].edge)->kind;
      for (uint32_t f = xp_ld_class (nodes[at].class_id)->first_out; f != 0;
           f = link_of (f)->next_out)
        {
          const struct xp_ld_link *l = link_of (f);
          uint32_t next = l->to;
          if (!strong_step (in, l->kind)
              || (next == e->from && !strong_step (l->kind, e->kind)))
            continue;
          unsigned mask = common_gates (e, f, nodes[at].mask);
          if (!first_visit (next, mask, l->kind))
            continue;
          if (!add_node (&n, next, f, at, mask))
            return kind;
          if (next != e->from)
            pending[waiting++] = n - 1;
          else if (mask == 0)
            {
              found->node = n - 1;
              return CYCLE;
            }
          else if (kind == NO_CYCLE)
            {
              kind = GATED_CYCLE;
              found->gate = (unsigned) __builtin_ctz (mask);
            }
        }
    }
  return kind;
}

/* The edges of the cycle whose path ends at node LAST, in order, the
   checked edge last, in *CYCLE; their number, 0 when memory ran out.  */
static unsigned
read_cycle (uint32_t last, const uint32_t **cycle)
{
  static uint32_t *edges;
  static size_t edges_size;
  unsigned n = 0;
  for (uint32_t at = last; at != 0; at = nodes[at].parent)
    n++;
  uint32_t *more = reserve (edges, &edges_size, n + 1, sizeof *edges);
  if (more == NULL)
    return 0;
  edges = more;
  unsigned i = n;
  for (uint32_t at = last; at != 0; at = nodes[at].parent)
    edges[--i] = nodes[at].edge;
  edges[n] = nodes[0].edge;
  *cycle = edges;
  return n + 1;
}

/* Does edge ID, just taken by T taking LOCK, close a cycle?  Report
   one outside gates, or mark the edge when all it closes are inside.  */
static void
check_edge (uint32_t id, const void *lock, const struct ld_thread *t)
{
  struct xp_ld_edge *e = xp_ld_edge (id);
  struct cycle_found found;
  const uint32_t *cycle;
  unsigned n;
  switch (find_cycle (id, &found))
    {
    case NO_CYCLE:
      break;
    case GATED_CYCLE:
      e->gated = true;
      break;
    case CYCLE:
      if ((n = read_cycle (found.node, &cycle)) == 0)
        break;
      e->reported = true;
      report_count++;
      xp_ld_report_cycle (lock, cycle, n, t->held, t->depth);
      break;
    }
}

/* The taking of E that reports show: by this thread, holding H, taking
   with FLAGS and STACK.  */
static void
took (struct xp_ld_edge *e, const struct xp_ld_held *h, unsigned flags,
      const struct xp_stack *stack)
{
  e->tid = xp_self_tid ();
  e->read_second = (flags & XP_LD_READ) != 0;
  e->held_site = h->site;
  e->stack = *stack;
}

/* A stack taken when first needed.  */
struct lazy_stack
{
  bool taken;
  struct xp_stack stack;
};

static const struct xp_stack *
stack_of (struct lazy_stack *s)
{
  if (!s->taken)
    xp_objects_capture_stack (&s->stack);
  s->taken = true;
  return &s->stack;
}

/* Record that the lock held at I was held when LOCK, of class TO, was
   taken with FLAGS: an order of KIND.  */
static void
add_edge (const struct ld_thread *t, unsigned i, const void *lock,
          uint32_t to, unsigned flags, unsigned kind,
          struct lazy_stack *stack)
{
  const struct xp_ld_held *h = &t->held[i];
  uint32_t id = next_edge_id ();
  if (id == 0 || !xp_addr_map_put (&edge_ids,
                                   order_key (h->class_id, to, kind), id))
    {
      out_of_memory ();
      return;
    }
  struct xp_ld_edge *e = xp_ld_edge (id);
  *e = (struct xp_ld_edge) { .from = h->class_id, .to = to, .kind = kind };
  e->gates_n = gates_below (t, i, e->gates);
  took (e, h, flags, stack_of (stack));
  struct xp_ld_class *from = xp_ld_class (h->class_id);
  *link_of (id) = (struct xp_ld_link) { .to = to, .kind = kind,
                                        .next_out = from->first_out };
  from->first_out = id;
  check_edge (id, lock, t);
}

/* Edge ID is taken again, from the lock held at I, maybe by another
   thread, maybe outside some of its gates: a cycle through it that was
   inside those only is a cycle now.  */
static void
seen_again (const struct ld_thread *t, unsigned i, uint32_t id,
            const void *lock, unsigned flags, struct lazy_stack *stack)
{
  struct xp_ld_edge *e = xp_ld_edge (id);
  e->many_threads |= e->tid != xp_self_tid ();
  struct xp_ld_gate now[XP_LD_GATES];
  if (e->gates_n == 0
      || !keep_common_gates (e, now, gates_below (t, i, now)))
    return;
  /* The taking outside the gate is the one a report must show.  */
  took (e, &t->held[i], flags, stack_of (stack));
  if (!e->reported)
    check_edge (id, lock, t);
}

/* The orders that taking LOCK, of class C, with FLAGS adds or sees
   again.  */
static void
note_orders (const struct ld_thread *t, const void *lock, uint32_t c,
             unsigned flags)
{
  struct lazy_stack stack = { .taken = false };
  for (unsigned i = 0; i < t->depth; i++)
    if (t->held[i].class_id != c)
      {
        unsigned kind = order_kind (&t->held[i], flags);
        uint64_t key = order_key (t->held[i].class_id, c, kind);
        uint32_t id = xp_addr_map_get (&edge_ids, key);
        if (id != 0)
          seen_again (t, i, id, lock, flags, &stack);
        else
          add_edge (t, i, lock, c, flags, kind, &stack);
      }
}

/* Add the gate class C to the summary S.  */
static void
note_gate (struct xp_ld_summary *s, uint32_t c)
{
  for (unsigned i = 0; i < s->gates_n; i++)
    if (s->gates[i] == c)
      return;
  if (s->gates_n < XP_LD_SUMMARY_GATES)
    s->gates[s->gates_n++] = c;
  else
    s->more_gates = true;
}

/* The cycles not reported because each is inside a gate, as they stand
   at the end (a gate may have lost its place since).  */
static void
count_gated (struct xp_ld_summary *s)
{
  for (uint32_t id = 1; id < edge_count; id++)
    {
      struct xp_ld_edge *e = xp_ld_edge (id);
      struct cycle_found found;
      if (e->gated && !e->reported && find_cycle (id, &found) == GATED_CYCLE)
        {
          s->gated++;
          note_gate (s, e->gates[found.gate].class_id);
        }
    }
}

/* --- the entry points ---------------------------------------------------- */

/* Enter lockdep; NULL when the thread is inside it already, or when a
   fork takes or holds the fork lock table, ours among them
   (fork-locks.h).  */
static struct ld_thread *
enter (void)
{
  struct ld_thread *t = ld_self;
  if ((t != NULL && t->inside) || xp_fork_locks_mine
      || !xp_fork_lock_for_hook (&ld_lock))
    return NULL;
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

/* Release the lockdep lock, then write the reports made meanwhile.
   While they are written the thread still counts as inside: the locks
   that naming takes (the allocator's, libdw's) are not the program's.  */
static void
unlock_and_report (void)
{
  struct xp_ld_pending *reports = xp_ld_report_take ();
  xp_unlock (&ld_lock);
  if (reports != NULL)
    xp_ld_report_deliver (reports);
}

static void
leave (struct ld_thread *t)
{
  unlock_and_report ();
  t->inside = false;
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

static struct cached_order *
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

/* Does the thread know every order that taking class C with FLAGS
   adds?  */
static bool
orders_known (struct ld_thread *t, uint32_t c, unsigned flags)
{
  for (unsigned i = 0; i < t->depth; i++)
    if (t->held[i].class_id != c)
      {
        uint64_t key = order_key (t->held[i].class_id, c,
                                  order_kind (&t->held[i], flags));
        const struct cached_order *o = order_slot (t, key);
        if (o->order != key
            || (o->gates_sig != 0 && o->gates_sig != t->held[i].gates_sig))
          return false;
      }
  return true;
}

/* Under the lockdep lock: remember LOCK's class C, and the orders
   taking it with FLAGS added, with the gates they were seen in unless
   they have none left to lose.  */
static void
remember (struct ld_thread *t, const void *lock, uint32_t c, unsigned flags,
          bool orders)
{
  *class_slot (t, lock) = (struct cached_class) {
    lock, c, xp_load_relaxed (&class_epoch)
  };
  for (unsigned i = 0; orders && i < t->depth; i++)
    if (t->held[i].class_id != c)
      {
        uint64_t key = order_key (t->held[i].class_id, c,
                                  order_kind (&t->held[i], flags));
        uint32_t id = xp_addr_map_get (&edge_ids, key);
        if (id != 0)
          *order_slot (t, key) = (struct cached_order) {
            key, xp_ld_edge (id)->gates_n == 0 ? 0 : t->held[i].gates_sig
          };
      }
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
          struct xp_ld_held h = { lock, c, flags, site, 0 };
          report_count++;
          xp_ld_report_self (&h, t->held, t->depth);
        }
    }
  else
    note_orders (t, lock, c, flags);
  if (c != 0)
    remember (t, lock, c, flags, again == NULL);
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
          && orders_known (t, known, flags))
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
  uint32_t c = class_of (lock, flags, site);
  site = xp_objects_program_site (site);
  if (c == 0 || !push_held (t, lock, c, flags, site))
    out_of_memory ();
  else
    remember (t, lock, c, flags, false);
  leave (t);
}

void
xp_lockdep_acquired (const void *lock, unsigned flags, const void *site)
{
  struct ld_thread *t = ld_self;
  if (t != NULL && !t->inside && t->depth < t->capacity)
    {
      uint32_t known = known_class (t, lock, flags);
      if (known != 0 && !xp_objects_own (site))
        {
          put_held (t, lock, known, flags, site);
          return;
        }
    }
  acquired_slow (lock, flags, site);
}

/* Reported already: the pairs of a class and a misuse, so that a
   program that misuses one kind of lock in a loop gets one report.  */
static struct xp_addr_map misuses;

static bool
first_misuse (enum xp_ld_misuse what, uint32_t c)
{
  uintptr_t key = ((uintptr_t) c << 2 | what) + 1;
  if (xp_addr_map_get (&misuses, key) != 0)
    return false;
  if (!xp_addr_map_put (&misuses, key, 1))
    out_of_memory ();
  return true;
}

/* The caller misused LOCK (WHAT): report it, once per class.  A lock
   lockdep never saw taken or initialised may have been taken before it
   started, and is left alone.  */
static void
misused (enum xp_ld_misuse what, const void *lock)
{
  struct ld_thread *t = enter ();
  if (t == NULL)
    return;
  uint32_t c = xp_addr_map_get (&lock_classes, (uintptr_t) lock);
  if (c != 0 && first_misuse (what, c))
    {
      struct xp_stack stack;
      xp_objects_capture_stack (&stack);
      report_count++;
      xp_ld_report_misuse (what, lock, c, &stack, t->held, t->depth);
    }
  leave (t);
}

/* Locks of T other than its own end, which it holds from its start.  */
static unsigned
locks_held (const struct ld_thread *t)
{
  unsigned n = 0;
  for (unsigned i = 0; i < t->depth; i++)
    n += xp_ld_class (t->held[i].class_id)->origin != XP_LD_THREAD_END;
  return n;
}

void
xp_lockdep_release (const void *lock, unsigned flags)
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
        for (unsigned k = i; k < t->depth; k++)
          t->held[k].gates_sig = gates_sig_at (t, k);
        return;
      }
  /* A read lock may be another thread's to release (glibc allows it);
     the kinds that check their owner answer EPERM.  */
  if (!(flags & (XP_LD_READ | XP_LD_OWNER_CHECKED)))
    misused (XP_LD_RELEASE_UNHELD, lock);
}

/* The class of THREAD's end, from now on.  */
static uint32_t
thread_end_class (const void *thread, const void *routine)
{
  notice_unloads ();
  classes_change ();
  uint32_t c = class_for_key (routine, XP_LD_THREAD_END, thread);
  if (c == 0 || !give_class (thread, c))
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
  uint32_t c = thread_end_class (thread, routine);
  if (c == 0 || !push_held (t, thread, c, XP_LD_OWN_END, NULL))
    out_of_memory ();
  leave (t);
}

void
xp_lockdep_thread_exit (const void *thread, bool detached)
{
  struct ld_thread *t = enter ();
  if (t == NULL)
    return;
  if (locks_held (t) != 0)
    {
      report_count++;
      /* Where it ends is the library's thread start, or glibc's.  */
      struct xp_stack nowhere = { .depth = 0 };
      xp_ld_report_misuse (XP_LD_EXIT_HOLDING, thread, 0, &nowhere, t->held,
                           t->depth);
      unlock_and_report ();
      /* Kept by the thread, as when it cannot enter, if a fork holds
         the table.  */
      if (!xp_fork_lock_for_hook (&ld_lock))
        return;
    }
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
  notice_unloads ();
  classes_change ();
  uint32_t c = instance_classes ? class_for_key (lock, XP_LD_INSTANCE, lock)
                                : class_for_key (xp_objects_program_site (site),
                                                 XP_LD_INIT_SITE, lock);
  if (c == 0 || !give_class (lock, c))
    out_of_memory ();
  stamp (lock, flags);
  leave (t);
}

void
xp_lockdep_destroying (const void *lock)
{
  struct ld_thread *t = ld_self;
  if (t != NULL && !t->inside && find_held (t, lock) != NULL)
    misused (XP_LD_DESTROY_HELD, lock);
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

/* Is edge E the first of its pair of classes, of any kind?  */
static bool
first_of_pair (uint32_t id, const struct xp_ld_edge *e)
{
  for (unsigned kind = 0;
       kind <= (XP_LD_SHARED_FIRST | XP_LD_RECURSIVE_SECOND); kind++)
    {
      uint32_t other = xp_addr_map_get (&edge_ids,
                                        order_key (e->from, e->to, kind));
      if (other != 0 && other < id)
        return false;
    }
  return true;
}

/* The orders between classes still in use: pairs of classes, whatever
   the kinds of their edges.  */
static unsigned
live_orders (void)
{
  unsigned n = 0;
  for (uint32_t id = 1; id < edge_count; id++)
    {
      const struct xp_ld_edge *e = xp_ld_edge (id);
      n += !xp_ld_class (e->from)->retired && !xp_ld_class (e->to)->retired
           && first_of_pair (id, e);
    }
  return n;
}

static void __attribute__ ((destructor))
summary_at_exit (void)
{
  struct ld_thread *t = xp_lockdep_on ? enter () : NULL;
  if (t == NULL)
    return;
  notice_unloads ();
  struct xp_ld_summary s = { .classes = class_count - 1 - retired_count,
                             .edges = live_orders (),
                             .retired = retired_count };
  count_gated (&s);
  s.reports = report_count;
  s.memory = xp_arena_in_use ();
  xp_ld_report_summary (&s);
  leave (t);
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
