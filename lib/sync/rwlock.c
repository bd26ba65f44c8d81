/* Read-write locks: reader-preferring (the default, and
   PTHREAD_RWLOCK_PREFER_WRITER_NP, which glibc also treats as
   reader-preferring) and writer-preferring
   (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), private or shared.

   Words (glibc's field names, xpthread's meaning):
     __readers         state: WRITER (bit 0) a writer holds the lock or is
                       claiming it; WRITERS_WAITING (bit 1) writers may
                       sleep; READERS_WAITING (bit 2) readers may sleep;
                       the number of readers counted here from bit 3 up,
                       with bit 31 kept clear to catch overflow
     __writers         writers' futex: a sequence number, bumped to wake
     __wrphase_futex   readers' futex: a sequence number, bumped to wake
     __writers_futex   the lock's identity in the reader slots, 0: none
     __pad3            the rows of the reader slots its readers used
     __pad4            whether readers use the slots (below, SLOTS_ON)
     __pad2            the writers' judgement of the slots (JUDGING)
     __cur_writer      tid of the writer holding the lock (EDEADLK)
     __shared          nonzero: process-shared (shared futexes)
     __flags           the kind
   All zero is an unlocked reader-preferring lock, as with glibc; the
   static initialisers only set __flags.

   Readers are counted in the state or, while a private
   reader-preferring lock has its slots on, mostly in per-CPU slots
   (reader-slots.c), so that readers on different CPUs do not write one
   cache line.  Readers that meet other readers in the state turn the
   slots on; writers that find few reads per write turn them off.  The
   readers of a lock are those of the state plus those of its slots; any
   reader may leave through any of them.  A reader may enter when no
   writer holds the lock and, for the writer-preferring kind, no writer
   waits: so a waiting writer blocks new readers.  A writer may enter when
   nobody holds the lock.

   Transitions:
   rdlock     with slots on: count one in the calling CPU's slot, then
              read the state and the mode; with WRITER there or the slots
              off, leave again (as an unlock does) and go on as without
              slots.  Without: fetch-add one reader; if the old state did
              not allow it, take the reader back out exactly as an unlock
              does, then take the slow path: spin read-only a bounded
              while, then loop { read the readers' sequence; read the
              state; if it allows a reader, enter by a slot or CAS one in;
              else CAS READERS_WAITING in and sleep on the sequence }.  A fetch-add that finds another
              reader in the state counts a meeting; enough of them give
              the lock a slot identity and turn its slots on.
   wrlock     CAS 0 -> WRITER, then claim: once the slots hold no reader,
              the lock is the writer's.  Readers see WRITER and stay out
              of the slots, so they can only drain; the writer gives them
              a spin's while, then steps back (clears WRITER, wakes the
              readers that stopped for it) and waits like a writer that
              found readers: a reader still inside may take the lock again
              recursively, which a reader-preferring lock must allow
              before any writer.  The slow path starts late (a few
              microseconds touching nothing, spin-policy.c), then is the
              readers' loop with WRITERS_WAITING and the writers'
              sequence, entering when the state and the slots hold
              nobody.  A writer that was woken from its sleep takes the
              lock with WRITERS_WAITING set, because the wake that
              reached it cleared that bit while other writers may still
              sleep.  A writer that has taken a lock with slots on
              judges them (judge_slots) and may turn them off: the slots
              are empty then, and a reader entering later sees them off
              and leaves, so while they are off no reader holds the lock
              by a slot and nobody looks at them.
   unlock     by the writer (WRITER set and __cur_writer the caller, as
              in glibc): clear WRITER and both waiting bits in one atomic
              AND; for each waiting bit that was set bump its sequence and
              wake: one writer, all readers.
              by a reader: with slots on, leave a slot of the lock that
              counts a reader, else fetch-sub one reader from the state.  When that was the
              last reader of the state, or of a slot while the other slots
              and the state hold nobody, and WRITERS_WAITING is set, CAS
              both waiting bits off and wake one writer and, if
              READERS_WAITING was set (readers held back by the writer
              preference), all readers.
              Which unlock: each thread counts the locks it holds for
              reading and for writing (a hint, kept without atomics).
              Holding some for reading and none for writing, it is a
              reader: the state's fetch-sub comes with no load before it,
              which on a contended lock would fetch the line once to read
              and again to write; a fetch-sub that finds no reader (the
              caller held none: EPERM) is undone at once.
   No wake-up is lost: a thread sleeps only after setting its waiting bit
   by a CAS that also confirmed the state blocking it, and after reading
   its sequence before that state.  Every change that can unblock it
   (WRITER cleared, the last reader leaving) is an atomic operation on
   the state ordered after that CAS, so it sees the bit, clears it, bumps
   the sequence and wakes; FUTEX_WAIT then either finds the sequence
   changed or is asleep in time to be woken.  A writer woken alone
   passes the duty on: it sets WRITERS_WAITING again before sleeping
   again, or keeps it set when it takes the lock.  A reader that clears
   a waiting bit it did not sleep on only costs a needless wake.  A timed
   wait that gives up leaves its bit set, which costs at most a needless
   wake, or, for a writer-preferring lock, holds new readers back until
   the current holder leaves.
   Slots and state meet in two store-then-load handshakes, both sides
   sequentially consistent so that at least one side sees the other:
   a reader writes its slot (and the row bit) and then reads WRITER, a
   writer sets WRITER and then reads the identity, the rows and the
   slots, so no reader enters unseen; a reader leaving a slot writes it
   and then reads WRITERS_WAITING, a writer about to sleep sets
   WRITERS_WAITING (or finds it set) and then reads the slots again, so
   either the writer sees them empty and does not sleep, or the last
   reader to leave sees the bit and wakes it.

   The USDT probes (probes.h) have glibc's names but sit on the slow
   paths only: rdlock_entry and rdlock_acquire_read around a read lock
   that could not enter at once, wrlock_entry and wrlock_acquire_write
   around such a write lock, rwlock_unlock where a release wakes
   sleepers.  */
#define _GNU_SOURCE
#include "rwlock.h"
#include "export.h"
#include "futex.h"
#include "lock-hooks.h"
#include "prof.h"
#include "probes.h"
#include "reader-slots.h"
#include "spin-policy.h"
#include "thread.h"
#include <errno.h>
#include <limits.h>
#include <string.h>

#define WRITER 1u
#define WRITERS_WAITING 2u
#define READERS_WAITING 4u
#define WAITING (WRITERS_WAITING | READERS_WAITING)
#define ONE_READER 8u
#define READER_OVERFLOW 0x80000000u
#define READERS (~(ONE_READER - 1) & ~READER_OVERFLOW)

static inline unsigned *
state (pthread_rwlock_t *rw)
{
  return &rw->__data.__readers;
}

static inline int *
writers_seq (pthread_rwlock_t *rw)
{
  return (int *) &rw->__data.__writers;
}

static inline int *
readers_seq (pthread_rwlock_t *rw)
{
  return (int *) &rw->__data.__wrphase_futex;
}

/* The lock's identity in the reader slots, 0 while it has none.  */
static inline unsigned *
slot_id (pthread_rwlock_t *rw)
{
  return &rw->__data.__writers_futex;
}

/* The rows of the reader slots its readers have used.  */
static inline unsigned *
slot_rows (pthread_rwlock_t *rw)
{
  return &rw->__data.__pad3;
}

/* Whether readers use the slots now: SLOTS_ON; the times the writers
   turned them off (STRIKES); readers that met another reader in the
   state since (MET).  */
#define SLOTS_ON 0x80000000u
#define STRIKE 0x01000000u
#define STRIKES 0x0f000000u
#define MAX_STRIKES 6
#define MET 0x00ffffffu

static inline unsigned *
slot_mode (pthread_rwlock_t *rw)
{
  return &rw->__data.__pad4;
}

/* The writers' view of the slots, changed only by the writer holding the
   lock: JUDGING once a writer saw them on; the smoothed number of
   readers per write, times 8 (READS8); the slots' entry count at the
   last write (LAST_ENTRIES).  */
#define JUDGING 0x80000000ul
#define READS8_SHIFT 16
#define READS8_MAX 0x7ffful
#define LAST_ENTRIES 0xfffful

static inline unsigned long *
slot_judgement (pthread_rwlock_t *rw)
{
  return &rw->__data.__pad2;
}

static inline bool
is_private (const pthread_rwlock_t *rw)
{
  return xp_load_relaxed (&rw->__data.__shared) == 0;
}

static inline bool
prefers_writers (const pthread_rwlock_t *rw)
{
  return xp_load_relaxed (&rw->__data.__flags)
         == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

static inline bool
admits_reader (unsigned s, bool writer_pref)
{
  return (s & WRITER) == 0 && !(writer_pref && (s & WRITERS_WAITING));
}

static inline bool
admits_writer (unsigned s)
{
  return (s & (WRITER | READERS)) == 0;
}

static int
check_timeout (clockid_t clock, const struct timespec *abstime)
{
  if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC)
    return EINVAL;
  if (abstime != NULL
      && (abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000))
    return EINVAL;
  return 0;
}

/* The one place a lock operation blocks: sleep while *seq == expected.
   Returns 0 when woken, EAGAIN when the sequence had moved or a signal
   came, ETIMEDOUT.  */
static int
sleep_on (int *seq, int expected, clockid_t clock,
          const struct timespec *abstime, bool private_)
{
  if (abstime != NULL && abstime->tv_sec < 0)
    return ETIMEDOUT;
  int err = xp_futex_wait_abs (seq, expected, clock, abstime, private_);
  if (err == -ETIMEDOUT)
    return ETIMEDOUT;
  return err == 0 ? 0 : EAGAIN;
}

static void
wake (int *seq, int count, bool private_)
{
  xp_fetch_add (seq, 1);
  xp_futex_wake (seq, count, private_);
}

static void
wake_writer (pthread_rwlock_t *rw)
{
  wake (writers_seq (rw), 1, is_private (rw));
}

static void
wake_readers (pthread_rwlock_t *rw)
{
  wake (readers_seq (rw), INT_MAX, is_private (rw));
}

/* The last reader left (new_state): hand the lock to a waiting writer,
   and to readers the writer preference held back.  */
static void
after_last_reader (pthread_rwlock_t *rw, unsigned s)
{
  while (admits_writer (s) && (s & WRITERS_WAITING))
    if (xp_cas (state (rw), &s, s & ~WAITING))
      {
        XP_PROBE (rwlock_unlock, rw);
        wake_writer (rw);
        if (s & READERS_WAITING)
          wake_readers (rw);
        return;
      }
}

/* No reader is left in the slots of the lock with identity id.  */
static bool
slots_empty (pthread_rwlock_t *rw, unsigned id)
{
  return id == 0 || xp_slots_empty (id, xp_load_seq_cst (slot_rows (rw)));
}

/* A slot of the lock lost its last reader: if a writer sleeps and no
   reader is left anywhere, wake it.  */
static void
after_slot_drained (pthread_rwlock_t *rw, unsigned id)
{
  unsigned s = xp_load_seq_cst (state (rw));
  if (xp_unlikely (s & WRITERS_WAITING) && admits_writer (s)
      && slots_empty (rw, id))
    after_last_reader (rw, s);
}

/* Take a reader out of a slot of the lock, row's first; false when no
   slot counts one.  */
static bool
leave_slot (pthread_rwlock_t *rw, unsigned id, int row)
{
  bool drained = false;
  if (!xp_slots_leave (id, xp_load_seq_cst (slot_rows (rw)), row, &drained))
    return false;
  if (drained)
    after_slot_drained (rw, id);
  return true;
}

static inline void
release_reader (pthread_rwlock_t *rw)
{
  unsigned s = xp_fetch_add (state (rw), -ONE_READER) - ONE_READER;
  if (xp_unlikely ((s & (READERS | WRITER)) == 0 && (s & WRITERS_WAITING)))
    after_last_reader (rw, s);
}

/* A reader's unlock without looking first; EPERM if there was no reader
   to take out.  */
static inline int
release_reader_unchecked (pthread_rwlock_t *rw)
{
  unsigned old = xp_fetch_add (state (rw), -ONE_READER);
  if (xp_unlikely ((old & READERS) == 0))
    {
      /* A writer may have seen the borrowed reader and gone to sleep.  */
      unsigned s = xp_fetch_add (state (rw), ONE_READER) + ONE_READER;
      if ((s & (READERS | WRITER)) == 0 && (s & WRITERS_WAITING))
        after_last_reader (rw, s);
      return EPERM;
    }
  unsigned s = old - ONE_READER;
  if (xp_unlikely ((s & (READERS | WRITER)) == 0 && (s & WRITERS_WAITING)))
    after_last_reader (rw, s);
  return 0;
}

/* The lock's identity while its readers use the slots, else 0.  Only a
   writer that holds the lock, the slots empty, turns them off, and a
   reader that enters a slot looks again afterwards and leaves if they are
   off, so no reader holds the lock by a slot while they are off: then
   neither readers leaving nor writers entering need look at the slots. */
static inline unsigned
slots_in_use (pthread_rwlock_t *rw)
{
  if (xp_likely (!(xp_load_seq_cst (slot_mode (rw)) & SLOTS_ON)))
    return 0;
  return xp_load_seq_cst (slot_id (rw));
}

/* A reader's unlock: through a slot of the lock with identity id (0:
   none) that counts a reader, else through the lock word; EPERM when
   neither counts one.  */
static inline int
release_read_by (pthread_rwlock_t *rw, unsigned id)
{
  if (id != 0 && leave_slot (rw, id, xp_slots_row ()))
    return 0;
  return release_reader_unchecked (rw);
}

static inline int
release_read (pthread_rwlock_t *rw)
{
  return release_read_by (rw, slots_in_use (rw));
}

/* Take a read lock through the calling CPU's slot; false when the lock
   must be counted in the lock word or a writer is in (or entering).  */
static inline bool
read_via_slot (pthread_rwlock_t *rw, unsigned id)
{
  int row = xp_slots_row ();
  if (row < 0 || !xp_slots_enter (id, row))
    return false;
  unsigned bit = 1u << row;
  if (xp_unlikely (!(xp_load_seq_cst (slot_rows (rw)) & bit)))
    xp_fetch_or_seq_cst (slot_rows (rw), bit);
  if (xp_likely (!(xp_load_seq_cst (state (rw)) & WRITER)
                 && (xp_load_seq_cst (slot_mode (rw)) & SLOTS_ON)))
    return true;
  /* Our count may have gone with another reader's unlock, whose own
     count then stays for us to take: wherever it is.  The slots may be
     off by now, which only says no reader holds the lock by them.  */
  release_read_by (rw, id);
  return false;
}

/* Readers met in the lock word, enough of them since the slots were
   last turned off (64, doubling with each time they were): have readers
   count themselves in the slots from now on, if this kind of lock may
   (readers must not pass a waiting writer of the writer-preferring kind,
   which the slots cannot see, and they are process-local).  */
static void
readers_met (pthread_rwlock_t *rw)
{
  if (!is_private (rw) || prefers_writers (rw) || xp_slots_row () < 0)
    return;
  unsigned mode = xp_load_relaxed (slot_mode (rw));
  if (mode & SLOTS_ON)
    return;
  /* Counting stops at the threshold, so MET never reaches STRIKES.  */
  if ((mode & MET) + 1 < (64u << (mode & STRIKES) / STRIKE))
    {
      xp_fetch_add (slot_mode (rw), 1);
      return;
    }
  unsigned none = 0;
  if (xp_load_seq_cst (slot_id (rw)) == 0)
    {
      unsigned id = xp_slots_new_id ();
      if (id == 0)
        return;
      xp_cas_seq_cst (slot_id (rw), &none, id);
    }
  xp_cas_seq_cst (slot_mode (rw), &mode, (mode & STRIKES) | SLOTS_ON);
}

/* Called by a writer that has just taken a lock with slots on (no reader
   can turn them on or off meanwhile): slots pay only when readers pass
   through them many times per write (each write reads every row's slot
   from its CPU).  Measured (bench-rwlock, 2 CPUs):
   at 1 write in 100 operations the slots doubled throughput, at 1 in 10
   they cost a third of it.  Below 16 readers per write, smoothed, the
   slots go off until readers meet often again.  */
static void
judge_slots (pthread_rwlock_t *rw, unsigned id)
{
  unsigned long view = xp_load_relaxed (slot_judgement (rw));
  unsigned entries = xp_slots_entries (id, xp_load_relaxed (slot_rows (rw)));
  unsigned long reads8 = 2 * 8 * 16;
  if (view & JUDGING)
    {
      unsigned long reads = (entries - (view & LAST_ENTRIES)) & 0xffff;
      reads8 = (view >> READS8_SHIFT) & READS8_MAX;
      reads8 = reads8 - reads8 / 8 + reads;
      if (reads8 > READS8_MAX)
        reads8 = READS8_MAX;
    }
  if (reads8 >= 8 * 16)
    {
      xp_store_relaxed (slot_judgement (rw),
                        JUDGING | reads8 << READS8_SHIFT | entries);
      return;
    }
  xp_store_relaxed (slot_judgement (rw), 0);
  unsigned mode = xp_load_relaxed (slot_mode (rw));
  unsigned strikes = (mode & STRIKES) / STRIKE;
  if (strikes < MAX_STRIKES)
    strikes++;
  while (!xp_cas_seq_cst (slot_mode (rw), &mode, strikes * STRIKE))
    ;
}

/* How the lock validator sees a read lock: readers of a
   reader-preferring lock never wait for readers.  */
static inline unsigned
read_flags (const pthread_rwlock_t *rw)
{
  return XP_LD_READ | (prefers_writers (rw) ? 0 : XP_LD_READERS_SHARE);
}

/* The lock is taken at SITE: count it for unlock, and tell the lock
   hooks when HOOKED (the switch, read once per lock call).  The hold
   counts are a hint for unlock: a thread without a descriptor keeps
   none, and its unlocks look at the state.  */
static inline void
now_reading (pthread_rwlock_t *rw, const void *site, bool hooked)
{
  if (hooked)
    {
      xp_hooks_acquired (rw, sizeof *rw, read_flags (rw), site);
      xp_prof_acquired (rw, XP_PROF_READ, site, XP_PROF_OWNER_UNKNOWN);
    }
  struct xp_thread *self = xp_self_ptr;
  if (xp_likely (self != NULL))
    self->rwlock_reads++;
}

static inline void
now_writing (pthread_rwlock_t *rw, const void *site, bool hooked)
{
  if (hooked)
    {
      xp_hooks_acquired (rw, sizeof *rw, 0, site);
      xp_prof_acquired (rw, XP_PROF_WRITE, site, XP_PROF_OWNER_UNKNOWN);
    }
  struct xp_thread *self = xp_self_ptr;
  if (xp_likely (self != NULL))
    self->rwlock_writes++;
}

/* Out of line, so that the probe costs the writer's uncontended unlock
   nothing.  */
static __attribute__ ((noinline)) void
wake_after_writer (pthread_rwlock_t *rw, unsigned old)
{
  XP_PROBE (rwlock_unlock, rw);
  if (old & WRITERS_WAITING)
    wake_writer (rw);
  if (old & READERS_WAITING)
    wake_readers (rw);
}

static void
release_writer (pthread_rwlock_t *rw)
{
  xp_store_relaxed (&rw->__data.__cur_writer, 0);
  unsigned old = xp_fetch_and (state (rw), ~(WRITER | WAITING));
  if (xp_unlikely (old & WAITING))
    wake_after_writer (rw, old);
}

/* The conditions a waiter spins for (spin_until), which take the lock
   as a void pointer.  */
static bool
reader_may_enter (void *lock)
{
  pthread_rwlock_t *rw = lock;
  return admits_reader (xp_load_relaxed (state (rw)), prefers_writers (rw));
}

static bool
no_reader_in_slots (void *lock)
{
  pthread_rwlock_t *rw = lock;
  return slots_empty (rw, slots_in_use (rw));
}

static bool
writer_may_enter (void *lock)
{
  pthread_rwlock_t *rw = lock;
  return admits_writer (xp_load_relaxed (state (rw)))
         && no_reader_in_slots (rw);
}

/* Spin read-only until READY (rw) or the bound, looking with growing gaps
   as a mutex spinner does: each look takes the line from the readers and
   writers that are inside; true if it got ready.  A rwlock's waiters
   spin outside the lock's count of spinners and learn no bound
   (xp_spin_until_shared): readers waiting for a writer all enter
   together, a writer waiting for readers to drain already has the lock,
   and where writes are few so are the writers waiting at once.  A
   writer waiting for the lock starts late, as a mutex waiter does;
   readers, who enter together when a writer leaves, and a writer
   draining the slots start at once.  Nobody waits late or spins while
   the writer that holds the lock is away (away.h).  */
static bool
spin_until (pthread_rwlock_t *rw, bool (*ready) (void *), bool late)
{
  return xp_spin_until_shared (ready, rw, late,
                               &rw->__data.__cur_writer);
}

/* The caller has just set WRITER in the lock word, which keeps new
   readers out of the slots too: the lock is its once the slots hold no
   reader.  It waits a spin's while for them to drain (not at all unless
   may_spin); then it steps back, clearing WRITER and waking the readers
   that stopped for it, and false is returned: a reader still inside may
   be about to take the lock again, recursively, which a reader-preferring
   lock must grant before any writer.  */
static bool
claim_from_slots (pthread_rwlock_t *rw, bool may_spin)
{
  unsigned id = slots_in_use (rw);
  if (id == 0)
    return true;
  if (slots_empty (rw, id)
      || (may_spin && spin_until (rw, no_reader_in_slots, false)))
    {
      judge_slots (rw, id);
      return true;
    }
  unsigned old = xp_fetch_and (state (rw), ~(WRITER | READERS_WAITING));
  if (old & READERS_WAITING)
    wake_readers (rw);
  return false;
}

static bool
holds_for_writing (pthread_rwlock_t *rw)
{
  return (xp_load_relaxed (state (rw)) & WRITER)
         && xp_load_relaxed (&rw->__data.__cur_writer) == xp_self_tid ();
}

static int
rdlock_wait (pthread_rwlock_t *rw, clockid_t clock,
             const struct timespec *abstime)
{
  if (holds_for_writing (rw))
    return EDEADLK;
  bool writer_pref = prefers_writers (rw);
  spin_until (rw, reader_may_enter, false);
  for (;;)
    {
      int seq = xp_load_acquire (readers_seq (rw));
      unsigned s = xp_load_relaxed (state (rw));
      if (admits_reader (s, writer_pref))
        {
          unsigned id = slots_in_use (rw);
          if (id != 0 && read_via_slot (rw, id))
            return 0;
          if ((s + ONE_READER) & READER_OVERFLOW)
            return EAGAIN;
          if (xp_cas (state (rw), &s, s + ONE_READER))
            return 0;
          continue;
        }
      if (!(s & READERS_WAITING)
          && !xp_cas (state (rw), &s, s | READERS_WAITING))
        continue;
      if (sleep_on (readers_seq (rw), seq, clock, abstime, is_private (rw))
          == ETIMEDOUT)
        return ETIMEDOUT;
    }
}

/* The profiler times the wait, and counts the acquisition with the
   others (now_reading, now_writing).  */
static __attribute__ ((noinline)) int
rdlock_slow (pthread_rwlock_t *rw, clockid_t clock,
             const struct timespec *abstime, const void *site)
{
  XP_PROBE (rdlock_entry, rw);
  struct xp_prof_wait wait;
  xp_prof_wait_begin (&wait, rw, XP_PROF_READ, site);
  int err = rdlock_wait (rw, clock, abstime);
  xp_prof_wait_end (&wait, false);
  if (err == 0)
    XP_PROBE (rdlock_acquire_read, rw);
  return err;
}

static inline int
rdlock (pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abstime,
        const void *site)
{
  bool hooked = xp_hooks_on ();
  if (hooked)
    xp_hooks_acquiring (rw, read_flags (rw), site);
  unsigned id = slots_in_use (rw);
  if (id != 0 && xp_likely (read_via_slot (rw, id)))
    {
      now_reading (rw, site, hooked);
      return 0;
    }
  unsigned old = xp_fetch_add (state (rw), ONE_READER);
  if (xp_likely (admits_reader (old, prefers_writers (rw))
                 && !((old + ONE_READER) & READER_OVERFLOW)))
    {
      if (xp_unlikely ((old & READERS) != 0))
        readers_met (rw);
      now_reading (rw, site, hooked);
      return 0;
    }
  release_reader (rw);
  int err = rdlock_slow (rw, clock, abstime, site);
  if (err == 0)
    now_reading (rw, site, hooked);
  return err;
}

static int
wrlock_wait (pthread_rwlock_t *rw, clockid_t clock,
             const struct timespec *abstime)
{
  if (holds_for_writing (rw))
    return EDEADLK;
  spin_until (rw, writer_may_enter, true);
  unsigned keep = 0;   /* WRITERS_WAITING once a wake-up reached us */
  for (;;)
    {
      int seq = xp_load_acquire (writers_seq (rw));
      unsigned s = xp_load_seq_cst (state (rw));
      if (admits_writer (s) && no_reader_in_slots (rw))
        {
          if (xp_cas_seq_cst (state (rw), &s, s | WRITER | keep)
              && claim_from_slots (rw, true))
            return 0;
          continue;
        }
      if (!(s & WRITERS_WAITING)
          && !xp_cas_seq_cst (state (rw), &s, s | WRITERS_WAITING))
        continue;
      /* Readers in the slots see WRITERS_WAITING only when they drain
         after the bit went in: look again at those that drained before. */
      if (admits_writer (s) && no_reader_in_slots (rw))
        continue;
      int err = sleep_on (writers_seq (rw), seq, clock, abstime,
                          is_private (rw));
      if (err == ETIMEDOUT)
        return ETIMEDOUT;
      if (err == 0)
        keep = WRITERS_WAITING;
    }
}

static __attribute__ ((noinline)) int
wrlock_slow (pthread_rwlock_t *rw, clockid_t clock,
             const struct timespec *abstime, const void *site)
{
  XP_PROBE (wrlock_entry, rw);
  struct xp_prof_wait wait;
  xp_prof_wait_begin (&wait, rw, XP_PROF_WRITE, site);
  int err = wrlock_wait (rw, clock, abstime);
  xp_prof_wait_end (&wait, false);
  if (err == 0)
    XP_PROBE (wrlock_acquire_write, rw);
  return err;
}

static inline int
wrlock (pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abstime,
        const void *site)
{
  unsigned expected = 0;
  int err = 0;
  bool hooked = xp_hooks_on ();
  if (hooked)
    xp_hooks_acquiring (rw, 0, site);
  if (xp_unlikely (!xp_cas_seq_cst (state (rw), &expected, WRITER)
                   || !claim_from_slots (rw, true)))
    err = wrlock_slow (rw, clock, abstime, site);
  if (err == 0)
    {
      xp_store_relaxed (&rw->__data.__cur_writer, xp_self_tid ());
      now_writing (rw, site, hooked);
    }
  return err;
}

int
pthread_rwlock_init (pthread_rwlock_t *rw, const pthread_rwlockattr_t *attr)
{
  memset (rw, 0, sizeof *rw);
  if (attr != NULL)
    {
      rw->__data.__flags = (unsigned) xp_rwlockattr (attr)->kind;
      rw->__data.__shared
        = xp_rwlockattr (attr)->pshared == PTHREAD_PROCESS_SHARED;
    }
  xp_hook_lock_init (rw, 0, XP_CALLER_SITE ());
  return 0;
}
XP_EXPORT (pthread_rwlock_init)

int
pthread_rwlock_destroy (pthread_rwlock_t *rw)
{
  /* glibc's touches nothing: NULL is no error there.  */
  if (xp_unhinted (rw) == NULL)
    return 0;
  xp_hook_destroying (rw);
  /* glibc destroys a held rwlock (programs destroy one that a thread
     which has since exited still holds); only one with sleepers, who
     would never wake, is busy.  A waiting bit alone may be stale.  */
  unsigned s = xp_load_relaxed (state (rw));
  bool held = (s & (WRITER | READERS)) || !no_reader_in_slots (rw);
  if (held && (s & WAITING))
    return EBUSY;
  xp_hook_lock_destroy (rw);
  XP_PROBE (rwlock_destroy, rw);
  return 0;
}
XP_EXPORT (pthread_rwlock_destroy)

int
pthread_rwlock_rdlock (pthread_rwlock_t *rw)
{
  return rdlock (rw, CLOCK_REALTIME, NULL, XP_CALLER_SITE ());
}
XP_EXPORT (pthread_rwlock_rdlock)

static int
timed_rdlock (pthread_rwlock_t *rw, clockid_t clock,
              const struct timespec *abstime, const void *site)
{
  /* No deadline: wait as long as it takes, as glibc does.  */
  abstime = xp_unhinted (abstime);
  int err = check_timeout (clock, abstime);
  return err != 0 ? err : rdlock (rw, clock, abstime, site);
}

int
pthread_rwlock_clockrdlock (pthread_rwlock_t *rw, clockid_t clock,
                            const struct timespec *abstime)
{
  return timed_rdlock (rw, clock, abstime, XP_CALLER_SITE ());
}
XP_EXPORT (pthread_rwlock_clockrdlock)

int
pthread_rwlock_timedrdlock (pthread_rwlock_t *rw,
                            const struct timespec *abstime)
{
  return timed_rdlock (rw, CLOCK_REALTIME, abstime, XP_CALLER_SITE ());
}
XP_EXPORT (pthread_rwlock_timedrdlock)

int
pthread_rwlock_tryrdlock (pthread_rwlock_t *rw)
{
  unsigned id = slots_in_use (rw);
  if (id != 0 && read_via_slot (rw, id))
    {
      now_reading (rw, XP_CALLER_SITE (), xp_hooks_on ());
      return 0;
    }
  bool writer_pref = prefers_writers (rw);
  unsigned s = xp_load_relaxed (state (rw));
  while (admits_reader (s, writer_pref))
    {
      if ((s + ONE_READER) & READER_OVERFLOW)
        return EAGAIN;
      if (xp_cas (state (rw), &s, s + ONE_READER))
        {
          now_reading (rw, XP_CALLER_SITE (), xp_hooks_on ());
          return 0;
        }
    }
  if (xp_prof_active ())
    xp_prof_busy (rw, XP_PROF_READ, XP_CALLER_SITE ());
  return EBUSY;
}
XP_EXPORT (pthread_rwlock_tryrdlock)

int
pthread_rwlock_wrlock (pthread_rwlock_t *rw)
{
  return wrlock (rw, CLOCK_REALTIME, NULL, XP_CALLER_SITE ());
}
XP_EXPORT (pthread_rwlock_wrlock)

static int
timed_wrlock (pthread_rwlock_t *rw, clockid_t clock,
              const struct timespec *abstime, const void *site)
{
  /* No deadline: wait as long as it takes, as glibc does.  */
  abstime = xp_unhinted (abstime);
  int err = check_timeout (clock, abstime);
  return err != 0 ? err : wrlock (rw, clock, abstime, site);
}

int
pthread_rwlock_clockwrlock (pthread_rwlock_t *rw, clockid_t clock,
                            const struct timespec *abstime)
{
  return timed_wrlock (rw, clock, abstime, XP_CALLER_SITE ());
}
XP_EXPORT (pthread_rwlock_clockwrlock)

int
pthread_rwlock_timedwrlock (pthread_rwlock_t *rw,
                            const struct timespec *abstime)
{
  return timed_wrlock (rw, CLOCK_REALTIME, abstime, XP_CALLER_SITE ());
}
XP_EXPORT (pthread_rwlock_timedwrlock)

int
pthread_rwlock_trywrlock (pthread_rwlock_t *rw)
{
  unsigned s = xp_load_relaxed (state (rw));
  while (admits_writer (s))
    if (xp_cas_seq_cst (state (rw), &s, s | WRITER))
      {
        if (!claim_from_slots (rw, false))
          return EBUSY;
        xp_store_relaxed (&rw->__data.__cur_writer, xp_self_tid ());
        now_writing (rw, XP_CALLER_SITE (), xp_hooks_on ());
        return 0;
      }
  if (xp_prof_active ())
    xp_prof_busy (rw, XP_PROF_WRITE, XP_CALLER_SITE ());
  return EBUSY;
}
XP_EXPORT (pthread_rwlock_trywrlock)

static inline void
count_down (unsigned *held)
{
  if (*held != 0)
    (*held)--;
}

int
pthread_rwlock_unlock (pthread_rwlock_t *rw)
{
  struct xp_thread *self = xp_self_ptr;
  if (xp_likely (self != NULL && self->rwlock_reads != 0
                 && self->rwlock_writes == 0))
    {
      xp_hook_releasing (rw, sizeof *rw, XP_LD_READ);
      int err = release_read (rw);
      if (err == 0)
        self->rwlock_reads--;
      return err;
    }
  /* WRITER alone does not say the caller is the writer: it may be one
     that waits for the slots to drain while the caller reads.  */
  if ((xp_load_relaxed (state (rw)) & WRITER)
      && xp_load_relaxed (&rw->__data.__cur_writer) == xp_self_tid ())
    {
      xp_hook_releasing (rw, sizeof *rw, 0);
      release_writer (rw);
      if (self != NULL)
        count_down (&self->rwlock_writes);
      return 0;
    }
  xp_hook_releasing (rw, sizeof *rw, XP_LD_READ);
  int err = release_read (rw);
  if (err == 0 && self != NULL)
    count_down (&self->rwlock_reads);
  return err;
}
XP_EXPORT (pthread_rwlock_unlock)

/* The entry points glibc kept for LinuxThreads-era binaries.  */
#define XP_RWLOCK_ALIAS(alias, target) \
  extern __typeof (target) alias XP_ALIAS_OF (target); \
  XP_EXPORT (alias)

XP_RWLOCK_ALIAS (__pthread_rwlock_init, pthread_rwlock_init)
XP_RWLOCK_ALIAS (__pthread_rwlock_destroy, pthread_rwlock_destroy)
XP_RWLOCK_ALIAS (__pthread_rwlock_rdlock, pthread_rwlock_rdlock)
XP_RWLOCK_ALIAS (__pthread_rwlock_tryrdlock, pthread_rwlock_tryrdlock)
XP_RWLOCK_ALIAS (__pthread_rwlock_wrlock, pthread_rwlock_wrlock)
XP_RWLOCK_ALIAS (__pthread_rwlock_trywrlock, pthread_rwlock_trywrlock)
XP_RWLOCK_ALIAS (__pthread_rwlock_unlock, pthread_rwlock_unlock)
