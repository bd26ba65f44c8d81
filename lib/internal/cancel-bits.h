/* The bits of a thread's cancel word (xp_thread.cancel), for C and for
   the assembly of the cancellable system call (arch/<arch>/syscall-cp.S),
   which includes this file: unsigned in C, plain numbers for the
   assembler.  */
#ifndef XP_INTERNAL_CANCEL_BITS_H
#define XP_INTERNAL_CANCEL_BITS_H

#ifdef __ASSEMBLER__
# define XP_CANCEL_BIT(n) n
#else
# define XP_CANCEL_BIT(n) n##u
#endif

#define XP_CANCEL_DISABLED XP_CANCEL_BIT (1)    /* PTHREAD_CANCEL_DISABLE */
#define XP_CANCEL_ASYNC XP_CANCEL_BIT (2)       /* PTHREAD_CANCEL_ASYNCHRONOUS */
#define XP_CANCEL_REQUESTED XP_CANCEL_BIT (4)   /* pthread_cancel was called */
/* The thread is exiting (pthread_exit or an acted cancel): no further
   cancel acts.  */
#define XP_CANCEL_EXITING XP_CANCEL_BIT (16)

#endif
