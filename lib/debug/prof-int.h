/* What prof.c (the counting) and prof-report.c (the reports) share.  */
#ifndef XP_DEBUG_PROF_INT_H
#define XP_DEBUG_PROF_INT_H

#include "prof.h"
#include "objects.h"

/* Where a class comes from: lockdep's rules.  */
enum xp_prof_origin
{
  XP_PROF_STATIC,           /* a lock in static storage: its address */
  XP_PROF_INIT_SITE,        /* the call of pthread_*_init */
  XP_PROF_FIRST_CONTENDED   /* where it was first contended */
};

struct xp_prof_class
{
  const void *key;
  enum xp_prof_origin origin;
  uint32_t instances;
};

/* A lock the profiler knows: initialised while it ran, or contended.  */
struct xp_prof_lock
{
  uintptr_t address;
  const void *init_site;
  uint32_t class_id;        /* 0 until its first contention */
  const void *last_owner;   /* the token of its last exclusive owner,
                               unless the lock keeps it (prof.h) */
  const void *holder_site;  /* where its last holder took it */
} __attribute__ ((aligned (64)));   /* a line each: hot locks' records
                                       written apart */

/* Waits for an owner at one acquire site.  */
#define XP_PROF_HELD_BY 4

struct xp_prof_held_by
{
  const void *site;         /* NULL: the other sites */
  uint64_t waits, wait_ns;
};

/* Waits of [2^k, 2^(k+1)) ns, k from XP_PROF_FIRST_BUCKET; the first and
   last buckets take everything below and above.  */
#define XP_PROF_FIRST_BUCKET 6
#define XP_PROF_BUCKETS 32

struct xp_prof_stack;

/* One thread's counts for a class, a kind and an acquire site.  */
struct xp_prof_entry
{
  struct xp_prof_entry *next;       /* the thread's entries, newest first */
  uint32_t class_id;
  enum xp_prof_kind kind;
  const void *site;
  bool holds_long;                  /* every hold timed (prof.c) */
  uint64_t acquisitions, contended, owner_changes;
  uint64_t wait_ns, wait_max;
  uint64_t hold_ns, hold_max, hold_samples;
  uint64_t signals, broadcasts, signals_no_waiter;
  struct xp_prof_held_by held_by[XP_PROF_HELD_BY];
  uint32_t buckets[XP_PROF_BUCKETS];
  struct xp_prof_stack *stack;      /* where its waits were seen last */
};

/* A stack that waited, and for how long in all.  */
struct xp_prof_stack
{
  struct xp_prof_stack *next;
  uint64_t hash, wait_ns;
  uint32_t class_id;        /* of the lock waited for */
  struct xp_stack frames;
};

/* The table sizes, and what did not fit.  */
struct xp_prof_overflow
{
  uint64_t locks, entries, stacks;
};

/* Counts of the process, copied for a report.  */
struct xp_prof_snapshot
{
  struct xp_prof_entry *entries;    /* merged by class, kind and site */
  size_t entries_n;
  struct xp_prof_class *classes;    /* by id; [0] unused */
  uint32_t classes_n;
  struct xp_prof_stack *stacks;     /* merged by frames */
  size_t stacks_n;
  struct xp_prof_overflow overflow;
  uint64_t elapsed_ns;
  unsigned hold_sampling;
  size_t entries_room, stacks_room;  /* the mappings' sizes */
};

/* Why a report is written.  */
enum xp_prof_reason
{
  XP_PROF_AT_EXIT,
  XP_PROF_ON_SIGNAL,
  XP_PROF_ON_INTERVAL
};

/* Copy the counts (prof.c), into memory of the snapshot's own; free it.
   False when memory ran out.  */
bool xp_prof_snapshot_take (struct xp_prof_snapshot *s) XP_HIDDEN;
void xp_prof_snapshot_free (struct xp_prof_snapshot *s) XP_HIDDEN;

/* In the child of a fork (prof.c).  */
void xp_prof_after_fork_child (void) XP_HIDDEN;

/* Set up (prof.c) with HOLD_SAMPLING and room for MAX_LOCKS locks.  */
bool xp_prof_tables_init (unsigned hold_sampling, long max_locks) XP_HIDDEN;

/* The report of S, into *TEXT (N bytes, to be freed); false when memory
   ran out (prof-report.c).  Names its addresses, and so allocates and
   calls dladdr: the caller holds none of the profiler's locks.  */
bool xp_prof_report_render (const struct xp_prof_snapshot *s,
                            enum xp_prof_reason reason, char **text,
                            size_t *n) XP_HIDDEN;
/* Write a rendered report where reports go; raw system calls only.  */
void xp_prof_report_deliver (const char *text, size_t n) XP_HIDDEN;
/* Read the report settings (XPTHREAD_PROF_FILE, _FORMAT, _TOP).  */
void xp_prof_report_init (void) XP_HIDDEN;

/* Nanoseconds, monotonic, for differences (prof-clock.c).  */
uint64_t xp_prof_now (void) XP_HIDDEN;
/* Choose and calibrate that clock; before the tables.  */
void xp_prof_clock_init (void) XP_HIDDEN;

/* Memory straight from the kernel, zeroed; NULL when refused.  */
void *xp_prof_map (size_t size) XP_HIDDEN;
void xp_prof_unmap (void *p, size_t size) XP_HIDDEN;

#endif
