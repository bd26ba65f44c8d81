/* Cancellation points: sigpause, in its two historical forms.

   Interposed for the reason every cancellation point is (points.h).
   sigpause is what <signal.h> gives BSD-minded programs: its argument is
   an old-style mask of the first 32 signals, which replaces the thread's
   mask while it waits.  __xpg_sigpause is what <signal.h> gives programs
   asking for X/Open: its argument is one signal, removed from the current
   mask for the wait.  __sigpause (mask or signal, flag) is the entry point
   both go through in glibc and that old binaries call.  */
#define _GNU_SOURCE
#include "points.h"
#include <string.h>

int __sigpause (int sig_or_mask, int is_sig);
/* <signal.h> redirects the name sigpause to __xpg_sigpause.  */
int xp_bsd_sigpause (int mask) __asm__ ("sigpause");

static void
old_style_mask (sigset_t *set, int mask)
{
  memset (set, 0, sizeof *set);
  /* The low 32 bits of the first word are signals 1 to 32.  */
  unsigned long *words = (unsigned long *) set;
  words[0] = (unsigned int) mask;
}

int
__sigpause (int sig_or_mask, int is_sig)
{
  sigset_t set;
  if (is_sig == 0)
    old_style_mask (&set, sig_or_mask);
  else if (pthread_sigmask (SIG_SETMASK, NULL, &set) != 0
           || sigdelset (&set, sig_or_mask) < 0)
    return -1;
  return (int) XP_CP (SYS_rt_sigsuspend, &set, XP_KERNEL_SIGSET_SIZE);
}
XP_EXPORT (__sigpause)

int
xp_bsd_sigpause (int mask)
{
  return __sigpause (mask, 0);
}
XP_EXPORT (sigpause)

int
__xpg_sigpause (int sig)
{
  return __sigpause (sig, 1);
}
XP_EXPORT (__xpg_sigpause)
