/* Per-CPU reader counts for read-write locks; see reader-slots.c.  */
#ifndef XP_SYNC_READER_SLOTS_H
#define XP_SYNC_READER_SLOTS_H

#include "common.h"
#include "compat.h"

/* One row per CPU (CPUs beyond XP_SLOT_ROWS share rows), one column per
   lock identity (identities beyond XP_SLOT_COLS share columns).  A row
   set of a lock fits the 32-bit mask the lock keeps.  */
#define XP_SLOT_ROWS 32
#define XP_SLOT_COLS 64

/* A slot: the identity of the lock whose readers it counts in the high
   half; then a count of the readers that entered through it (modulo
   2^16), for the writers' judgement of whether the slots pay; then the
   number of readers inside it.  */
extern uint64_t xp_reader_slots[XP_SLOT_ROWS][XP_SLOT_COLS] XP_HIDDEN;

/* A fresh lock identity, never 0; 0 once all 2^32 - 1 are spent, and
   from then on locks count their readers in the lock word only.  */
unsigned xp_slots_new_id (void) XP_HIDDEN;

/* The row of the CPU the caller runs on, or -1 when that is unknown.  */
static inline int
xp_slots_row (void)
{
  int cpu = xp_compat_current_cpu ();
  return cpu < 0 ? -1 : cpu % XP_SLOT_ROWS;
}

static inline uint64_t *
xp_slot (unsigned id, int row)
{
  return &xp_reader_slots[row][id % XP_SLOT_COLS];
}

static inline unsigned
xp_slot_owner (uint64_t slot)
{
  return (unsigned) (slot >> 32);
}

static inline unsigned
xp_slot_entries (uint64_t slot)
{
  return (unsigned) (slot >> 16) & 0xffff;
}

static inline unsigned
xp_slot_count (uint64_t slot)
{
  return (unsigned) slot & 0xffff;
}

/* Count one reader of lock id in the slot of row: the slot must be the
   lock's or hold no reader.  False when another lock's readers hold it or
   it holds 2^16 - 1 already.  The increment is sequentially consistent:
   the caller looks for a writer after it.  */
static inline bool
xp_slots_enter (unsigned id, int row)
{
  uint64_t *slot = xp_slot (id, row);
  uint64_t old = xp_load_relaxed (slot);
  for (;;)
    {
      unsigned count = xp_slot_count (old);
      if ((count != 0 && xp_slot_owner (old) != id) || count == 0xffff)
        return false;
      unsigned entries = (xp_slot_entries (old) + 1) & 0xffff;
      uint64_t desired
        = ((uint64_t) id << 32) | entries << 16 | (count + 1);
      if (xp_cas_seq_cst (slot, &old, desired))
        return true;
    }
}

/* Take one reader of lock id out of the slot of row, if it counts any.
   *drained is set when that was the slot's last reader.  */
static inline bool
xp_slots_leave_row (unsigned id, int row, bool *drained)
{
  uint64_t *slot = xp_slot (id, row);
  uint64_t old = xp_load_relaxed (slot);
  while (xp_slot_owner (old) == id && xp_slot_count (old) != 0)
    if (xp_cas_seq_cst (slot, &old, old - 1))
      {
        *drained = xp_slot_count (old) == 1;
        return true;
      }
  return false;
}

/* Take one reader of lock id out of any slot of the rows in mask, the
   row first (if not negative) first.  False when no slot counts one.  */
bool xp_slots_leave (unsigned id, unsigned mask, int first, bool *drained)
  XP_HIDDEN;

/* True when no slot of the rows in mask counts a reader of lock id; the
   loads are sequentially consistent, for the writer that has just set
   its bit in the lock word.  */
bool xp_slots_empty (unsigned id, unsigned mask) XP_HIDDEN;

/* The readers that entered the slots of the rows in mask of lock id,
   modulo 2^16: the difference between two calls counts those between.  */
unsigned xp_slots_entries (unsigned id, unsigned mask) XP_HIDDEN;

#endif
