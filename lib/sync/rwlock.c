/* Read-write locks: reader-preferring (the default, and
   PTHREAD_RWLOCK_PREFER_WRITER_NP, which glibc also treats as
   reader-preferring) and writer-preferring
   (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), private or shared.

   Words (glibc's field names, xpthread's meaning):
     __readers         state: WRITER (bit 0) a writer holds the lock;
                       WRITERS_WAITING (bit 1) writers may sleep;
                       READERS_WAITING (bit 2) readers may sleep; the
                       number of readers holding it from bit 3 up, with
                       bit 31 kept clear to catch overflow
     __writers         writers' futex: a sequence number, bumped to wake
     __wrphase_futex   readers' futex: a sequence number, bumped to wake
     __cur_writer      tid of the writer holding the lock (EDEADLK)
     __shared          nonzero: process-shared (shared futexes)
     __flags           the kind
   All zero is an unlocked reader-preferring lock, as with glibc; the
   static initialisers only set __flags.

   A reader may enter when no writer holds the lock and, for the
   writer-preferring kind, no writer waits: so a waiting writer blocks new
   readers.  A writer may enter when nobody holds the lock.

   Transitions:
   rdlock     fetch-add one reader.  If the old state did not allow it,
              take the reader back out exactly as an unlock does, then
              take the slow path: spin read-only a bounded while, then
              loop { read the readers' sequence; read the state; if it
              allows a reader, CAS one in; else CAS READERS_WAITING in
              and sleep on the sequence }.
   wrlock     CAS 0 -> WRITER; else the slow path, the same loop with
              WRITERS_WAITING and the writers' sequence.  A writer that
              was woken from its sleep takes the lock with
              WRITERS_WAITING set, because the wake that reached it
              cleared that bit while other writers may still sleep.
   unlock     by the writer: clear WRITER and both waiting bits in one
              atomic AND; for each waiting bit that was set bump its
              sequence and wake: one writer, all readers.
              by a reader: fetch-sub one reader; if that left no reader
              and no writer but WRITERS_WAITING, CAS both waiting bits
              off and wake one writer and, if READERS_WAITING was set
              (readers held back by the writer preference), all readers.
              Which one: each thread counts the locks it holds for
              reading and for writing (a hint, kept without atomics).
              Holding some for reading and none for writing, it is a
              reader: the fetch-sub comes first, with no load of the
              state before it, which on a contended lock would fetch
              the line once to read and again to write; a fetch-sub
              that finds no reader (the caller held none: EPERM) is
              undone at once.  Otherwise the state decides: WRITER set,
              the writer's unlock; readers, a reader's; neither, EPERM.
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
   the current holder leaves.  */
#define _GNU_SOURCE
#include "rwlock.h"
#include "export.h"
#include "futex.h"
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

static inline int
self_tid (void)
{
  struct xp_thread *self = xp_self_ptr;
  return xp_likely (self != NULL) ? self->tid : xp_adopt_current ()->tid;
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
        wake_writer (rw);
        if (s & READERS_WAITING)
          wake_readers (rw);
        return;
      }
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
      xp_fetch_add (state (rw), ONE_READER);
      return EPERM;
    }
  unsigned s = old - ONE_READER;
  if (xp_unlikely ((s & (READERS | WRITER)) == 0 && (s & WRITERS_WAITING)))
    after_last_reader (rw, s);
  return 0;
}

/* The hold counts are a hint for unlock: a thread without a descriptor
   keeps none, and its unlocks look at the state.  */
static inline void
now_reading (void)
{
  struct xp_thread *self = xp_self_ptr;
  if (xp_likely (self != NULL))
    self->rwlock_reads++;
}

static inline void
now_writing (void)
{
  struct xp_thread *self = xp_self_ptr;
  if (xp_likely (self != NULL))
    self->rwlock_writes++;
}

static void
release_writer (pthread_rwlock_t *rw)
{
  xp_store_relaxed (&rw->__data.__cur_writer, 0);
  unsigned old = xp_fetch_and (state (rw), ~(WRITER | WAITING));
  if (old & WRITERS_WAITING)
    wake_writer (rw);
  if (old & READERS_WAITING)
    wake_readers (rw);
}

/* Spin read-only until admit (state) or the bound; true if it admits.  */
static bool
spin_until (pthread_rwlock_t *rw, bool (*admit) (unsigned, bool),
            bool writer_pref)
{
  if (!xp_spin_begin ())
    return false;
  bool admitted = false;
  for (int n = 0; n < xp_spin_config.max_spins; n++)
    {
      if (admit (xp_load_relaxed (state (rw)), writer_pref))
        {
          admitted = true;
          break;
        }
      xp_cpu_relax ();
    }
  xp_spin_end ();
  return admitted;
}

static bool
admits_writer_any (unsigned s, bool unused)
{
  return admits_writer (s);
}

static bool
holds_for_writing (pthread_rwlock_t *rw)
{
  return (xp_load_relaxed (state (rw)) & WRITER)
         && xp_load_relaxed (&rw->__data.__cur_writer) == self_tid ();
}

static int
rdlock_slow (pthread_rwlock_t *rw, clockid_t clock,
             const struct timespec *abstime)
{
  if (holds_for_writing (rw))
    return EDEADLK;
  bool writer_pref = prefers_writers (rw);
  spin_until (rw, admits_reader, writer_pref);
  for (;;)
    {
      int seq = xp_load_acquire (readers_seq (rw));
      unsigned s = xp_load_relaxed (state (rw));
      if (admits_reader (s, writer_pref))
        {
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

static inline int
rdlock (pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abstime)
{
  unsigned old = xp_fetch_add (state (rw), ONE_READER);
  if (xp_likely (admits_reader (old, prefers_writers (rw))
                 && !((old + ONE_READER) & READER_OVERFLOW)))
    {
      now_reading ();
      return 0;
    }
  release_reader (rw);
  int err = rdlock_slow (rw, clock, abstime);
  if (err == 0)
    now_reading ();
  return err;
}

static int
wrlock_slow (pthread_rwlock_t *rw, clockid_t clock,
             const struct timespec *abstime)
{
  if (holds_for_writing (rw))
    return EDEADLK;
  spin_until (rw, admits_writer_any, false);
  unsigned keep = 0;   /* WRITERS_WAITING once a wake-up reached us */
  for (;;)
    {
      int seq = xp_load_acquire (writers_seq (rw));
      unsigned s = xp_load_relaxed (state (rw));
      if (admits_writer (s))
        {
          if (xp_cas (state (rw), &s, s | WRITER | keep))
            return 0;
          continue;
        }
      if (!(s & WRITERS_WAITING)
          && !xp_cas (state (rw), &s, s | WRITERS_WAITING))
        continue;
      int err = sleep_on (writers_seq (rw), seq, clock, abstime,
                          is_private (rw));
      if (err == ETIMEDOUT)
        return ETIMEDOUT;
      if (err == 0)
        keep = WRITERS_WAITING;
    }
}

static inline int
wrlock (pthread_rwlock_t *rw, clockid_t clock, const struct timespec *abstime)
{
  unsigned expected = 0;
  int err = 0;
  if (xp_unlikely (!xp_cas (state (rw), &expected, WRITER)))
    err = wrlock_slow (rw, clock, abstime);
  if (err == 0)
    {
      xp_store_relaxed (&rw->__data.__cur_writer, self_tid ());
      now_writing ();
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
  return 0;
}
XP_EXPORT (pthread_rwlock_init)

int
pthread_rwlock_destroy (pthread_rwlock_t *rw)
{
  if (xp_load_relaxed (state (rw)) & (WRITER | READERS))
    return EBUSY;
  return 0;
}
XP_EXPORT (pthread_rwlock_destroy)

int
pthread_rwlock_rdlock (pthread_rwlock_t *rw)
{
  return rdlock (rw, CLOCK_REALTIME, NULL);
}
XP_EXPORT (pthread_rwlock_rdlock)

int
pthread_rwlock_clockrdlock (pthread_rwlock_t *rw, clockid_t clock,
                            const struct timespec *abstime)
{
  int err = check_timeout (clock, abstime);
  return err != 0 ? err : rdlock (rw, clock, abstime);
}
XP_EXPORT (pthread_rwlock_clockrdlock)

int
pthread_rwlock_timedrdlock (pthread_rwlock_t *rw,
                            const struct timespec *abstime)
{
  return pthread_rwlock_clockrdlock (rw, CLOCK_REALTIME, abstime);
}
XP_EXPORT (pthread_rwlock_timedrdlock)

int
pthread_rwlock_tryrdlock (pthread_rwlock_t *rw)
{
  bool writer_pref = prefers_writers (rw);
  unsigned s = xp_load_relaxed (state (rw));
  while (admits_reader (s, writer_pref))
    {
      if ((s + ONE_READER) & READER_OVERFLOW)
        return EAGAIN;
      if (xp_cas (state (rw), &s, s + ONE_READER))
        {
          now_reading ();
          return 0;
        }
    }
  return EBUSY;
}
XP_EXPORT (pthread_rwlock_tryrdlock)

int
pthread_rwlock_wrlock (pthread_rwlock_t *rw)
{
  return wrlock (rw, CLOCK_REALTIME, NULL);
}
XP_EXPORT (pthread_rwlock_wrlock)

int
pthread_rwlock_clockwrlock (pthread_rwlock_t *rw, clockid_t clock,
                            const struct timespec *abstime)
{
  int err = check_timeout (clock, abstime);
  return err != 0 ? err : wrlock (rw, clock, abstime);
}
XP_EXPORT (pthread_rwlock_clockwrlock)

int
pthread_rwlock_timedwrlock (pthread_rwlock_t *rw,
                            const struct timespec *abstime)
{
  return pthread_rwlock_clockwrlock (rw, CLOCK_REALTIME, abstime);
}
XP_EXPORT (pthread_rwlock_timedwrlock)

int
pthread_rwlock_trywrlock (pthread_rwlock_t *rw)
{
  unsigned s = xp_load_relaxed (state (rw));
  while (admits_writer (s))
    if (xp_cas (state (rw), &s, s | WRITER))
      {
        xp_store_relaxed (&rw->__data.__cur_writer, self_tid ());
        now_writing ();
        return 0;
      }
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
      int err = release_reader_unchecked (rw);
      if (err == 0)
        self->rwlock_reads--;
      return err;
    }
  unsigned s = xp_load_relaxed (state (rw));
  if (s & WRITER)
    {
      release_writer (rw);
      if (self != NULL)
        count_down (&self->rwlock_writes);
    }
  else if (s & READERS)
    {
      release_reader (rw);
      if (self != NULL)
        count_down (&self->rwlock_reads);
    }
  else
    return EPERM;
  return 0;
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
