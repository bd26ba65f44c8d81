/* The loaded objects, as the lock debugging tools see them.  The dynamic
   linker counts loads and unloads; the tools read the counts on their
   slow paths and, when they moved, read the objects again, and log the
   ranges that went away (lockdep retires the classes keyed there, at its
   own pace: xp_objects_gone).  Lookups use that table, not dladdr: dladdr
   takes the dynamic linker's load lock, which a thread in dlopen holds
   while the object's constructors run, and they may take locks that
   wait for the tools'.  The table is under a lock of its own, a leaf:
   lockdep and the profiler both call in, each under its own lock.  */
#define _GNU_SOURCE
#include "objects.h"
#include "fork-locks.h"
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

enum object_role
{
  OTHER_OBJECT,
  WRAPPER_OBJECT,           /* libstdc++: its lock calls are the program's */
  OWN_OBJECT                /* xpthread */
};

struct object_range
{
  uintptr_t start, end;
  enum object_role role;
};

struct objects
{
  struct object_range *ranges;
  size_t n, size;
};

static XP_FORK_LOCK (objects, objects_lock);
static struct objects seen_objects;
static struct objects gone_log;
static unsigned long long seen_adds, seen_subs;

/* xpthread's own image, once seen, read without the lock.  */
static uintptr_t own_start, own_end;

/* OBJECTS with room for one more range; false when memory ran out.
   Memory from the kernel: the callers run inside lock paths.  */
static bool
room_for_one (struct objects *objects)
{
  if (objects->n < objects->size)
    return true;
  size_t size = objects->size == 0 ? 64 : 2 * objects->size;
  void *more = mmap (NULL, size * sizeof (struct object_range),
                     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
  if (more == MAP_FAILED)
    return false;
  if (objects->size != 0)
    {
      memcpy (more, objects->ranges, objects->n * sizeof *objects->ranges);
      munmap (objects->ranges, objects->size * sizeof *objects->ranges);
    }
  objects->ranges = more;
  objects->size = size;
  return true;
}

static int
read_counts (struct dl_phdr_info *info, size_t size, void *arg)
{
  unsigned long long *counts = arg;
  if (size >= offsetof (struct dl_phdr_info, dlpi_subs)
              + sizeof info->dlpi_subs)
    {
      counts[0] = info->dlpi_adds;
      counts[1] = info->dlpi_subs;
    }
  return 1;
}

/* Every dl_iterate_phdr of ours runs under the objects' lock, which a
   fork takes first: glibc's child does not reset the lock
   dl_iterate_phdr holds, and a fork that cut one of ours short would
   leave the child's next look hanging.  A thread that does not get the
   lock soon (a signal handler whose thread holds it) answers a
   generation nobody has seen, which costs a name looked up again.  */
#define GENERATION_PATIENCE_MS 10

unsigned long long
xp_objects_generation (void)
{
  static unsigned long long unseen = 1ull << 63;
  if (!xp_lock_within (&objects_lock, GENERATION_PATIENCE_MS))
    return xp_fetch_add (&unseen, 1);
  unsigned long long counts[2] = { 0, 0 };
  dl_iterate_phdr (read_counts, counts);
  xp_unlock (&objects_lock);
  return counts[0] + (counts[1] << 32);
}

static int
add_object (struct dl_phdr_info *info, size_t size, void *arg)
{
  struct objects *objects = arg;
  struct object_range r = { UINTPTR_MAX, 0, OTHER_OBJECT };
  (void) size;
  for (unsigned i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_LOAD)
      {
        uintptr_t start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
        r.start = start < r.start ? start : r.start;
        r.end = start + info->dlpi_phdr[i].p_memsz > r.end
                ? start + info->dlpi_phdr[i].p_memsz : r.end;
      }
  if (r.end == 0 || !room_for_one (objects))
    return 0;
  uintptr_t own = (uintptr_t) add_object;
  if (own >= r.start && own < r.end)
    {
      r.role = OWN_OBJECT;
      xp_store_relaxed (&own_start, r.start);
      xp_store_relaxed (&own_end, r.end);
    }
  else if (info->dlpi_name != NULL
           && strstr (info->dlpi_name, "libstdc++") != NULL)
    r.role = WRAPPER_OBJECT;
  objects->ranges[objects->n++] = r;
  return 0;
}

/* Is R among the first N ranges of OBJECTS?  */
static bool
still_loaded (const struct object_range *r, const struct objects *objects,
              size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (objects->ranges[i].start == r->start
        && objects->ranges[i].end == r->end)
      return true;
  return false;
}

/* Under the objects' lock.  Objects come in load order, the new ones
   last: one loaded again at its old place is new, its old self gone.  */
static void
refresh (void)
{
  unsigned long long counts[2] = { 0, 0 };
  dl_iterate_phdr (read_counts, counts);
  if (counts[0] == seen_adds && counts[1] == seen_subs)
    return;
  static struct objects next;
  next.n = 0;
  dl_iterate_phdr (add_object, &next);
  size_t added = (size_t) (counts[0] - seen_adds);
  size_t old = next.n > added ? next.n - added : 0;
  if (counts[1] != seen_subs)
    for (size_t i = 0; i < seen_objects.n; i++)
      if (!still_loaded (&seen_objects.ranges[i], &next, old)
          && room_for_one (&gone_log))
        gone_log.ranges[gone_log.n++] = seen_objects.ranges[i];
  struct objects swap = seen_objects;
  seen_objects = next;
  next = swap;
  seen_adds = counts[0];
  seen_subs = counts[1];
}

size_t
xp_objects_gone (size_t seen, void (*gone) (uintptr_t start, uintptr_t end))
{
  xp_lock (&objects_lock);
  refresh ();
  size_t n = gone_log.n;
  for (size_t i = seen; i < n; i++)
    gone (gone_log.ranges[i].start, gone_log.ranges[i].end);
  xp_unlock (&objects_lock);
  return n;
}

/* Under the objects' lock.  */
static const struct object_range *
object_of (const void *addr)
{
  for (size_t i = 0; i < seen_objects.n; i++)
    if ((uintptr_t) addr >= seen_objects.ranges[i].start
        && (uintptr_t) addr < seen_objects.ranges[i].end)
      return &seen_objects.ranges[i];
  return NULL;
}

bool
xp_objects_static (const void *addr)
{
  xp_lock (&objects_lock);
  refresh ();
  bool found = object_of (addr) != NULL;
  xp_unlock (&objects_lock);
  return found;
}

bool
xp_objects_own (const void *pc)
{
  return (uintptr_t) pc >= xp_load_relaxed (&own_start)
         && (uintptr_t) pc < xp_load_relaxed (&own_end);
}

struct stack_walk
{
  struct xp_stack *stack;
  bool in_xpthread;         /* still in the frames of xpthread's own */
};

/* Records the frames from the first one outside xpthread on.  */
static _Unwind_Reason_Code
record_frame (struct _Unwind_Context *context, void *arg)
{
  struct stack_walk *walk = arg;
  void *pc = (void *) _Unwind_GetIP (context);
  if (pc == NULL || walk->stack->depth == XP_STACK_DEPTH)
    return _URC_END_OF_STACK;
  if (walk->in_xpthread && xp_objects_own (pc))
    return _URC_NO_REASON;
  walk->in_xpthread = false;
  walk->stack->pc[walk->stack->depth++] = pc;
  return _URC_NO_REASON;
}

/* The unwinder finds frames with glibc's _dl_find_object, which takes no
   lock, or dl_iterate_phdr, whose lock no constructor runs under.  */
void
xp_objects_capture_stack (struct xp_stack *stack)
{
  struct stack_walk walk = { stack, true };
  stack->depth = 0;
  _Unwind_Backtrace (record_frame, &walk);
}

/* Under the objects' lock.  */
static bool
in_wrapper (const void *pc)
{
  const struct object_range *r = object_of (pc);
  return r != NULL && r->role != OTHER_OBJECT;
}

const void *
xp_objects_program_site (const void *site)
{
  if (!xp_fork_lock_for_hook (&objects_lock))
    return site;
  refresh ();
  bool wrapped = site != NULL && in_wrapper (site);
  xp_unlock (&objects_lock);
  if (!wrapped)
    return site;
  struct xp_stack stack;
  xp_objects_capture_stack (&stack);
  if (!xp_fork_lock_for_hook (&objects_lock))
    return site;
  for (unsigned i = 0; i < stack.depth; i++)
    if (!in_wrapper (stack.pc[i]))
      {
        site = stack.pc[i];
        break;
      }
  xp_unlock (&objects_lock);
  return site;
}
