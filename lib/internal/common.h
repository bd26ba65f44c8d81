/* Definitions every file of the library uses.  */
#ifndef XP_INTERNAL_COMMON_H
#define XP_INTERNAL_COMMON_H

#include <config.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define XP_HIDDEN __attribute__ ((visibility ("hidden")))
#define xp_likely(x) __builtin_expect (!!(x), 1)
#define xp_unlikely(x) __builtin_expect (!!(x), 0)

/* P unchanged, hidden from the compiler: <pthread.h> declares some
   arguments never NULL, which programs pass and glibc copes with, and a
   compiler that believed it would drop the test for NULL.  */
#define xp_unhinted(p)                          \
  ({                                            \
    __typeof__ (p) xp_unhinted_ = (p);          \
    __asm__ ("" : "+r" (xp_unhinted_));         \
    xp_unhinted_;                               \
  })

#include <xp-atomic.h>
#include <xp-syscall.h>
#include <xp-cpu.h>
#include <xp-thread-pointer.h>

/* Run INIT once for the process: the first caller runs it, the others
   spin until it has run; for an INIT that is short and waits for
   nothing.  *STATE starts at 0; 1: running, 2: done.  */
static inline void
xp_once_spinning (int *state, void (*init) (void))
{
  int expected = 0;
  if (xp_cas (state, &expected, 1))
    {
      init ();
      xp_store_release (state, 2);
    }
  while (xp_load_acquire (state) != 2)
    xp_cpu_relax ();
}

/* Print "xpthread: <message>" on stderr and abort; for states the library
   cannot survive (a broken invariant, a thread that kept old privileges).  */
void xp_fatal (const char *fmt, ...)
  XP_HIDDEN __attribute__ ((noreturn, format (printf, 1, 2)));

/* Print "xpthread: <message>" on stderr, nothing more.  */
void xp_warn (const char *fmt, ...)
  XP_HIDDEN __attribute__ ((format (printf, 1, 2)));

#endif
