/* What lockdep.c and lockdep-report.c share: classes, order edges and
   the calling thread's held locks.  Everything here is read and written
   under the lockdep lock, except a thread's own held locks.  */
#ifndef XP_DEBUG_LOCKDEP_INT_H
#define XP_DEBUG_LOCKDEP_INT_H

#include "lockdep.h"

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

#define XP_LD_STACK_DEPTH 12

struct xp_ld_stack
{
  unsigned depth;
  void *pc[XP_LD_STACK_DEPTH];
};

struct xp_ld_class
{
  enum xp_ld_origin origin;
  const void *key;          /* lock address or site */
  const void *lock;         /* the first lock seen in the class */
  uint32_t first_out;       /* first edge leaving the class; 0: none */
  /* The cycle search: the search that last reached the class, and the
     edge it came by.  */
  uint32_t visited;
  uint32_t came_by;
};

/* "from" was held when "to" was taken.  */
struct xp_ld_edge
{
  uint32_t from, to;
  uint32_t next_out;
  int tid;
  bool held_for_read;
  const void *held_site;    /* where "from" was taken */
  struct xp_ld_stack stack; /* where "to" was taken */
};

struct xp_ld_held
{
  const void *lock;
  uint32_t class_id;
  unsigned flags;
  const void *site;
};

struct xp_ld_class *xp_ld_class (uint32_t id) XP_HIDDEN;
struct xp_ld_edge *xp_ld_edge (uint32_t id) XP_HIDDEN;

/* The reports (lockdep-report.c).  CYCLE holds the edges of the cycle in
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
void xp_ld_report_summary (unsigned classes, unsigned edges,
                           unsigned reports) XP_HIDDEN;
/* Where reports go: XPTHREAD_LOCKDEP_FILE, else standard error.  */
void xp_ld_report_open (void) XP_HIDDEN;
/* After a report: abort when XPTHREAD_LOCKDEP=abort.  */
extern bool xp_ld_abort_after_report XP_HIDDEN;

#endif
