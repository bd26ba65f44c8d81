/* xp_arch_clone (arch/generic/xp-clone.h) on x86_64.  fn and arg are
   kept in callee-saved registers across the system call because the
   child starts with the parent's register file but a fresh stack.  */

        .text
        .globl  xp_arch_clone
        .hidden xp_arch_clone
        .type   xp_arch_clone, @function
xp_arch_clone:
        .cfi_startproc
        pushq   %rbx
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %rbx, 0
        pushq   %r12
        .cfi_adjust_cfa_offset 8
        .cfi_rel_offset %r12, 0
        movq    %r9, %rbx               /* fn */
        movq    24(%rsp), %r12          /* arg: seventh argument */
        andq    $-16, %rsi              /* child stack, aligned */
        movq    %rcx, %r10              /* child_tid: fourth syscall arg */
        /* clone(flags, stack, parent_tid, child_tid, tls) */
        movl    $56, %eax
        syscall
        testq   %rax, %rax
        jz      1f
        popq    %r12
        .cfi_adjust_cfa_offset -8
        .cfi_restore %r12
        popq    %rbx
        .cfi_adjust_cfa_offset -8
        .cfi_restore %rbx
        ret
1:
        .cfi_endproc
        /* Child: no caller frame exists, so mark the outermost frame for
           unwinders and debuggers.  */
        .cfi_startproc
        .cfi_undefined %rip
        xorl    %ebp, %ebp
        movq    %r12, %rdi
        call    *%rbx
        movq    %rax, %rdi
        movl    $60, %eax               /* exit: the thread alone */
        syscall
        hlt
        .cfi_endproc
        .size   xp_arch_clone, .-xp_arch_clone

        .section .note.GNU-stack,"",@progbits
