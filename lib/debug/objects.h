/* The objects loaded in the process, as the lock debugging tools see
   them (objects.c): which object an address lies in, what its role is,
   and the program's frames of a stack.  Lockdep and the profiler share
   it, so that they give locks the same classes.  */
#ifndef XP_DEBUG_OBJECTS_H
#define XP_DEBUG_OBJECTS_H

#include "common.h"

#define XP_STACK_DEPTH 12

struct xp_stack
{
  unsigned depth;
  void *pc[XP_STACK_DEPTH];
};

/* Read the objects again if the dynamic linker loaded or unloaded any,
   then call GONE, with the objects' lock held, for each address range
   unloaded since the caller last looked: the first SEEN were seen then.
   Returns the number seen now.  */
size_t xp_objects_gone (size_t seen,
                        void (*gone) (uintptr_t start, uintptr_t end))
  XP_HIDDEN;

/* A number that changes whenever an object is loaded or unloaded.  */
unsigned long long xp_objects_generation (void) XP_HIDDEN;

/* Is ADDR in a loaded object's image (a static lock)?  */
bool xp_objects_static (const void *addr) XP_HIDDEN;

/* Is PC in xpthread's own image?  Lock-free; false until the objects
   were read once.  */
bool xp_objects_own (const void *pc) XP_HIDDEN;

/* SITE, or when it lies in xpthread or a library that wraps its locks
   (libstdc++), the first caller outside; SITE itself while a fork holds
   the objects' lock (the profiler calls it from a lock's
   initialisation, inside the program's locks: fork-locks.h).  */
const void *xp_objects_program_site (const void *site) XP_HIDDEN;

/* The frames of the calling thread from the first one outside
   xpthread on.  */
void xp_objects_capture_stack (struct xp_stack *stack) XP_HIDDEN;

#endif
