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

/* Print "xpthread: <message>" on stderr and abort; for states the library
   cannot survive (a broken invariant, a thread that kept old privileges).  */
void xp_fatal (const char *fmt, ...)
  XP_HIDDEN __attribute__ ((noreturn, format (printf, 1, 2)));

/* Print "xpthread: <message>" on stderr, nothing more.  */
void xp_warn (const char *fmt, ...)
  XP_HIDDEN __attribute__ ((format (printf, 1, 2)));

#endif
