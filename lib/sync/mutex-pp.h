/* Priority protection seen from the scheduling calls (mutex-pp.c).  */
#ifndef XP_SYNC_MUTEX_PP_H
#define XP_SYNC_MUTEX_PP_H

#include "thread.h"
#include <sched.h>

/* Set t's (pinned, tid) policy (-1: keep it) and priority as
   pthread_setschedparam / pthread_setschedprio do: while t holds
   priority-protection mutexes the kernel gets at least their highest
   ceiling, and the priority asked for is remembered for when t lets go of
   them.  Returns 0 or -errno.  */
long xp_pp_set_scheduling (struct xp_thread *t, int tid, int policy,
                           int priority) XP_HIDDEN;

/* The priority pthread_getschedparam reports for t, whose kernel priority
   is kernel_priority: the one it would have without its ceilings.  */
int xp_pp_reported_priority (struct xp_thread *t, int kernel_priority)
  XP_HIDDEN;

#endif
