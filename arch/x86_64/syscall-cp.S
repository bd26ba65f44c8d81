/* The cancellable system call and the signal return trampoline.

   long xp_arch_syscall_cp (const unsigned *cancel_word, long nr,
                            long a1, long a2, long a3, long a4, long a5,
                            long a6);

   Everything from xp_arch_cp_begin up to and including the syscall
   instruction is the window in which a cancel may still act: the system
   call has not taken effect.  The cancel signal handler looks at the
   interrupted instruction pointer: inside the window, it sends the thread
   to xp_arch_cp_cancel instead of letting it continue.  A blocked call the
   kernel restarts (the handler has SA_RESTART) is rewound to the syscall
   instruction, so it counts as inside; a call that has returned is past
   xp_arch_cp_end and keeps its result.  The window touches neither the
   stack nor callee-saved registers, so xp_arch_cp_cancel finds the frame
   exactly as at entry and can tail-call C.  */

#define CANCEL_DISABLED 1
#define CANCEL_REQUESTED 4
#define CANCEL_EXITING 16

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
        andl    $(CANCEL_DISABLED | CANCEL_REQUESTED | CANCEL_EXITING), %eax
        cmpl    $CANCEL_REQUESTED, %eax
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
