/* Supplementary groups of the calling thread.  */
#include "cred.h"
#include "export.h"
#include <errno.h>
#include <limits.h>
#include <xpthread.h>

int
xpthread_setgroups_np (size_t count, const gid_t *groups)
{
  /* The kernel's bound; NULL with entries is a caller's mistake, not a
     request to clear the list.  */
  if (count > NGROUPS_MAX || (groups == NULL && count != 0))
    return EINVAL;
  xp_cred_forget ();
  return xp_cred_result (xp_syscall2 (SYS_setgroups, count, groups));
}
XP_EXPORT (xpthread_setgroups_np)

int
xpthread_getgroups_np (size_t size, gid_t *groups, size_t *count)
{
  if (size > INT_MAX || (groups == NULL && size != 0)
      || xp_unhinted (count) == NULL)
    return EINVAL;
  long rc = xp_syscall2 (SYS_getgroups, size, groups);
  if (rc < 0)
    return (int) -rc;
  *count = (size_t) rc;
  return 0;
}
XP_EXPORT (xpthread_getgroups_np)
