/* The cancellable system call (its window: lib/internal/cancel.h) and
   the signal return trampoline, on x86_64.

   long xp_arch_syscall_cp (const unsigned *cancel_word, long nr,
                            long a1, long a2, long a3, long a4, long a5,
                            long a6);  */

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
xp_arch_syscall_cp:
        .cfi_startproc
xp_arch_cp_begin:
        movl    (%rdi), %eax
        andl    $(XP_CANCEL_DISABLED | XP_CANCEL_REQUESTED | XP_CANCEL_EXITING), %eax
        cmpl    $XP_CANCEL_REQUESTED, %eax
        je      xp_arch_cp_cancel
        movq    %rsi, %rax              /* nr */
        movq    %rdx, %rdi
        movq    %rcx, %rsi
        movq    %r8, %rdx
        movq    %r9, %r10
        movq    8(%rsp), %r8
        movq    16(%rsp), %r9
        syscall
xp_arch_cp_end:
        ret
xp_arch_cp_cancel:
        jmp     xp_cancel_from_cp
        .cfi_endproc
        .size   xp_arch_syscall_cp, .-xp_arch_syscall_cp

/* Signal return for handlers xpthread installs itself.  It has no unwind
   table entry on purpose: unwinders recognise these exact bytes (mov $15,
   %rax; syscall) as a signal frame, which lets a cancel unwind from an
   asynchronous cancel signal through the interrupted code.  The nop keeps
   the return-address-minus-one lookup out of any other function.  */
        nop
        .globl  xp_arch_sigreturn
        .hidden xp_arch_sigreturn
        .type   xp_arch_sigreturn, @function
xp_arch_sigreturn:
        .byte   0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00  /* mov $15, %rax */
        .byte   0x0f, 0x05                                /* syscall */
        hlt
        .size   xp_arch_sigreturn, .-xp_arch_sigreturn

        .section .note.GNU-stack,"",@progbits
