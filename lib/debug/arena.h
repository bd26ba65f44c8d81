/* Memory for the lock debugging tables (arena.c) and the address maps
   built on it.  */
#ifndef XP_DEBUG_ARENA_H
#define XP_DEBUG_ARENA_H

#include "common.h"

/* SIZE zeroed bytes, aligned to 16, never freed; NULL when the kernel
   refuses memory.  Any thread may call.  */
void *xp_arena_alloc (size_t size) XP_HIDDEN;
/* The same on whole cache lines of its own, for state that one thread
   writes often and others must not share a line with.  */
#define XP_CACHE_LINE ((size_t) 64)
void *xp_arena_alloc_lines (size_t size) XP_HIDDEN;
/* Give back P, SIZE bytes from xp_arena_alloc: a block of its own goes
   back to the kernel, a piece of a shared chunk stays where it is.  */
void xp_arena_free (void *p, size_t size) XP_HIDDEN;
/* The bytes handed out and not given back, for the exit summary.  */
size_t xp_arena_in_use (void) XP_HIDDEN;

/* An open-addressing map from nonzero addresses to nonzero 32-bit
   values, growing as it fills; entries can be removed.  */
struct xp_addr_map
{
  struct xp_addr_slot *slots;
  size_t capacity;        /* a power of two, or 0 before the first put */
  size_t used;            /* live entries and tombstones */
  size_t live;
};

uint32_t xp_addr_map_get (const struct xp_addr_map *map, uintptr_t key)
  XP_HIDDEN;
/* False when memory ran out.  */
bool xp_addr_map_put (struct xp_addr_map *map, uintptr_t key,
                      uint32_t value) XP_HIDDEN;
void xp_addr_map_remove (struct xp_addr_map *map, uintptr_t key) XP_HIDDEN;

#endif
