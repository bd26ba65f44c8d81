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

/* Set the file-system id with setfsuid(2) or setfsgid(2) (NR) and check
   that it took: they return the previous id even when they refuse, and
   asking with -1 changes nothing but returns the current one.  Stores the
   previous id in *OLD when OLD is not NULL.  0, EINVAL or EPERM.  */
int xp_cred_set_fs_id (long nr, unsigned id, unsigned *old) XP_HIDDEN;

/* The identity the thread's last switch installed (when its groups fit),
   so that a switch to the identity the thread already has costs no
   system call.  */
#define XP_CRED_REMEMBERED_GROUPS 32
struct xp_cred_current
{
  bool valid;
  int flags;
  uid_t uid;
  gid_t gid;
  size_t ngroups;
  gid_t groups[XP_CRED_REMEMBERED_GROUPS];
};
extern __thread struct xp_cred_current xp_cred_current
  __attribute__ ((tls_model ("initial-exec"))) XP_HIDDEN;

/* Every change outside a switch makes the remembered identity unknown.  */
static inline void
xp_cred_forget (void)
{
  xp_cred_current.valid = false;
}

#endif
