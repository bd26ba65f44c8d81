/* The contention profiler: counts of contended locks, per class of lock
   (lockdep's rules), per acquire site and per thread.

   A lock is profiled from its first contention on: the lock paths tell
   the profiler only on their slow paths (a wait, a failed try), which
   gives the lock a record here and a class; from then on its
   acquisitions come here too (a mutex is marked in its kind, so that its
   fast path leads here; the other objects' paths pass the lock hooks'
   switch).  A lock never contended is never seen.

   No lock of the profiler's is on any lock's path once the lock has its
   class: a lock's record is found in a table of records that only
   grows, read without a lock; each thread counts in entries of its own
   (class, kind, site), which it alone writes, and which the reporter
   reads while they grow.  The profiler's lock (a fork lock) guards the
   classes, the list of threads, and a thread's start and end; the
   reporter holds it only to copy the counts.

   A thread that comes back into the profiler from inside it (a lock
   taken by the unwinder) is let through uncounted.  */
#define _GNU_SOURCE
#include "prof-int.h"
#include "arena.h"
#include "env.h"
#include "fork-locks.h"
#include <string.h>
#include <sys/mman.h>
#include <time.h>

int xp_prof_on;
static unsigned hold_sampling = 64;
static uint64_t start_ns;
static XP_FORK_LOCK (prof, prof_lock);
static struct xp_prof_overflow overflow;

/* --- memory and time ----------------------------------------------------- */

void *
xp_prof_map (size_t size)
{
  void *p = mmap (NULL, size, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

void
xp_prof_unmap (void *p, size_t size)
{
  if (p != NULL)
    munmap (p, size);
}

static uint64_t
mix (uint64_t x)
{
  x *= 0x9e3779b97f4a7c15u;
  return x ^ x >> 31;
}

/* --- lock records ---------------------------------------------------------- */

/* Records in one mapping that only grows (its pages are touched as they
   are used); the slots hold a record's index + 1, 0 when empty.  */
static struct xp_prof_lock *records;
static uint32_t *slots;
static uint32_t records_used, records_max;
static size_t slots_mask;

static bool
records_init (long max)
{
  records_max = (uint32_t) max;
  size_t n = 1;
  while (n < 2 * (size_t) max)
    n <<= 1;
  slots_mask = n - 1;
  records = xp_prof_map ((size_t) max * sizeof *records);
  slots = xp_prof_map (n * sizeof *slots);
  return records != NULL && slots != NULL;
}

/* A new record for ADDRESS, not yet in the slots; NULL when full.  */
static struct xp_prof_lock *
claim_record (uintptr_t address)
{
  uint32_t i = xp_fetch_add (&records_used, 1);
  if (i >= records_max)
    {
      xp_fetch_add (&overflow.locks, 1);
      return NULL;
    }
  records[i].address = address;
  return &records[i];
}

/* The record of ADDRESS; a new one when CREATE (NULL: the table is
   full, or there is none and !CREATE).  */
static struct xp_prof_lock *
record_of (const void *lock, bool create)
{
  uintptr_t address = (uintptr_t) lock;
  struct xp_prof_lock *mine = NULL;
  for (size_t i = mix (address) & slots_mask, n = 0; n <= slots_mask;
       i = (i + 1) & slots_mask, n++)
    {
      uint32_t id = xp_load_acquire (&slots[i]);
      if (id == 0)
        {
          if (!create)
            return NULL;
          if (mine == NULL && (mine = claim_record (address)) == NULL)
            return NULL;
          uint32_t want = (uint32_t) (mine - records) + 1;
          if (xp_cas (&slots[i], &id, want))
            return mine;
        }
      if (records[id - 1].address == address)
        return &records[id - 1];
    }
  return NULL;
}

/* --- classes --------------------------------------------------------------- */

static struct xp_prof_class *classes;
static uint32_t classes_n = 1;
static struct xp_addr_map class_keys;

/* Under the profiler's lock.  */
static uint32_t
class_for_key (const void *key, enum xp_prof_origin origin)
{
  uint32_t id = xp_addr_map_get (&class_keys, (uintptr_t) key);
  if (id != 0)
    return id;
  if (classes_n > records_max || !xp_addr_map_put (&class_keys,
                                                   (uintptr_t) key,
                                                   classes_n))
    return 0;
  classes[classes_n] = (struct xp_prof_class) { key, origin, 0 };
  return classes_n++;
}

/* Give LOCK, first contended at SITE, its class; 0 where the table of
   classes is full, or while a fork holds the profiler's lock (this
   contention is then not counted).  */
static uint32_t
classify (struct xp_prof_lock *lock, const void *site)
{
  if (!xp_fork_lock_for_hook (&prof_lock))
    return 0;
  uint32_t id = lock->class_id;
  if (id == 0)
    {
      const void *address = (const void *) lock->address;
      if (xp_objects_static (address))
        id = class_for_key (address, XP_PROF_STATIC);
      else if (lock->init_site != NULL)
        id = class_for_key (lock->init_site, XP_PROF_INIT_SITE);
      else
        id = class_for_key (xp_objects_program_site (site),
                            XP_PROF_FIRST_CONTENDED);
      if (id != 0)
        {
          classes[id].instances++;
          xp_store_release (&lock->class_id, id);
        }
      else
        overflow.locks++;
    }
  xp_unlock (&prof_lock);
  return id;
}

/* --- threads and their entries -------------------------------------------- */

#define INDEX_FIRST 256
#define TIMED_HOLDS 8

struct timed_hold
{
  const void *lock;
  struct xp_prof_entry *entry;
  uint64_t start;
};

/* A thread's cache of the entries it counted last, by lock and site: a
   lock taken again at a site where it was counted skips the lookups (in
   tables too big to stay in the CPU's caches), however many locks the
   thread takes in turn, as the stripes of a table.  Two ways a set, the
   one used last first: 256 locks taken at random in turn (a table's
   stripes) would find another in their slot one time in three with one
   way, about one in twenty-five with two.  Valid for as long as the
   thread's state, which keeps its entries when it passes to a new
   thread.  */
#define CACHE_SETS 256
#define CACHE_WAYS 2

struct cached_entry
{
  const void *lock, *site;
  enum xp_prof_kind kind;
  struct xp_prof_lock *record;
  struct xp_prof_entry *entry;
};

/* The mutex whose acquisition the thread counted last, if nothing else
   was counted since, and where (mutex_acquired_again).  */
struct last_mutex
{
  const void *lock, *site;
  struct xp_prof_entry *entry;
};

struct prof_thread
{
  struct prof_thread *next;         /* every thread's, under the lock */
  struct prof_thread *next_free;
  uint64_t serial;
  struct xp_prof_entry *entries;    /* published with release */
  struct xp_prof_stack *stacks;     /* published with release */
  void **index;                     /* the thread's own lookup */
  size_t index_mask, index_used;
  char *chunk;
  size_t chunk_left;
  unsigned hold_countdown;
  unsigned spin_countdown;          /* spin waits until one is timed */
  uint64_t sample_random;           /* the state of both samplers */
  uint64_t spin_ns, spin_rounds;    /* timed spins' (learn_pace) */
  uint64_t spin_pace;               /* their quotient << PACE_SHIFT */
  struct timed_hold timed[TIMED_HOLDS];  /* xp_prof_holds_timed of them */
  bool inside;                      /* in the profiler now */
  struct cached_entry *cache;       /* CACHE_SETS x CACHE_WAYS, or NULL */
  struct last_mutex last;
};

static struct prof_thread *all_threads, *free_threads;
static uint64_t next_serial = 1;
static __thread struct prof_thread *prof_self
  __attribute__ ((tls_model ("initial-exec")));

#define CHUNK ((size_t) 256 << 10)

static void *
thread_alloc (struct prof_thread *t, size_t size)
{
  size = (size + 15) & ~(size_t) 15;
  if (size > t->chunk_left)
    {
      t->chunk = xp_prof_map (CHUNK);
      t->chunk_left = t->chunk != NULL ? CHUNK : 0;
      if (t->chunk == NULL)
        return NULL;
    }
  void *p = t->chunk;
  t->chunk += size;
  t->chunk_left -= size;
  return p;
}

/* NULL where memory ran out, or while a fork holds the profiler's lock.  */
static struct prof_thread *
new_thread (void)
{
  if (!xp_fork_lock_for_hook (&prof_lock))
    return NULL;
  struct prof_thread *t = free_threads;
  if (t != NULL)
    free_threads = t->next_free;
  else if ((t = xp_arena_alloc_lines (sizeof *t)) != NULL)
    {
      t->next = all_threads;
      xp_store_release (&all_threads, t);
    }
  if (t != NULL)
    {
      t->serial = next_serial++;
      t->hold_countdown = 1;
      t->spin_countdown = 1;
      t->sample_random = mix (t->serial);
      t->last.lock = NULL;
    }
  xp_unlock (&prof_lock);
  return t;
}

/* The calling thread's state, marked busy; NULL when it is in the
   profiler already or memory ran out.  */
static struct prof_thread *
enter (void)
{
  struct prof_thread *t = prof_self;
  if (t == NULL)
    t = prof_self = new_thread ();
  if (t == NULL || t->inside)
    return NULL;
  t->inside = true;
  return t;
}

static void
leave (struct prof_thread *t)
{
  t->inside = false;
}

void
xp_prof_thread_exit (void)
{
  struct prof_thread *t = prof_self;
  if (!xp_prof_active () || t == NULL)
    return;
  prof_self = NULL;
  xp_prof_holds_timed = 0;
  xp_lock (&prof_lock);
  t->next_free = free_threads;
  free_threads = t;
  xp_unlock (&prof_lock);
}

/* The thread's private index: open addressing over pointers, grown as
   it fills; MATCH tells whether an item is the one KEY names.  */
typedef bool (*item_match) (const void *item, const void *key);

static void **
index_slot (struct prof_thread *t, uint64_t hash, item_match match,
            const void *key)
{
  for (size_t i = hash & t->index_mask;; i = (i + 1) & t->index_mask)
    if (t->index[i] == NULL || match (t->index[i], key))
      return &t->index[i];
}

static bool any_item (const void *item, const void *key)
{
  (void) item;
  (void) key;
  return false;
}

static uint64_t item_hash (const void *item);

static bool
index_room (struct prof_thread *t)
{
  if (t->index != NULL && (t->index_used + 1) * 2 <= t->index_mask + 1)
    return true;
  size_t n = t->index == NULL ? INDEX_FIRST : 2 * (t->index_mask + 1);
  void **bigger = xp_prof_map (n * sizeof *bigger);
  if (bigger == NULL)
    return false;
  void **old = t->index;
  size_t old_n = t->index != NULL ? t->index_mask + 1 : 0;
  t->index = bigger;
  t->index_mask = n - 1;
  for (size_t i = 0; i < old_n; i++)
    if (old[i] != NULL)
      *index_slot (t, item_hash (old[i]), any_item, NULL) = old[i];
  xp_prof_unmap (old, old_n * sizeof *old);
  return true;
}

/* Entries and stacks share the index; a stack's hash has the top bit.  */
#define STACK_HASH_BIT (1ull << 63)

struct entry_key
{
  uint32_t class_id;
  enum xp_prof_kind kind;
  const void *site;
};

static uint64_t
entry_hash (const struct entry_key *k)
{
  return mix ((uintptr_t) k->site ^ ((uint64_t) k->class_id << 3)
              ^ k->kind) & ~STACK_HASH_BIT;
}

static bool
is_stack_item (const void *item)
{
  return ((const struct xp_prof_stack *) item)->hash & STACK_HASH_BIT;
}

/* Entries and stacks both begin with a next pointer and a hash word:
   the entry's class and kind stand in its place.  */
static uint64_t
item_hash (const void *item)
{
  if (is_stack_item (item))
    return ((const struct xp_prof_stack *) item)->hash;
  const struct xp_prof_entry *e = item;
  struct entry_key k = { e->class_id, e->kind, e->site };
  return entry_hash (&k);
}

static bool
entry_matches (const void *item, const void *key)
{
  const struct xp_prof_entry *e = item;
  const struct entry_key *k = key;
  return !is_stack_item (item) && e->class_id == k->class_id
         && e->kind == k->kind && e->site == k->site;
}

static struct xp_prof_entry *
entry_of (struct prof_thread *t, uint32_t class_id, enum xp_prof_kind kind,
          const void *site)
{
  struct entry_key k = { class_id, kind, site };
  if (!index_room (t))
    return NULL;
  void **slot = index_slot (t, entry_hash (&k), entry_matches, &k);
  if (*slot != NULL)
    return *slot;
  struct xp_prof_entry *e = thread_alloc (t, sizeof *e);
  if (e == NULL)
    {
      overflow.entries++;
      return NULL;
    }
  e->class_id = class_id;
  e->kind = kind;
  e->site = site;
  e->next = t->entries;
  xp_store_release (&t->entries, e);
  *slot = e;
  t->index_used++;
  return e;
}

/* --- stacks ---------------------------------------------------------------- */

/* A stack is taken at an entry's first wait and every STACK_EVERY-th
   after; the waits in between count for the last one taken, so that an
   unwinding (microseconds) is paid for seldom, and by a waiter.  */
#define STACK_EVERY 1024

struct stack_key
{
  uint32_t class_id;
  struct xp_stack frames;
};

static uint64_t
stack_hash (const struct stack_key *k)
{
  const struct xp_stack *s = &k->frames;
  uint64_t h = mix (s->depth ^ (uint64_t) k->class_id << 8);
  for (unsigned i = 0; i < s->depth; i++)
    h = mix (h ^ (uintptr_t) s->pc[i]);
  return h | STACK_HASH_BIT;
}

static bool
stack_matches (const void *item, const void *key)
{
  const struct xp_prof_stack *s = item;
  const struct stack_key *k = key;
  return is_stack_item (item) && s->class_id == k->class_id
         && s->frames.depth == k->frames.depth
         && memcmp (s->frames.pc, k->frames.pc,
                    k->frames.depth * sizeof *k->frames.pc) == 0;
}

static struct xp_prof_stack *
stack_here (struct prof_thread *t, uint32_t class_id)
{
  struct stack_key k = { .class_id = class_id };
  xp_objects_capture_stack (&k.frames);
  if (!index_room (t))
    return NULL;
  uint64_t hash = stack_hash (&k);
  void **slot = index_slot (t, hash, stack_matches, &k);
  if (*slot != NULL)
    return *slot;
  struct xp_prof_stack *s = thread_alloc (t, sizeof *s);
  if (s == NULL)
    {
      overflow.stacks++;
      return NULL;
    }
  s->hash = hash;
  s->class_id = class_id;
  s->frames = k.frames;
  s->next = t->stacks;
  xp_store_release (&t->stacks, s);
  *slot = s;
  t->index_used++;
  return s;
}

/* --- counting -------------------------------------------------------------- */

#define KIND_BIT(kind) (1u << (kind))

/* Kinds whose acquisitions have one owner at a time.  */
static bool
exclusive (enum xp_prof_kind kind)
{
  return (KIND_BIT (XP_PROF_MUTEX) | KIND_BIT (XP_PROF_WRITE)
          | KIND_BIT (XP_PROF_SPIN)) & KIND_BIT (kind);
}

/* Kinds held between acquisition and release: a hold to time.  */
static bool
held (enum xp_prof_kind kind)
{
  return (KIND_BIT (XP_PROF_MUTEX) | KIND_BIT (XP_PROF_READ)
          | KIND_BIT (XP_PROF_WRITE) | KIND_BIT (XP_PROF_SPIN))
         & KIND_BIT (kind);
}

/* The owner's site, told to later waiters; a reader writes it only when
   it changes, so that readers do not take the record's line from each
   other.  */
static void
note_holder (struct xp_prof_lock *lock, const void *site)
{
  if (xp_load_relaxed (&lock->holder_site) != site)
    xp_store_relaxed (&lock->holder_site, site);
}

/* The events until the next sampled one: EVERY on average, drawn at
   random from 1 to twice that, so that a thread taking its locks in a
   fixed cycle does not sample the same one always.  */
static unsigned
next_countdown (struct prof_thread *t, unsigned every)
{
  if (every == 1)
    return 1;
  uint64_t x = t->sample_random;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  t->sample_random = x;
  return 1 + (unsigned) (x % (2 * every - 1));
}

/* Holds this long on average, timed at both ends, cost under 0.25% more
   for the clock (20-50 ns a reading): from there on an entry times all
   of its holds, and its totals are no longer estimates.  */
#define LONG_HOLD_NS 20000

/* Time this hold: the one whose countdown ran out, or one of an entry
   whose holds are long.  A hold another thread ended (an unlock from
   elsewhere, which glibc allows for normal mutexes) stays in the list
   until newer ones push it out.  */
static __attribute__ ((noinline)) void
time_hold (struct prof_thread *t, const void *lock, struct xp_prof_entry *e)
{
  if (t->hold_countdown == 0)
    t->hold_countdown = next_countdown (t, hold_sampling);
  unsigned n = xp_prof_holds_timed;
  if (n == TIMED_HOLDS)
    memmove (&t->timed[0], &t->timed[1], --n * sizeof t->timed[0]);
  t->timed[n] = (struct timed_hold) { lock, e, xp_prof_now () };
  xp_prof_holds_timed = n + 1;
}

/* Counted on every acquisition of a profiled lock, inside its critical
   section: the record's line is written only when the owner changes,
   so that a lock taken again and again by one thread keeps it shared
   with the waiters that read it.  */
static inline void
count_acquisition (struct prof_thread *t, struct xp_prof_lock *lock,
                   struct xp_prof_entry *e, enum xp_prof_kind kind,
                   enum xp_prof_owner owner)
{
  t->last.lock = NULL;
  e->acquisitions++;
  if (exclusive (kind))
    {
      if (owner == XP_PROF_OWNER_UNKNOWN)
        owner = xp_prof_owner_swap (&lock->last_owner);
      e->owner_changes += owner == XP_PROF_OWNER_CHANGED;
    }
  if (held (kind))
    {
      note_holder (lock, e->site);
      if (xp_unlikely (--t->hold_countdown == 0) || e->holds_long)
        time_hold (t, (const void *) lock->address, e);
    }
}

static unsigned
bucket_of (uint64_t ns)
{
  unsigned k = ns == 0 ? 0 : 63 - (unsigned) __builtin_clzll (ns);
  if (k < XP_PROF_FIRST_BUCKET)
    return 0;
  k -= XP_PROF_FIRST_BUCKET;
  return k < XP_PROF_BUCKETS ? k : XP_PROF_BUCKETS - 1;
}

/* Add WAITS waits of NS in all behind an owner at SITE; the last slot
   takes the sites that find no other.  */
static void
blame (struct xp_prof_entry *e, const void *site, uint64_t waits,
       uint64_t ns)
{
  struct xp_prof_held_by *h = e->held_by;
  unsigned i = 0;
  while (i < XP_PROF_HELD_BY - 1 && h[i].site != site && h[i].waits != 0)
    i++;
  if (h[i].waits == 0)
    h[i].site = site;
  else if (h[i].site != site)
    h[i].site = NULL;
  h[i].waits += waits;
  h[i].wait_ns += ns;
}

static void
count_wait (struct xp_prof_entry *e, const void *held_by, uint64_t ns)
{
  e->contended++;
  e->wait_ns += ns;
  if (ns > e->wait_max)
    e->wait_max = ns;
  e->buckets[bucket_of (ns)]++;
  if (held_by != NULL)
    blame (e, held_by, 1, ns);
  if (e->stack != NULL)
    e->stack->wait_ns += ns;
}

/* SITE, or when it lies in xpthread (C11's mtx_lock calls
   pthread_mutex_lock), the program's call: the first frame outside,
   found without a lock.  */
static const void *
caller_site (const void *site)
{
  if (!xp_objects_own (site))
    return site;
  struct xp_stack stack;
  xp_objects_capture_stack (&stack);
  return stack.depth != 0 ? stack.pc[0] : site;
}

static inline struct cached_entry *
cache_set (const struct prof_thread *t, const void *lock, const void *site)
{
  uint64_t h = ((uintptr_t) lock ^ (uintptr_t) site) * 0x9e3779b97f4a7c15u;
  return &t->cache[(h >> 56) * CACHE_WAYS];
}
_Static_assert (CACHE_SETS == 256, "cache_set takes 8 bits");

static inline bool
cache_hit (const struct cached_entry *c, const void *lock,
           enum xp_prof_kind kind, const void *site)
{
  return c->lock == lock && c->site == site && c->kind == kind
         && c->entry->class_id == xp_load_relaxed (&c->record->class_id);
}

/* T's cached entry of LOCK, of KIND, taken at SITE, now first in its
   set, or NULL: the lock must still be the one it was
   (xp_prof_lock_init resets the class).  */
static inline struct cached_entry *
cached (const struct prof_thread *t, const void *lock, enum xp_prof_kind kind,
        const void *site)
{
  if (t->cache == NULL)
    return NULL;
  struct cached_entry *set = cache_set (t, lock, site);
  if (cache_hit (&set[0], lock, kind, site))
    return &set[0];
  if (!cache_hit (&set[1], lock, kind, site))
    return NULL;
  struct cached_entry used = set[1];
  set[1] = set[0];
  set[0] = used;
  return &set[0];
}
_Static_assert (CACHE_WAYS == 2, "cached looks at two ways");

/* The first way of the set takes the new entry, the second the one it
   held.  */
static void
cache_entry (struct prof_thread *t, const void *lock, enum xp_prof_kind kind,
             const void *site, struct xp_prof_lock *r, struct xp_prof_entry *e)
{
  size_t size = CACHE_SETS * CACHE_WAYS * sizeof *t->cache;
  if (t->cache == NULL && (t->cache = thread_alloc (t, size)) == NULL)
    return;
  struct cached_entry *set = cache_set (t, lock, site);
  set[1] = set[0];
  set[0] = (struct cached_entry) { lock, site, kind, r, e };
}

/* The record and entry of LOCK for the calling thread T; NULL when it is
   not profiled (and !CONTENDED) or a table is full.  */
static struct xp_prof_entry *
entry_for (struct prof_thread *t, const void *lock, enum xp_prof_kind kind,
           const void *site, bool contended, struct xp_prof_lock **record)
{
  struct cached_entry *c = cached (t, lock, kind, site);
  if (c != NULL)
    {
      *record = c->record;
      return c->entry;
    }
  struct xp_prof_lock *r = record_of (lock, contended);
  if (r == NULL)
    return NULL;
  const void *program_site = caller_site (site);
  uint32_t id = xp_load_acquire (&r->class_id);
  if (id == 0 && (!contended || (id = classify (r, program_site)) == 0))
    return NULL;
  struct xp_prof_entry *e = entry_of (t, id, kind, program_site);
  if (e != NULL && program_site == site)
    cache_entry (t, lock, kind, site, r, e);
  *record = r;
  return e;
}

/* Begin W; TIMED: read the clock now.  */
static void
wait_begin (struct xp_prof_wait *w, const void *lock, enum xp_prof_kind kind,
            const void *site, bool timed)
{
  w->lock = NULL;
  w->owner = XP_PROF_OWNER_UNKNOWN;
  w->start = w->asleep = w->woke = 0;
  w->rounds = 0;
  struct prof_thread *t;
  if (!xp_prof_active () || (t = enter ()) == NULL)
    return;
  w->entry = entry_for (t, lock, kind, site, true, &w->lock);
  if (w->entry != NULL)
    {
      w->held_by = xp_load_relaxed (&w->lock->holder_site);
      if (w->entry->contended % STACK_EVERY == 0)
        w->entry->stack = stack_here (t, w->entry->class_id);
      if (timed)
        w->start = xp_prof_now ();
    }
  else
    w->lock = NULL;
  leave (t);
}

void
xp_prof_wait_begin (struct xp_prof_wait *w, const void *lock,
                    enum xp_prof_kind kind, const void *site)
{
  wait_begin (w, lock, kind, site, true);
}

void
xp_prof_spin_wait_begin (struct xp_prof_wait *w, const void *lock,
                         const void *site)
{
  struct prof_thread *t = prof_self;
  bool timed = t == NULL || --t->spin_countdown == 0;
  if (timed && t != NULL)
    t->spin_countdown = next_countdown (t, XP_PROF_SPIN_TIMED);
  wait_begin (w, lock, XP_PROF_MUTEX, site, timed);
}

void
xp_prof_spin_ended (struct xp_prof_wait *w, unsigned rounds, bool sleeps)
{
  /* A wait timed whole that sleeps tells nothing of the pace: its rounds
     are dropped.  */
  w->rounds = sleeps && w->start != 0 ? 0 : rounds;
  if (sleeps && w->lock != NULL && w->start == 0)
    w->asleep = xp_prof_now ();
}

void
xp_prof_woke (struct xp_prof_wait *w)
{
  if (w->lock != NULL && (w->start != 0 || w->asleep != 0))
    w->woke = xp_prof_now ();
}

/* A round's time in fractions of a nanosecond: the pace is divided out
   when it is learnt, 1 wait in XP_PROF_SPIN_TIMED, so that the others
   estimate theirs, inside their critical sections, with no division.  */
#define PACE_SHIFT 10

/* A spin of ROUNDS at T's pace, a round more for the looks around it;
   0 until T has learnt one.  */
static uint64_t
spin_estimate (const struct prof_thread *t, unsigned rounds)
{
  return ((rounds + 1ull) * t->spin_pace) >> PACE_SHIFT;
}

/* A spin wait timed whole (NS, ROUNDS) adds to T's sums of time and
   rounds, in which older spins fade by an eighth at each.  A pace of
   sums, not an average of paces: a spin of few rounds is mostly its
   fixed cost, which would make the rounds of long spins look slow.  A
   thread taken off its CPU mid-spin (or a vCPU its host paused) makes a
   spin look far slower than it was, never faster: such a spin is not
   learnt.  */
static void
learn_pace (struct prof_thread *t, uint64_t ns, unsigned rounds)
{
  if (t->spin_rounds != 0 && ns > 4 * spin_estimate (t, rounds) + 2000)
    return;
  t->spin_ns = t->spin_ns - t->spin_ns / 8 + ns;
  t->spin_rounds = t->spin_rounds - t->spin_rounds / 8 + rounds + 1ull;
  t->spin_pace = (t->spin_ns << PACE_SHIFT) / t->spin_rounds;
}

/* How long W waited, now that it ended: until its last wake, if it
   slept; a sleeper that found the lock free at once ended its wait as it
   began to sleep.  */
static uint64_t
wait_ns (struct prof_thread *t, const struct xp_prof_wait *w)
{
  if (w->start != 0)
    {
      uint64_t ns = (w->woke != 0 ? w->woke : xp_prof_now ()) - w->start;
      if (w->rounds != 0)
        learn_pace (t, ns, w->rounds);
      return ns;
    }
  uint64_t spun = spin_estimate (t, w->rounds);
  if (w->asleep == 0)
    return spun;
  return (w->woke != 0 ? w->woke : w->asleep) - w->asleep + spun;
}

void
xp_prof_wait_end (struct xp_prof_wait *w, bool acquired)
{
  struct prof_thread *t;
  if (w->lock == NULL || (t = enter ()) == NULL)
    return;
  count_wait (w->entry, w->held_by, wait_ns (t, w));
  if (acquired)
    count_acquisition (t, w->lock, w->entry, w->entry->kind, w->owner);
  leave (t);
}

static __attribute__ ((noinline)) void
acquired_looked_up (const void *lock, enum xp_prof_kind kind,
                    const void *site, enum xp_prof_owner owner)
{
  struct prof_thread *t;
  if (!xp_prof_active () || (t = enter ()) == NULL)
    return;
  struct xp_prof_lock *r;
  struct xp_prof_entry *e = entry_for (t, lock, kind, site, false, &r);
  if (e != NULL)
    count_acquisition (t, r, e, kind, owner);
  leave (t);
}

/* A profiled lock is taken again at a site where the thread counted it
   before, most of the time: then no lookup, and no entering (a lock the
   profiler takes inside never has an entry).  A thread has its state
   only while the profiler runs.  */
static inline __attribute__ ((always_inline)) void
acquired (const void *lock, enum xp_prof_kind kind, const void *site,
          enum xp_prof_owner owner)
{
  struct prof_thread *t = prof_self;
  struct cached_entry *c;
  if (xp_likely (t != NULL && !t->inside
                 && (c = cached (t, lock, kind, site)) != NULL))
    count_acquisition (t, c->record, c->entry, kind, owner);
  else
    acquired_looked_up (lock, kind, site, owner);
}

void
xp_prof_acquired (const void *lock, enum xp_prof_kind kind, const void *site,
                  enum xp_prof_owner owner)
{
  acquired (lock, kind, site, owner);
}

/* The thread takes again, where it took it last, the mutex it counted
   last, and it was its owner in between (its owner word says so): the
   entry is the same, and so is the holder's site, which only the
   mutex's acquisitions write.  A mutex's initialisation clears its
   owner word, so that a lock initialised again is never seen kept.  */
static inline void
mutex_acquired_again (struct prof_thread *t, const void *lock)
{
  struct xp_prof_entry *e = t->last.entry;
  e->acquisitions++;
  if (xp_unlikely (--t->hold_countdown == 0) || e->holds_long)
    time_hold (t, lock, e);
}

/* A mutex's acquisition, counted as any lock's, with the kind's tests
   folded away.  */
static __attribute__ ((noinline)) int
mutex_acquired (const void *lock, const void *site, enum xp_prof_owner owner)
{
  struct prof_thread *t = prof_self;
  struct cached_entry *c;
  if (xp_likely (t != NULL && !t->inside
                 && (c = cached (t, lock, XP_PROF_MUTEX, site)) != NULL))
    {
      count_acquisition (t, c->record, c->entry, XP_PROF_MUTEX, owner);
      t->last = (struct last_mutex) { lock, site, c->entry };
    }
  else
    acquired_looked_up (lock, XP_PROF_MUTEX, site, owner);
  return 0;
}

/* Inside the critical section of a mutex taken again and again: where
   it is the one the thread counted last, the shortest count.  */
int
xp_prof_mutex_acquired (const void *lock, const void *site,
                        enum xp_prof_owner owner)
{
  struct prof_thread *t = prof_self;
  if (xp_likely (t != NULL && owner == XP_PROF_OWNER_KEPT
                 && t->last.lock == lock && t->last.site == site
                 && !t->inside))
    {
      mutex_acquired_again (t, lock);
      return 0;
    }
  return mutex_acquired (lock, site, owner);
}

void
xp_prof_busy (const void *lock, enum xp_prof_kind kind, const void *site)
{
  struct prof_thread *t;
  if (!xp_prof_active () || (t = enter ()) == NULL)
    return;
  struct xp_prof_lock *r;
  struct xp_prof_entry *e = entry_for (t, lock, kind, site, true, &r);
  if (e != NULL)
    e->contended++;
  leave (t);
}

/* The calling thread's timed holds: the entries they count and when they
   began, the count in the thread's own variable, which a release reads
   inline.  A thread's state holds none when it passes to a new thread.  */
__thread unsigned xp_prof_holds_timed
  __attribute__ ((tls_model ("initial-exec")));

void
xp_prof_timed_release (const void *lock)
{
  struct prof_thread *t = prof_self;
  for (unsigned i = xp_prof_holds_timed; i-- > 0;)
    if (t->timed[i].lock == lock)
      {
        struct xp_prof_entry *e = t->timed[i].entry;
        uint64_t ns = xp_prof_now () - t->timed[i].start;
        e->hold_ns += ns;
        e->hold_samples++;
        if (ns > e->hold_max)
          e->hold_max = ns;
        e->holds_long = e->hold_ns >= LONG_HOLD_NS * e->hold_samples;
        t->timed[i] = t->timed[--xp_prof_holds_timed];
        return;
      }
}

void
xp_prof_lock_init (const void *lock, const void *site)
{
  struct prof_thread *t;
  if (!xp_prof_active () || (t = enter ()) == NULL)
    return;
  struct xp_prof_lock *r = record_of (lock, true);
  if (r != NULL)
    {
      r->init_site = xp_objects_program_site (site);
      xp_store_release (&r->class_id, 0);
      r->last_owner = NULL;
    }
  leave (t);
}

void
xp_prof_signalled (const void *cond, const void *site, bool broadcast,
                   bool woke)
{
  struct prof_thread *t;
  if (!xp_prof_active () || (t = enter ()) == NULL)
    return;
  struct xp_prof_lock *r;
  struct xp_prof_entry *e = entry_for (t, cond, XP_PROF_COND, site, true, &r);
  if (e != NULL)
    {
      if (broadcast)
        e->broadcasts++;
      else
        e->signals++;
      if (!woke)
        e->signals_no_waiter++;
    }
  leave (t);
}

/* --- snapshots ------------------------------------------------------------- */

struct merge
{
  struct xp_prof_snapshot *s;
  size_t entries_max, stacks_max;
  void **index;             /* merged entries and stacks */
  size_t mask;
};

static void
add_counts (struct xp_prof_entry *to, const struct xp_prof_entry *from)
{
  to->acquisitions += xp_load_relaxed (&from->acquisitions);
  to->contended += xp_load_relaxed (&from->contended);
  to->owner_changes += xp_load_relaxed (&from->owner_changes);
  to->wait_ns += xp_load_relaxed (&from->wait_ns);
  uint64_t m = xp_load_relaxed (&from->wait_max);
  to->wait_max = m > to->wait_max ? m : to->wait_max;
  to->hold_ns += xp_load_relaxed (&from->hold_ns);
  to->hold_samples += xp_load_relaxed (&from->hold_samples);
  m = xp_load_relaxed (&from->hold_max);
  to->hold_max = m > to->hold_max ? m : to->hold_max;
  to->signals += xp_load_relaxed (&from->signals);
  to->broadcasts += xp_load_relaxed (&from->broadcasts);
  to->signals_no_waiter += xp_load_relaxed (&from->signals_no_waiter);
  for (unsigned i = 0; i < XP_PROF_BUCKETS; i++)
    to->buckets[i] += xp_load_relaxed (&from->buckets[i]);
  for (unsigned i = 0; i < XP_PROF_HELD_BY; i++)
    {
      uint64_t waits = xp_load_relaxed (&from->held_by[i].waits);
      if (waits != 0)
        blame (to, xp_load_relaxed (&from->held_by[i].site), waits,
               xp_load_relaxed (&from->held_by[i].wait_ns));
    }
}

static void **
merged_slot (struct merge *m, uint64_t hash, item_match match,
             const void *key)
{
  for (size_t i = hash & m->mask;; i = (i + 1) & m->mask)
    if (m->index[i] == NULL || match (m->index[i], key))
      return &m->index[i];
}

static void
merge_entry (struct merge *m, const struct xp_prof_entry *e)
{
  struct entry_key k = { e->class_id, e->kind, e->site };
  void **slot = merged_slot (m, entry_hash (&k), entry_matches, &k);
  if (*slot == NULL)
    {
      if (m->s->entries_n == m->entries_max)
        return;
      struct xp_prof_entry *to = &m->s->entries[m->s->entries_n++];
      to->class_id = k.class_id;
      to->kind = k.kind;
      to->site = k.site;
      *slot = to;
    }
  add_counts (*slot, e);
}

static void
merge_stack (struct merge *m, const struct xp_prof_stack *st)
{
  struct stack_key k = { st->class_id, st->frames };
  void **slot = merged_slot (m, st->hash, stack_matches, &k);
  if (*slot == NULL)
    {
      if (m->s->stacks_n == m->stacks_max)
        return;
      struct xp_prof_stack *to = &m->s->stacks[m->s->stacks_n++];
      to->hash = st->hash;
      to->class_id = st->class_id;
      to->frames = st->frames;
      *slot = to;
    }
  ((struct xp_prof_stack *) *slot)->wait_ns += xp_load_relaxed (&st->wait_ns);
}

/* Under the profiler's lock: how many entries and stacks there are.  */
static void
count_items (size_t *entries, size_t *stacks)
{
  *entries = *stacks = 0;
  for (struct prof_thread *t = all_threads; t != NULL; t = t->next)
    {
      for (struct xp_prof_entry *e = xp_load_acquire (&t->entries); e != NULL;
           e = e->next)
        ++*entries;
      for (struct xp_prof_stack *s = xp_load_acquire (&t->stacks); s != NULL;
           s = s->next)
        ++*stacks;
    }
}

static bool
merge_alloc (struct merge *m)
{
  struct xp_prof_snapshot *s = m->s;
  size_t n = 16;
  while (n < 2 * (m->entries_max + m->stacks_max))
    n <<= 1;
  m->mask = n - 1;
  m->index = xp_prof_map (n * sizeof *m->index);
  s->entries = xp_prof_map ((m->entries_max + 1) * sizeof *s->entries);
  s->stacks = xp_prof_map ((m->stacks_max + 1) * sizeof *s->stacks);
  s->classes = xp_prof_map ((size_t) s->classes_n * sizeof *s->classes);
  return m->index != NULL && s->entries != NULL && s->stacks != NULL
         && s->classes != NULL;
}

bool
xp_prof_snapshot_take (struct xp_prof_snapshot *s)
{
  memset (s, 0, sizeof *s);
  struct merge m = { .s = s };
  xp_lock (&prof_lock);
  count_items (&m.entries_max, &m.stacks_max);
  s->classes_n = classes_n;
  bool ok = merge_alloc (&m);
  if (ok)
    {
      memcpy (s->classes, classes, (size_t) classes_n * sizeof *classes);
      for (struct prof_thread *t = all_threads; t != NULL; t = t->next)
        {
          for (struct xp_prof_entry *e = xp_load_acquire (&t->entries);
               e != NULL; e = e->next)
            merge_entry (&m, e);
          for (struct xp_prof_stack *st = xp_load_acquire (&t->stacks);
               st != NULL; st = st->next)
            merge_stack (&m, st);
        }
    }
  s->overflow.locks = xp_load_relaxed (&overflow.locks);
  s->overflow.entries = xp_load_relaxed (&overflow.entries);
  s->overflow.stacks = xp_load_relaxed (&overflow.stacks);
  xp_unlock (&prof_lock);
  s->elapsed_ns = xp_prof_now () - start_ns;
  s->hold_sampling = hold_sampling;
  xp_prof_unmap (m.index, (m.mask + 1) * sizeof *m.index);
  s->entries_room = m.entries_max;
  s->stacks_room = m.stacks_max;
  if (!ok)
    xp_prof_snapshot_free (s);
  return ok;
}

void
xp_prof_snapshot_free (struct xp_prof_snapshot *s)
{
  xp_prof_unmap (s->entries, (s->entries_room + 1) * sizeof *s->entries);
  xp_prof_unmap (s->stacks, (s->stacks_room + 1) * sizeof *s->stacks);
  xp_prof_unmap (s->classes, (size_t) s->classes_n * sizeof *s->classes);
  memset (s, 0, sizeof *s);
}

/* --- fork ------------------------------------------------------------------ */

static void
zero_counts (struct prof_thread *t)
{
  for (struct xp_prof_entry *e = t->entries; e != NULL; e = e->next)
    {
      struct xp_prof_entry *next = e->next;
      struct entry_key k = { e->class_id, e->kind, e->site };
      memset (e, 0, sizeof *e);
      e->next = next;
      e->class_id = k.class_id;
      e->kind = k.kind;
      e->site = k.site;
    }
  for (struct xp_prof_stack *s = t->stacks; s != NULL; s = s->next)
    s->wait_ns = 0;
}

/* In the child of a fork, with the fork locks held by the forking
   thread, the only one: its counts start from zero, and the states of
   the parent's other threads are free for the child's.  */
void
xp_prof_after_fork_child (void)
{
  if (!xp_prof_active ())
    return;
  free_threads = NULL;
  for (struct prof_thread *t = all_threads; t != NULL; t = t->next)
    {
      zero_counts (t);
      t->inside = false;
      if (t != prof_self)
        {
          t->next_free = free_threads;
          free_threads = t;
        }
    }
  xp_prof_holds_timed = 0;
  memset (&overflow, 0, sizeof overflow);
  start_ns = xp_prof_now ();
}

bool
xp_prof_tables_init (unsigned sampling, long max_locks)
{
  hold_sampling = sampling;
  start_ns = xp_prof_now ();
  classes = xp_prof_map (((size_t) max_locks + 2) * sizeof *classes);
  return classes != NULL && records_init (max_locks);
}
