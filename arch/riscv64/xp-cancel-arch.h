/* What cancellation needs to know about riscv64: the pc in a signal
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

/* General registers in the signal context: pc in slot 0, then x1-x31,
   so argument register aN is slot 10 + N.  */
#define XP_RISCV_PC 0
#define XP_RISCV_A(n) (10 + (n))

static inline uintptr_t
xp_arch_context_pc (const void *context)
{
  const ucontext_t *uc = context;
  return (uintptr_t) uc->uc_mcontext.__gregs[XP_RISCV_PC];
}

static inline void
xp_arch_context_set_pc (void *context, uintptr_t pc)
{
  ucontext_t *uc = context;
  uc->uc_mcontext.__gregs[XP_RISCV_PC] = pc;
}

/* The ecall instruction, as the interrupted pc shows it.  */
#define XP_RISCV_ECALL 0x00000073u

/* The context stopped at a futex wait that has not run or that the kernel
   will restart (it rewinds to the ecall, with a0 restored): make it
   return -EINTR instead, as if a handler without SA_RESTART had
   interrupted it.  Other calls, a futex wake above all, are left alone.
   Returns whether it did.  */
static inline bool
xp_arch_context_interrupt_futex_wait (void *context)
{
  ucontext_t *uc = context;
  unsigned long *r = uc->uc_mcontext.__gregs;
  const uint16_t *pc = (const uint16_t *) r[XP_RISCV_PC];
  uint32_t insn = pc[0] | (uint32_t) pc[1] << 16;
  int op = (int) r[XP_RISCV_A (1)] & FUTEX_CMD_MASK;
  if (insn != XP_RISCV_ECALL || r[XP_RISCV_A (7)] != SYS_futex
      || (op != FUTEX_WAIT && op != FUTEX_WAIT_BITSET))
    return false;
  r[XP_RISCV_A (0)] = (unsigned long) -EINTR;
  r[XP_RISCV_PC] += 4;
  return true;
}

/* No restorer: the kernel returns from handlers through its vDSO.  */
#include <xp-sigaction.h>

#endif
