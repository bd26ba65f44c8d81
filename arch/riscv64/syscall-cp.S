/* The cancellable system call.

   long xp_arch_syscall_cp (const unsigned *cancel_word, long nr,
                            long a1, long a2, long a3, long a4, long a5,
                            long a6);

   Everything from xp_arch_cp_begin up to and including the ecall
   instruction is the window in which a cancel may still act: the system
   call has not taken effect.  The cancel signal handler looks at the
   interrupted pc: inside the window, it sends the thread to
   xp_arch_cp_cancel instead of letting it continue.  A blocked call the
   kernel restarts (the handler has SA_RESTART) is rewound to the ecall,
   so it counts as inside; a call that has returned is at xp_arch_cp_end
   or past it and keeps its result.  The window touches neither the stack
   nor ra and the saved registers, so xp_arch_cp_cancel finds the frame
   exactly as at entry and can tail-call C.

   riscv64 needs no signal return trampoline of ours: the kernel has no
   SA_RESTORER there and always returns through its vDSO, which unwinders
   recognise.  */

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
        .p2align 2
xp_arch_syscall_cp:
        .cfi_startproc
xp_arch_cp_begin:
        lw      t0, 0(a0)
        andi    t0, t0, (CANCEL_DISABLED | CANCEL_REQUESTED | CANCEL_EXITING)
        li      t1, CANCEL_REQUESTED
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
