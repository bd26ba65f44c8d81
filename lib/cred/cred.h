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

/* Process-wide credential changes (glibc's set*id family, interposed in
   process-wide.c): how many have started and how many have finished.
   Both only grow.  */
extern uint64_t xp_cred_changes_started XP_HIDDEN;
extern uint64_t xp_cred_changes_finished XP_HIDDEN;

/* The generation of the process's credentials, for a switch to read
   before its first system call: the number of process-wide changes
   started, or XP_CRED_UNSETTLED while one is under way (a record made
   then is never trusted).  FINISHED is read first: a change that counts
   in it counts in STARTED read afterwards, so equal counts mean that
   every change started so far had finished when FINISHED was read.  */
#define XP_CRED_UNSETTLED UINT64_MAX
static inline uint64_t
xp_cred_settled_generation (void)
{
  uint64_t finished = xp_load_acquire (&xp_cred_changes_finished);
  uint64_t started = xp_load_acquire (&xp_cred_changes_started);
  return started == finished ? started : XP_CRED_UNSETTLED;
}

/* The identity the thread's last switch installed (when its groups fit),
   so that a switch to the identity the thread already has costs no
   system call, as long as no process-wide change has started since
   GENERATION was read.  */
#define XP_CRED_REMEMBERED_GROUPS 32
struct xp_cred_current
{
  bool valid;
  int flags;
  uint64_t generation;
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
