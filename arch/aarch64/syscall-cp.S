/* The cancellable system call (its window: lib/internal/cancel.h) and
   the signal return trampoline, on aarch64: the number moves to x8 and
   the arguments down one register.  */

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
        .type   xp_arch_syscall_cp, %function
        .p2align 2
xp_arch_syscall_cp:
        .cfi_startproc
xp_arch_cp_begin:
        ldr     w9, [x0]
        mov     w10, #(XP_CANCEL_DISABLED | XP_CANCEL_REQUESTED | XP_CANCEL_EXITING)
        and     w9, w9, w10
        cmp     w9, #XP_CANCEL_REQUESTED
        b.eq    xp_arch_cp_cancel
        mov     x8, x1                  /* nr */
        mov     x0, x2
        mov     x1, x3
        mov     x2, x4
        mov     x3, x5
        mov     x4, x6
        mov     x5, x7
        svc     #0
xp_arch_cp_end:
        ret
xp_arch_cp_cancel:
        b       xp_cancel_from_cp
        .cfi_endproc
        .size   xp_arch_syscall_cp, .-xp_arch_syscall_cp

/* Signal return for handlers xpthread installs itself.  It has no unwind
   table entry on purpose: unwinders recognise these exact two
   instructions as a signal frame, which lets a cancel unwind from an
   asynchronous cancel signal through the interrupted code.  The nop keeps
   the return-address-minus-one lookup out of any other function.  */
        nop
        .globl  xp_arch_sigreturn
        .hidden xp_arch_sigreturn
        .type   xp_arch_sigreturn, %function
xp_arch_sigreturn:
        mov     x8, #139                /* rt_sigreturn */
        svc     #0
        .size   xp_arch_sigreturn, .-xp_arch_sigreturn

        .section .note.GNU-stack,"",%progbits
