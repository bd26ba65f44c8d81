/* xp_arch_clone (arch/generic/xp-clone.h) on aarch64.  The kernel keeps
   every register but x0 and the child starts with the parent's registers
   on the new stack, so fn and arg ride in x10 and x11.  aarch64's clone
   takes the tls before child_tid.  */

        .text
        .globl  xp_arch_clone
        .hidden xp_arch_clone
        .type   xp_arch_clone, %function
        .p2align 2
xp_arch_clone:
        .cfi_startproc
        mov     x10, x5                 /* fn */
        mov     x11, x6                 /* arg */
        and     x1, x1, #-16            /* child stack, aligned */
        mov     x9, x3
        mov     x3, x4                  /* tls */
        mov     x4, x9                  /* child_tid */
        /* clone(flags, stack, parent_tid, tls, child_tid) */
        mov     x8, #220
        svc     #0
        cbz     x0, 1f
        ret
        .cfi_endproc
1:
        /* Child: no caller frame exists, so mark the outermost frame for
           unwinders and debuggers.  */
        .cfi_startproc
        .cfi_undefined x30
        mov     x29, #0
        mov     x30, #0
        mov     x0, x11
        blr     x10
        mov     x8, #93                 /* exit: the thread alone */
        svc     #0
        brk     #0
        .cfi_endproc
        .size   xp_arch_clone, .-xp_arch_clone

        .section .note.GNU-stack,"",%progbits
