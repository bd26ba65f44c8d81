/* pthread_getattr_np: the attributes a thread actually runs with.

   The stack comes from the descriptor for threads xpthread started.  The
   main thread's stack is the kernel's, found the way glibc finds it: the
   mapping holding __libc_stack_end, with the size RLIMIT_STACK allows (the
   kernel grows the mapping on demand) but never reaching down into the
   mapping below.  Threads run by glibc (hosted mode) are asked of glibc,
   and so are the threads glibc started on its own (SIGEV_THREAD timers,
   libraries that call glibc's pthread_create): their IDs are glibc's.

   Scheduling and affinity are asked of the kernel while the thread lives;
   an exited thread that is not yet joined keeps the defaults.  */
#define _GNU_SOURCE
#include "attr.h"
#include "compat.h"
#include "export.h"
#include "glibc-threads.h"
#include "sched-util.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

extern void *__libc_stack_end;

struct stack_area
{
  void *low;
  size_t size;
  size_t guard;
};

struct mapping
{
  uintptr_t from;
  uintptr_t to;
  uintptr_t below_to;     /* end of the mapping before it, or 0 */
};

/* The /proc/self/maps line holding address.  */
static int
find_mapping (uintptr_t address, struct mapping *found)
{
  FILE *maps = fopen ("/proc/self/maps", "rce");
  if (maps == NULL)
    return errno;
  char *line = NULL;
  size_t capacity = 0;
  uintptr_t previous_to = 0;
  int err = ENOENT;
  while (getline (&line, &capacity, maps) > 0)
    {
      uintptr_t from, to;
      if (sscanf (line, "%" SCNxPTR "-%" SCNxPTR, &from, &to) != 2)
        continue;
      if (from <= address && address < to)
        {
          found->from = from;
          found->to = to;
          found->below_to = previous_to;
          err = 0;
          break;
        }
      previous_to = to;
    }
  free (line);
  fclose (maps);
  return err;
}

/* The pages above the one holding __libc_stack_end keep the arguments,
   environment and auxiliary vector; like glibc, leave them out so that
   nobody treats them as free stack.  */
static int
main_thread_stack (struct stack_area *stack)
{
  struct mapping m = { 0, 0, 0 };
  int err = find_mapping ((uintptr_t) __libc_stack_end, &m);
  if (err != 0)
    return err;
  struct rlimit limit;
  if (getrlimit (RLIMIT_STACK, &limit) != 0)
    return errno;
  size_t page = xp_page_size ();
  uintptr_t top = ((uintptr_t) __libc_stack_end & -page) + page;
  size_t size = 0;
  if (limit.rlim_cur > m.to - top)
    size = (limit.rlim_cur - (m.to - top)) & -page;
  if (size > top - m.below_to)
    size = top - m.below_to;
  stack->low = (void *) (top - size);
  stack->size = size;
  stack->guard = 0;
  return 0;
}

/* Through glibc's own function: glibc's attr layout is not ours.  */
static int
glibc_thread_stack (pthread_t host, struct stack_area *stack)
{
  struct xp_glibc_thread_attr g;
  int err = xp_glibc_thread_attr (host, &g);
  if (err != 0)
    return err;
  stack->low = g.stack_low;
  stack->size = g.stack_size;
  stack->guard = g.guard_size;
  return 0;
}

/* 0 with stack->size 0 when the stack cannot be known.  */
static int
thread_stack (struct xp_thread *t, struct stack_area *stack)
{
  stack->size = 0;
  if (t->stack_size != 0)
    {
      stack->low = t->stack_base;
      stack->size = t->stack_size;
      stack->guard = t->guard_size;
      return 0;
    }
  if (xp_is_main_thread (t))
    return main_thread_stack (stack);
  if (t->host != 0)
    return glibc_thread_stack (t->host, stack);
  return 0;
}

static void
fill_scheduling (int tid, struct xp_attr *a)
{
  int policy = (int) xp_syscall1 (SYS_sched_getscheduler, tid);
  struct sched_param param;
  if (policy >= 0 && xp_syscall2 (SYS_sched_getparam, tid, &param) == 0)
    {
      a->policy = policy;
      a->priority = param.sched_priority;
    }
}

/* The kernel refuses a buffer smaller than its own cpu mask, whose size
   user space cannot ask for: grow until it fits, as glibc does.  */
static int
fill_affinity (pthread_t thread, pthread_attr_t *attr)
{
  size_t size = sizeof (cpu_set_t);
  for (;;)
    {
      cpu_set_t *set = malloc (size);
      if (set == NULL)
        return ENOMEM;
      int err = pthread_getaffinity_np (thread, size, set);
      if (err == 0)
        err = pthread_attr_setaffinity_np (attr, size, set);
      free (set);
      if (err != EINVAL || size >= 1024 * 1024)
        return err == ESRCH ? 0 : err;
      size *= 2;
    }
}

/* A thread glibc started: what glibc says of it, in our layout.  */
static int
foreign_attr (pthread_t thread, pthread_attr_t *attr)
{
  struct xp_glibc_thread_attr g;
  int err = xp_glibc_thread_attr (thread, &g);
  if (err != 0)
    return err;
  pthread_attr_init (attr);
  struct xp_attr *a = xp_attr (attr);
  if (g.detach_state == PTHREAD_CREATE_DETACHED)
    a->flags |= XP_ATTR_DETACHED;
  if (g.inherit_sched == PTHREAD_EXPLICIT_SCHED)
    a->flags |= XP_ATTR_EXPLICIT_SCHED;
  if (g.scope == PTHREAD_SCOPE_PROCESS)
    a->flags |= XP_ATTR_SCOPE_PROCESS;
  a->stack_addr = g.stack_low;
  a->stack_size = g.stack_size;
  a->guard_size = g.guard_size;
  a->flags |= XP_ATTR_STACK_SET | XP_ATTR_STACKSIZE_SET;
  a->policy = g.policy;
  a->priority = g.priority;
  err = fill_affinity (thread, attr);
  if (err != 0)
    pthread_attr_destroy (attr);
  return err;
}

int
pthread_getattr_np (pthread_t thread, pthread_attr_t *attr)
{
  struct xp_thread *t = xp_thread_of (thread);
  if (t == NULL)
    return foreign_attr (thread, attr);
  /* Joined: its ID outlived it, as pthread_join answers.  */
  unsigned join_state = xp_load_acquire (&t->join_state);
  if (join_state & XP_JOIN_RELEASED)
    return ESRCH;
  pthread_attr_init (attr);
  struct xp_attr *a = xp_attr (attr);

  if (join_state & XP_JOIN_DETACHED)
    a->flags |= XP_ATTR_DETACHED;

  struct stack_area stack;
  int err = thread_stack (t, &stack);
  if (err != 0)
    return err;
  if (stack.size != 0)
    {
      a->stack_addr = stack.low;
      a->stack_size = stack.size;
      a->guard_size = stack.guard;
      a->flags |= XP_ATTR_STACK_SET | XP_ATTR_STACKSIZE_SET;
    }

  struct xp_pin pin;
  int tid = xp_thread_pin_sched (t, &pin);
  if (tid >= 0)
    {
      fill_scheduling (tid, a);
      xp_thread_unpin (&pin);
    }
  err = fill_affinity (thread, attr);
  if (err != 0)
    pthread_attr_destroy (attr);
  return err;
}
XP_EXPORT (pthread_getattr_np)
