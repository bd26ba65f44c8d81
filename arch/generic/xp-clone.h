/* The clone trampoline each architecture provides (arch/<arch>/clone.S). */
#ifndef XP_GENERIC_CLONE_H
#define XP_GENERIC_CLONE_H

/* Start a thread running fn(arg) on the stack below stack_top, with the
   thread pointer tls; the kernel stores the child's tid at parent_tid and
   clears child_tid (with a futex wake) when the child is gone.  Returns
   the tid, or -errno.  The child exits with fn's result.  */
long xp_arch_clone (unsigned long flags, void *stack_top, int *parent_tid,
                    int *child_tid, void *tls, long (*fn) (void *),
                    void *arg) __attribute__ ((visibility ("hidden")));

#endif
