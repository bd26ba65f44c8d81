/* Thread-specific data.

   Each key has a generation number, odd while the key is in use.  Creating
   or deleting a key bumps it, under key_table_lock.  A thread stores each
   value together with the generation it was stored under, so a value left
   behind by a deleted key never shows through a key that reuses the slot:
   it only counts while its generation equals the key's.  No per-thread
   cleanup is needed at pthread_key_delete, and pthread_getspecific takes
   no lock: the key's generation is one relaxed load, published with
   release order after its destructor so that a thread running
   destructors sees the destructor that belongs to the generation.

   Values live in the descriptor: keys 0-31 in tsd_first, the others in
   blocks of 32 allocated when a thread first stores a non-NULL value in
   one of them.  */
#define _GNU_SOURCE
#include "thread.h"
#include "export.h"
#include "fork-locks.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct key_entry
{
  uintptr_t seq;
  void (*destructor) (void *);
};

static struct key_entry keys[XP_KEYS_MAX];
static XP_FORK_LOCK (keys, key_table_lock);

static bool
seq_in_use (uintptr_t seq)
{
  return (seq & 1) != 0;
}

/* A slot whose generation would wrap around to 0 is retired for good:
   wrapping would make values from long ago valid again.  */
static bool
seq_can_advance (uintptr_t seq)
{
  return seq + 2 > seq;
}

int
pthread_key_create (pthread_key_t *key, void (*destructor) (void *))
{
  int err = EAGAIN;
  xp_lock (&key_table_lock);
  for (unsigned i = 0; i < XP_KEYS_MAX; i++)
    {
      uintptr_t seq = keys[i].seq;
      if (!seq_in_use (seq) && seq_can_advance (seq))
        {
          xp_store_relaxed (&keys[i].destructor, destructor);
          xp_store_release (&keys[i].seq, seq + 1);
          *key = i;
          err = 0;
          break;
        }
    }
  xp_unlock (&key_table_lock);
  return err;
}
XP_EXPORT (pthread_key_create)

extern __typeof (pthread_key_create) __pthread_key_create
  XP_ALIAS_OF (pthread_key_create);
XP_EXPORT (__pthread_key_create)

int
pthread_key_delete (pthread_key_t key)
{
  if (key >= XP_KEYS_MAX)
    return EINVAL;
  int err = EINVAL;
  xp_lock (&key_table_lock);
  uintptr_t seq = keys[key].seq;
  if (seq_in_use (seq))
    {
      xp_store_release (&keys[key].seq, seq + 1);
      err = 0;
    }
  xp_unlock (&key_table_lock);
  return err;
}
XP_EXPORT (pthread_key_delete)

/* The calling thread's slot for key, or NULL when its block is absent.  */
static inline struct xp_tsd_slot *
find_slot (struct xp_thread *self, pthread_key_t key)
{
  if (key < XP_KEYS_PER_BLOCK)
    return &self->tsd_first[key];
  struct xp_tsd_slot *block = self->tsd_blocks[key / XP_KEYS_PER_BLOCK];
  return block != NULL ? &block[key % XP_KEYS_PER_BLOCK] : NULL;
}

void *
pthread_getspecific (pthread_key_t key)
{
  if (xp_unlikely (key >= XP_KEYS_MAX))
    return NULL;
  struct xp_tsd_slot *slot = find_slot (xp_self (), key);
  if (slot == NULL || slot->seq != xp_load_relaxed (&keys[key].seq))
    return NULL;
  return slot->value;
}
XP_EXPORT (pthread_getspecific)

extern __typeof (pthread_getspecific) __pthread_getspecific
  XP_ALIAS_OF (pthread_getspecific);
XP_EXPORT (__pthread_getspecific)

static struct xp_tsd_slot *
allocate_slot (struct xp_thread *self, pthread_key_t key)
{
  struct xp_tsd_slot *block = calloc (XP_KEYS_PER_BLOCK, sizeof *block);
  if (block == NULL)
    return NULL;
  self->tsd_blocks[key / XP_KEYS_PER_BLOCK] = block;
  return &block[key % XP_KEYS_PER_BLOCK];
}

int
pthread_setspecific (pthread_key_t key, const void *value)
{
  if (key >= XP_KEYS_MAX)
    return EINVAL;
  uintptr_t seq = xp_load_relaxed (&keys[key].seq);
  if (!seq_in_use (seq))
    return EINVAL;
  struct xp_thread *self = xp_self ();
  struct xp_tsd_slot *slot = find_slot (self, key);
  if (slot == NULL)
    {
      /* An absent block already reads as NULL everywhere.  */
      if (value == NULL)
        return 0;
      slot = allocate_slot (self, key);
      if (slot == NULL)
        return ENOMEM;
    }
  slot->seq = seq;
  slot->value = (void *) value;
  if (value != NULL)
    self->tsd_used = true;
  return 0;
}
XP_EXPORT (pthread_setspecific)

extern __typeof (pthread_setspecific) __pthread_setspecific
  XP_ALIAS_OF (pthread_setspecific);
XP_EXPORT (__pthread_setspecific)

/* One POSIX destructor round over a block: each live value is cleared
   before its destructor runs, so a destructor may set a new value, which
   the next round then sees.  */
static void
destroy_block (struct xp_tsd_slot *block, pthread_key_t first_key)
{
  for (unsigned i = 0; i < XP_KEYS_PER_BLOCK; i++)
    {
      struct xp_tsd_slot *slot = &block[i];
      void *value = slot->value;
      if (value == NULL)
        continue;
      slot->value = NULL;
      struct key_entry *entry = &keys[first_key + i];
      uintptr_t seq = xp_load_acquire (&entry->seq);
      void (*destructor) (void *) = xp_load_relaxed (&entry->destructor);
      if (slot->seq == seq && seq_in_use (seq) && destructor != NULL)
        destructor (value);
    }
}

void
xp_tsd_run_destructors (struct xp_thread *self)
{
  for (int round = 0;
       round < XP_DESTRUCTOR_ITERATIONS && self->tsd_used; round++)
    {
      self->tsd_used = false;
      destroy_block (self->tsd_first, 0);
      for (unsigned b = 1; b < XP_KEY_BLOCKS; b++)
        if (self->tsd_blocks[b] != NULL)
          destroy_block (self->tsd_blocks[b], b * XP_KEYS_PER_BLOCK);
    }
}

/* A descriptor about to serve a new thread must read NULL for every key,
   including the values a destructor stored in the last round.  */
void
xp_tsd_release (struct xp_thread *t)
{
  for (unsigned b = 0; b < XP_KEY_BLOCKS; b++)
    {
      free (t->tsd_blocks[b]);
      t->tsd_blocks[b] = NULL;
    }
  memset (t->tsd_first, 0, sizeof t->tsd_first);
  t->tsd_used = false;
}
