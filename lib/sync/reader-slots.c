/* Per-CPU reader counts ("slots") for read-write locks.

   Why: when readers on two CPUs share a lock, a count in the lock word
   makes every read lock and unlock an atomic operation on one cache line
   that both CPUs write, and the line travels between them twice per
   critical section.  Measured here (bench-rwlock, 99% reads, 2 cores),
   one CPU alone did 7e7 operations per second, two CPUs together about
   3e7.  Counting each CPU's readers in a word of its own keeps those
   lines where they are; only a writer reads them all.

   The table has XP_SLOT_ROWS rows of XP_SLOT_COLS 64-bit slots, in the
   library's data (16 KiB of zero pages until used).  A lock that uses it
   has an identity: a 32-bit number handed out once per lock (never
   reused, so a slot left behind by a destroyed lock is only ever taken
   over, never mistaken for a live one).  Its readers on CPU c count
   themselves in slot [c % XP_SLOT_ROWS][id % XP_SLOT_COLS], which holds
   the identity beside the count, so two locks in one column never mix
   their readers: a reader finding another lock's readers in its slot
   counts itself in the lock word instead.  A slot with no reader belongs
   to whichever lock comes next.  The lock keeps the set of rows its
   readers used (a 32-bit mask, bits never cleared), so a writer reads
   only those.

   Counts are interchangeable: any reader may leave through any slot of
   its lock that counts one, or through the lock word.  A thread that has
   moved to another CPU therefore leaves through the old row's slot, and
   a read lock taken in one thread may be released by another, as glibc
   allows.  How readers and writers agree is in rwlock.c.  */
#include "reader-slots.h"

uint64_t xp_reader_slots[XP_SLOT_ROWS][XP_SLOT_COLS]
  __attribute__ ((aligned (64)));

static uint64_t next_id = 1;

unsigned
xp_slots_new_id (void)
{
  uint64_t id = xp_fetch_add (&next_id, 1);
  return id > UINT32_MAX ? 0 : (unsigned) id;
}

bool
xp_slots_leave (unsigned id, unsigned mask, int first, bool *drained)
{
  if (first >= 0 && xp_slots_leave_row (id, first, drained))
    return true;
  for (unsigned rows = mask; rows != 0; rows &= rows - 1)
    {
      int row = __builtin_ctz (rows);
      if (row != first && xp_slots_leave_row (id, row, drained))
        return true;
    }
  return false;
}

bool
xp_slots_empty (unsigned id, unsigned mask)
{
  for (unsigned rows = mask; rows != 0; rows &= rows - 1)
    {
      uint64_t slot = xp_load_seq_cst (xp_slot (id, __builtin_ctz (rows)));
      if (xp_slot_owner (slot) == id && xp_slot_count (slot) != 0)
        return false;
    }
  return true;
}

unsigned
xp_slots_entries (unsigned id, unsigned mask)
{
  unsigned sum = 0;
  for (unsigned rows = mask; rows != 0; rows &= rows - 1)
    {
      uint64_t slot = xp_load_relaxed (xp_slot (id, __builtin_ctz (rows)));
      if (xp_slot_owner (slot) == id)
        sum += xp_slot_entries (slot);
    }
  return sum & 0xffff;
}
