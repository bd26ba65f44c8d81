/* File-system uid and gid of the calling thread.

   setfsuid(2) and setfsgid(2) cannot report failure: they return the
   previous id whatever happens.  Asking again with an invalid id (-1)
   changes nothing and returns the current one, which tells whether the
   change took effect; a refused change is reported as EPERM.  */
#include "cred.h"
#include "export.h"
#include <errno.h>
#include <xpthread.h>

int
xp_cred_set_fs_id (long nr, unsigned id, unsigned *old)
{
  if (id == (unsigned) -1)
    return EINVAL;
  unsigned previous = (unsigned) xp_syscall1 (nr, id);
  if (old != NULL)
    *old = previous;
  return (unsigned) xp_syscall1 (nr, -1) == id ? 0 : EPERM;
}

int
xpthread_setfsuid_np (uid_t uid)
{
  xp_cred_forget ();
  return xp_cred_set_fs_id (SYS_setfsuid, uid, NULL);
}
XP_EXPORT (xpthread_setfsuid_np)

int
xpthread_setfsgid_np (gid_t gid)
{
  xp_cred_forget ();
  return xp_cred_set_fs_id (SYS_setfsgid, gid, NULL);
}
XP_EXPORT (xpthread_setfsgid_np)

uid_t
xpthread_getfsuid_np (void)
{
  return (uid_t) xp_syscall1 (SYS_setfsuid, -1);
}
XP_EXPORT (xpthread_getfsuid_np)

gid_t
xpthread_getfsgid_np (void)
{
  return (gid_t) xp_syscall1 (SYS_setfsgid, -1);
}
XP_EXPORT (xpthread_getfsgid_np)
