/* Our layout of pthread_attr_t.  Every pthread_attr_* entry point glibc
   exports is ours, so the 56 bytes of the public type can hold our own
   fields; the cpu set and signal mask, which do not fit, live in a
   separately allocated extension freed by pthread_attr_destroy.  */
#ifndef XP_INTERNAL_ATTR_H
#define XP_INTERNAL_ATTR_H

#include "common.h"
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#define XP_ATTR_DETACHED 0x1u
#define XP_ATTR_EXPLICIT_SCHED 0x2u   /* PTHREAD_EXPLICIT_SCHED */
#define XP_ATTR_SCOPE_PROCESS 0x4u    /* stored so the getter answers;
                                         setscope refuses it like glibc */
#define XP_ATTR_STACK_SET 0x8u        /* stackaddr given by the user */
#define XP_ATTR_STACKSIZE_SET 0x10u
#define XP_ATTR_SIGMASK_SET 0x20u
/* The library's own thread (xp_thread_create_internal), never set from
   a program's attribute.  */
#define XP_ATTR_INTERNAL 0x40u

struct xp_attr_ext
{
  cpu_set_t *cpuset;        /* NULL: no affinity requested */
  size_t cpuset_size;
  sigset_t sigmask;         /* valid with XP_ATTR_SIGMASK_SET */
};

struct xp_attr
{
  size_t stack_size;        /* 0: the process default */
  void *stack_addr;         /* lowest address of a user stack */
  size_t guard_size;
  unsigned flags;
  int policy;
  int priority;
  struct xp_attr_ext *ext;
};

_Static_assert (sizeof (struct xp_attr) <= sizeof (pthread_attr_t),
                "struct xp_attr must fit in pthread_attr_t");

static inline struct xp_attr *
xp_attr (const pthread_attr_t *attr)
{
  return (struct xp_attr *) attr;
}

/* The default stack size follows RLIMIT_STACK at start-up as in glibc:
   xp_default_attr_init reads it, from the library's constructor.  */
void xp_default_attr_init (void) XP_HIDDEN;
size_t xp_default_stack_size (void) XP_HIDDEN;
size_t xp_page_size (void) XP_HIDDEN;

#endif
