/* Per-thread credentials: raw system calls on the calling thread only.
   glibc's wrappers of the same calls change every thread of the process
   (POSIX), which is what a file server impersonating one user per worker
   thread must avoid.  */
#ifndef XP_CRED_CRED_H
#define XP_CRED_CRED_H

#include "common.h"
#include <sys/types.h>

/* The kernel's answer as an errno value (0 on success).  */
static inline int
xp_cred_result (long rc)
{
  return rc < 0 ? (int) -rc : 0;
}

#endif
