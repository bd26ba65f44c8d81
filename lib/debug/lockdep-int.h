/* What lockdep.c and lockdep-report.c share: classes, order edges and
   the calling thread's held locks.  Everything here is read and written
   under the lockdep lock, except a thread's own held locks.  */
#ifndef XP_DEBUG_LOCKDEP_INT_H
#define XP_DEBUG_LOCKDEP_INT_H

#include "lockdep.h"
#include "objects.h"

/* Where a class comes from (the class rules).  */
enum xp_ld_origin
{
  XP_LD_STATIC,       /* a lock in static storage, never initialised:
                         its address */
  XP_LD_INIT_SITE,    /* the call of pthread_mutex_init & co. */
  XP_LD_FIRST_LOCK,   /* a zero-filled lock: where it was first taken */
  XP_LD_INSTANCE,     /* XPTHREAD_LOCKDEP_CLASSES=instance: the lock */
  XP_LD_THREAD_END    /* the end of the threads running a routine, which
                         each holds from its start and joiners wait for */
};


struct xp_ld_class
{
  enum xp_ld_origin origin;
  const void *key;          /* lock address or site */
  const void *lock;         /* the first lock seen in the class */
  unsigned instances;       /* locks given the class, counted up to 2:
                               only a class of one lock has gates */
  bool retired;             /* its object was unloaded */
  uint32_t first_out;       /* first edge leaving the class; 0: none */
  /* The cycle search: the last search that reached the class, and the
     gate masks it came with (a bit per mask and way in, see
     first_visit).  */
  uint32_t visited;
  uint32_t masks;
};

/* A lock that was held, exclusively, every time an order was seen: a
   gate.  Only one thread at a time can be inside it, so a cycle whose
   every order was taken inside one gate can never close.  It is the
   lock itself, not its class: two threads can hold two locks of one
   class at once.  */
#define XP_LD_GATES 4

struct xp_ld_gate
{
  const void *lock;
  uint32_t class_id;        /* for the summary, which names it */
};

/* The kind of an order, by the kernel's lockdep rules: the first lock
   held exclusively (E) or shared (S: for reading), and the second taken
   as a recursive read (R: a read of a reader-preferring rwlock, which
   waits only for a writer that holds the lock, never for one that
   waits) or not (N).  Orders of one pair of classes in other kinds are
   other edges.  */
#define XP_LD_SHARED_FIRST 1u
#define XP_LD_RECURSIVE_SECOND 2u

/* "from" was held when "to" was taken.  */
struct xp_ld_edge
{
  uint32_t from, to;
  unsigned kind;            /* XP_LD_SHARED_FIRST, XP_LD_RECURSIVE_SECOND */
  int tid;                  /* a thread that took it */
  bool many_threads;        /* another thread took it too */
  bool read_second;         /* "to" was taken for reading (recursive or
                               not) */
  bool reported;            /* it closed a reported cycle */
  bool gated;               /* it closed cycles, all inside a gate */
  unsigned gates_n;
  struct xp_ld_gate gates[XP_LD_GATES];
  const void *held_site;    /* where "from" was taken */
  struct xp_stack stack; /* where "to" was taken */
};

/* What the cycle search reads of an edge, apart from the rest so that
   a search over many edges stays in few cache lines.  */
struct xp_ld_link
{
  uint32_t to : 24;         /* class ids are below 1 << 24 */
  uint32_t kind : 8;
  uint32_t next_out;
};

/* Held from the thread's start: its own end, which excludes no other
   thread (not one of lockdep.h's flags, which the lock paths pass).  */
#define XP_LD_OWN_END 0x100u

struct xp_ld_held
{
  const void *lock;
  uint32_t class_id;
  unsigned flags;
  const void *site;
  uint64_t gates_sig;       /* a hash of the gates held before it */
};

struct xp_ld_class *xp_ld_class (uint32_t id) XP_HIDDEN;
struct xp_ld_edge *xp_ld_edge (uint32_t id) XP_HIDDEN;

/* The reports (lockdep-report.c), said under the lockdep lock with the
   addresses they name marked, and written once the lock is released:
   xp_ld_report_take, under the lock, hands over what the calling thread
   said since it entered (NULL: nothing), and xp_ld_report_deliver, after
   it, names the marks, writes the text and frees it.  */
struct xp_ld_pending;
struct xp_ld_pending *xp_ld_report_take (void) XP_HIDDEN;
void xp_ld_report_deliver (struct xp_ld_pending *p) XP_HIDDEN;

/* The reports.  CYCLE holds the edges of the cycle in
   order, the new one last, which a thread made taking LOCK.  */
void xp_ld_report_cycle (const void *lock, const uint32_t *cycle, unsigned n,
                         const struct xp_ld_held *held, unsigned depth)
  XP_HIDDEN;
void xp_ld_report_self (const struct xp_ld_held *again,
                        const struct xp_ld_held *held, unsigned depth)
  XP_HIDDEN;
void xp_ld_report_cond_wait (const void *cond, const void *mutex,
                             const void *site, const struct xp_ld_held *kept)
  XP_HIDDEN;
/* Misuses of a lock by the calling thread, which holds HELD and is at
   STACK: releasing LOCK (of class CLASS_ID) that it does not hold,
   destroying one it holds, or ending (LOCK is then the thread) while it
   holds locks.  */
enum xp_ld_misuse
{
  XP_LD_RELEASE_UNHELD,
  XP_LD_DESTROY_HELD,
  XP_LD_EXIT_HOLDING
};

void xp_ld_report_misuse (enum xp_ld_misuse what, const void *lock,
                          uint32_t class_id, const struct xp_stack *stack,
                          const struct xp_ld_held *held, unsigned depth)
  XP_HIDDEN;
/* The exit summary: counts, and the gates of the cycles left
   unreported.  */
#define XP_LD_SUMMARY_GATES 4

struct xp_ld_summary
{
  unsigned classes, edges, reports, gated;
  unsigned retired;         /* classes of unloaded objects */
  unsigned gates_n;         /* distinct gate classes kept */
  uint32_t gates[XP_LD_SUMMARY_GATES];
  bool more_gates;          /* and more than those */
  size_t memory;            /* bytes of lockdep's tables */
};

void xp_ld_report_summary (const struct xp_ld_summary *s) XP_HIDDEN;
/* Where reports go: XPTHREAD_LOCKDEP_FILE, else standard error.  */
void xp_ld_report_open (void) XP_HIDDEN;
/* After a report: abort when XPTHREAD_LOCKDEP=abort.  */
extern bool xp_ld_abort_after_report XP_HIDDEN;

#endif
