/* The cancellable system call (its window: lib/internal/cancel.h) on
   riscv64: the number moves to a7, whose sixth argument goes last.  No
   signal return trampoline: the kernel has no SA_RESTORER there and
   returns through its vDSO, which unwinders recognise.  */

#include "cancel-bits.h"

        .text
        .globl  xp_arch_syscall_cp
        .hidden xp_arch_syscall_cp
        .globl  xp_arch_cp_begin
        .hidden xp_arch_cp_begin
        .globl  xp_arch_cp_end
        .hidden xp_arch_cp_end
        .globl  xp_arch_cp_cancel
        .hidden xp_arch_cp_cancel
        .type   xp_arch_syscall_cp, @function
        .p2align 2
xp_arch_syscall_cp:
        .cfi_startproc
xp_arch_cp_begin:
        lw      t0, 0(a0)
        andi    t0, t0, (XP_CANCEL_DISABLED | XP_CANCEL_REQUESTED | XP_CANCEL_EXITING)
        li      t1, XP_CANCEL_REQUESTED
        beq     t0, t1, xp_arch_cp_cancel
        mv      t2, a7                  /* a6 */
        mv      a7, a1                  /* nr */
        mv      a0, a2
        mv      a1, a3
        mv      a2, a4
        mv      a3, a5
        mv      a4, a6
        mv      a5, t2
        ecall
xp_arch_cp_end:
        ret
xp_arch_cp_cancel:
        tail    xp_cancel_from_cp
        .cfi_endproc
        .size   xp_arch_syscall_cp, .-xp_arch_syscall_cp

        .section .note.GNU-stack,"",@progbits
