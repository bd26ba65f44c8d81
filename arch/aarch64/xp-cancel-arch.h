/* What cancellation needs to know about aarch64: the pc in a signal
   context, and how a handler is installed.  */
#ifndef XP_ARCH_CANCEL_ARCH_H
#define XP_ARCH_CANCEL_ARCH_H

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <ucontext.h>

static inline uintptr_t
xp_arch_context_pc (const void *context)
{
  const ucontext_t *uc = context;
  return (uintptr_t) uc->uc_mcontext.pc;
}

static inline void
xp_arch_context_set_pc (void *context, uintptr_t pc)
{
  ucontext_t *uc = context;
  uc->uc_mcontext.pc = pc;
}

/* The svc instruction, as the interrupted pc shows it.  */
#define XP_AARCH64_SVC0 0xd4000001u

/* The context stopped at a futex wait that has not run or that the kernel
   will restart (it rewinds to the svc, with x0 restored): make it return
   -EINTR instead, as if a handler without SA_RESTART had interrupted it.
   Other calls, a futex wake above all, are left alone.  Returns whether
   it did.  */
static inline bool
xp_arch_context_interrupt_futex_wait (void *context)
{
  ucontext_t *uc = context;
  unsigned long long *x = uc->uc_mcontext.regs;
  const uint32_t *pc = (const uint32_t *) uc->uc_mcontext.pc;
  int op = (int) x[1] & FUTEX_CMD_MASK;
  if (*pc != XP_AARCH64_SVC0 || x[8] != SYS_futex
      || (op != FUTEX_WAIT && op != FUTEX_WAIT_BITSET))
    return false;
  x[0] = (unsigned long long) -EINTR;
  uc->uc_mcontext.pc += 4;
  return true;
}

/* The kernel takes our signal return trampoline (xp_arch_sigreturn,
   syscall-cp.S), which unwinders recognise by its instructions.  */
#define XP_ARCH_SA_RESTORER 0x04000000
void xp_arch_sigreturn (void) __attribute__ ((visibility ("hidden")));
#include <xp-sigaction.h>

#endif
