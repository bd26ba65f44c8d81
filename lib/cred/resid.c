/* Real, effective and saved ids of the calling thread.  -1 leaves an id
   unchanged, as with setresuid(2).  */
#include "cred.h"
#include "export.h"
#include <xpthread.h>

int
xpthread_setresuid_np (uid_t ruid, uid_t euid, uid_t suid)
{
  xp_cred_forget ();
  return xp_cred_result (xp_syscall3 (SYS_setresuid, ruid, euid, suid));
}
XP_EXPORT (xpthread_setresuid_np)

int
xpthread_setresgid_np (gid_t rgid, gid_t egid, gid_t sgid)
{
  xp_cred_forget ();
  return xp_cred_result (xp_syscall3 (SYS_setresgid, rgid, egid, sgid));
}
XP_EXPORT (xpthread_setresgid_np)

int
xpthread_getresuid_np (uid_t *ruid, uid_t *euid, uid_t *suid)
{
  return xp_cred_result (xp_syscall3 (SYS_getresuid, ruid, euid, suid));
}
XP_EXPORT (xpthread_getresuid_np)

int
xpthread_getresgid_np (gid_t *rgid, gid_t *egid, gid_t *sgid)
{
  return xp_cred_result (xp_syscall3 (SYS_getresgid, rgid, egid, sgid));
}
XP_EXPORT (xpthread_getresgid_np)
