/* What cancellation needs to know about x86_64: the instruction pointer in
   a signal context, and the stack pointer a jmp_buf will return to.  */
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
  return (uintptr_t) uc->uc_mcontext.gregs[REG_RIP];
}

static inline void
xp_arch_context_set_pc (void *context, uintptr_t pc)
{
  ucontext_t *uc = context;
  uc->uc_mcontext.gregs[REG_RIP] = (greg_t) pc;
}

/* The context stopped at a futex wait that has not run or that the kernel
   will restart (it rewinds to the syscall instruction, with the call
   number back in rax): make it return -EINTR instead, as if a handler
   without SA_RESTART had interrupted it.  Other calls, a futex wake above
   all, are left alone.  Returns whether it did.  */
static inline bool
xp_arch_context_interrupt_futex_wait (void *context)
{
  ucontext_t *uc = context;
  greg_t *r = uc->uc_mcontext.gregs;
  const unsigned char *pc = (const unsigned char *) r[REG_RIP];
  int op = (int) r[REG_RSI] & FUTEX_CMD_MASK;
  if (pc[0] != 0x0f || pc[1] != 0x05 || r[REG_RAX] != SYS_futex
      || (op != FUTEX_WAIT && op != FUTEX_WAIT_BITSET))
    return false;
  r[REG_RAX] = -EINTR;
  r[REG_RIP] += 2;
  return true;
}

/* The kernel takes our signal return trampoline (xp_arch_sigreturn,
   syscall-cp.S), which unwinders recognise by its instructions.  */
#define XP_ARCH_SA_RESTORER 0x04000000
void xp_arch_sigreturn (void) __attribute__ ((visibility ("hidden")));
#include <xp-sigaction.h>

#endif
