/* The kernel's struct sigaction and the call that installs a handler
   with it, bypassing the C library's wrapper.  An architecture whose
   kernel takes a signal return trampoline defines XP_ARCH_SA_RESTORER
   (the flag) and provides xp_arch_sigreturn before including this.  */
#ifndef XP_GENERIC_SIGACTION_H
#define XP_GENERIC_SIGACTION_H

#include <signal.h>
#include <sys/syscall.h>
#include <xp-syscall.h>

struct xp_kernel_sigaction
{
  void (*handler) (int, siginfo_t *, void *);
  unsigned long flags;
#ifdef XP_ARCH_SA_RESTORER
  void (*restorer) (void);
#endif
  unsigned long mask;
};

/* Install handler for sig; no signal is blocked while it runs except sig
   itself.  */
static inline void
xp_arch_set_signal_handler (int sig, void (*handler) (int, siginfo_t *,
                                                      void *),
                            unsigned long flags)
{
  struct xp_kernel_sigaction sa = {
    .handler = handler,
#ifdef XP_ARCH_SA_RESTORER
    .flags = flags | XP_ARCH_SA_RESTORER,
    .restorer = xp_arch_sigreturn,
#else
    .flags = flags,
#endif
    .mask = 0,
  };
  xp_syscall4 (SYS_rt_sigaction, sig, &sa, NULL, sizeof sa.mask);
}

#endif
