/* Memory for the lock debugging tables.  It comes straight from the
   kernel: lockdep runs inside pthread_mutex_lock, maybe inside an
   allocator that locks, so it can never call malloc.  Small pieces are
   cut from shared chunks and never given back; a big block (a map's
   slots, a search's stack) has a mapping of its own, unmapped when it
   is replaced by a bigger one.  Lockdep and the profiler may both take
   memory at once: the chunks are under a lock of their own, a leaf.  */
#define _GNU_SOURCE
#include "arena.h"
#include "fork-locks.h"
#include <string.h>
#include <sys/mman.h>

#define CHUNK_SIZE ((size_t) 4 << 20)

static char *chunk_next;
static size_t chunk_left;
static size_t in_use;
static XP_FORK_LOCK (arena, arena_lock);

static void *
map_pages (size_t size)
{
  void *p = mmap (NULL, size, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

static size_t
rounded (size_t size)
{
  return (size + 15) & ~(size_t) 15;
}

static bool
own_block (size_t size)
{
  return size > CHUNK_SIZE / 4;
}

/* SIZE bytes at a multiple of ALIGN (16 or more, a power of two): the
   gap left to reach it stays unused.  */
static void *
alloc_locked (size_t size, size_t align)
{
  size = rounded (size);
  if (own_block (size))
    {
      void *p = map_pages (size);
      in_use += p != NULL ? size : 0;
      return p;
    }
  size_t gap = -(uintptr_t) chunk_next & (align - 1);
  if (size + gap > chunk_left)
    {
      char *chunk = map_pages (CHUNK_SIZE);
      if (chunk == NULL)
        return NULL;
      chunk_next = chunk;
      chunk_left = CHUNK_SIZE;
      gap = 0;
    }
  void *p = chunk_next + gap;
  chunk_next += gap + size;
  chunk_left -= gap + size;
  in_use += size;
  return p;
}

static void *
alloc_aligned (size_t size, size_t align)
{
  xp_lock (&arena_lock);
  void *p = alloc_locked (size, align);
  xp_unlock (&arena_lock);
  return p;
}

void *
xp_arena_alloc (size_t size)
{
  return alloc_aligned (size, 16);
}

void *
xp_arena_alloc_lines (size_t size)
{
  return alloc_aligned ((size + XP_CACHE_LINE - 1) & ~(XP_CACHE_LINE - 1),
                        XP_CACHE_LINE);
}

void
xp_arena_free (void *p, size_t size)
{
  size = rounded (size);
  if (p == NULL || !own_block (size))
    return;
  munmap (p, size);
  xp_lock (&arena_lock);
  in_use -= size;
  xp_unlock (&arena_lock);
}

size_t
xp_arena_in_use (void)
{
  return in_use;
}

struct xp_addr_slot
{
  uintptr_t key;          /* 0: empty; TOMBSTONE: removed */
  uint32_t value;
};

#define TOMBSTONE ((uintptr_t) 1)
#define FIRST_CAPACITY 1024

static size_t
slot_of (uintptr_t key, size_t capacity)
{
  uint64_t h = (uint64_t) key * 0x9e3779b97f4a7c15u;
  return (size_t) (h >> 32) & (capacity - 1);
}

static size_t
next_slot (size_t i, size_t capacity)
{
  return (i + 1) & (capacity - 1);
}

uint32_t
xp_addr_map_get (const struct xp_addr_map *map, uintptr_t key)
{
  if (map->capacity == 0)
    return 0;
  for (size_t i = slot_of (key, map->capacity);;
       i = next_slot (i, map->capacity))
    {
      const struct xp_addr_slot *s = &map->slots[i];
      if (s->key == key)
        return s->value;
      if (s->key == 0)
        return 0;
    }
}

/* Place KEY in SLOTS, which hold no entry for it and have room.  */
static void
place (struct xp_addr_slot *slots, size_t capacity, uintptr_t key,
       uint32_t value)
{
  size_t i = slot_of (key, capacity);
  while (slots[i].key > TOMBSTONE)
    i = next_slot (i, capacity);
  slots[i].key = key;
  slots[i].value = value;
}

/* Keep at least a quarter of the slots empty, so that probes end.  */
static bool
make_room (struct xp_addr_map *map)
{
  if (map->capacity != 0 && (map->used + 1) * 4 <= map->capacity * 3)
    return true;
  size_t capacity = map->capacity == 0 ? FIRST_CAPACITY
                    : map->live * 2 >= map->capacity ? map->capacity * 2
                    : map->capacity;
  struct xp_addr_slot *slots = xp_arena_alloc (capacity * sizeof *slots);
  if (slots == NULL)
    return false;
  for (size_t i = 0; i < map->capacity; i++)
    if (map->slots[i].key > TOMBSTONE)
      place (slots, capacity, map->slots[i].key, map->slots[i].value);
  xp_arena_free (map->slots, map->capacity * sizeof *slots);
  map->slots = slots;
  map->capacity = capacity;
  map->used = map->live;
  return true;
}

bool
xp_addr_map_put (struct xp_addr_map *map, uintptr_t key, uint32_t value)
{
  if (map->capacity != 0)
    for (size_t i = slot_of (key, map->capacity);;
         i = next_slot (i, map->capacity))
      {
        struct xp_addr_slot *s = &map->slots[i];
        if (s->key == key)
          {
            s->value = value;
            return true;
          }
        if (s->key == 0)
          break;
      }
  if (!make_room (map))
    return false;
  place (map->slots, map->capacity, key, value);
  map->used++;
  map->live++;
  return true;
}

void
xp_addr_map_remove (struct xp_addr_map *map, uintptr_t key)
{
  if (map->capacity == 0)
    return;
  for (size_t i = slot_of (key, map->capacity);;
       i = next_slot (i, map->capacity))
    {
      struct xp_addr_slot *s = &map->slots[i];
      if (s->key == key)
        {
          s->key = TOMBSTONE;
          map->live--;
          return;
        }
      if (s->key == 0)
        return;
    }
}
