/* The CPU quota of the process's cgroup, for the spin policy: a spinner
   under a quota spends CPU time that its lock's owner needs.  */
#ifndef XP_SYNC_CPU_QUOTA_H
#define XP_SYNC_CPU_QUOTA_H

#include "common.h"

/* How many CPUs' worth of time the tightest CPU quota of the calling
   process's cgroup and its ancestors allows, rounded down but at least
   1; 0 when there is none.  cgroup v2 (cpu.max) and v1 (cpu.cfs_quota_us
   over cpu.cfs_period_us), as mounted under /sys/fs/cgroup; read when
   called, with raw system calls.  */
long xp_cpu_quota_cpus (void) XP_HIDDEN;

#endif
