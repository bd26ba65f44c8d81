/* xp_arch_clone (arch/generic/xp-clone.h) on riscv64.  The kernel keeps
   every register but a0 and the child starts with the parent's registers
   on the new stack, so fn and arg ride in t1 and t2.  riscv64's clone
   takes the tls before child_tid.  */

        .text
        .globl  xp_arch_clone
        .hidden xp_arch_clone
        .type   xp_arch_clone, @function
        .p2align 2
xp_arch_clone:
        .cfi_startproc
        mv      t1, a5                  /* fn */
        mv      t2, a6                  /* arg */
        andi    a1, a1, -16             /* child stack, aligned */
        mv      t0, a3
        mv      a3, a4                  /* tls */
        mv      a4, t0                  /* child_tid */
        /* clone(flags, stack, parent_tid, tls, child_tid) */
        li      a7, 220
        ecall
        beqz    a0, 1f
        ret
        .cfi_endproc
1:
        /* Child: no caller frame exists, so mark the outermost frame for
           unwinders and debuggers.  */
        .cfi_startproc
        .cfi_undefined ra
        li      s0, 0
        li      ra, 0
        mv      a0, t2
        jalr    t1
        li      a7, 93                  /* exit: the thread alone */
        ecall
        unimp
        .cfi_endproc
        .size   xp_arch_clone, .-xp_arch_clone

        .section .note.GNU-stack,"",@progbits
