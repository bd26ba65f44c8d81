/* Lockdep's reports: text a person reads at a glance, written to the
   standard error the program started with or XPTHREAD_LOCKDEP_FILE
   (report-fd.h), where each report
   is followed by the same as one line of JSON, for programs.  Names come
   from the objects' symbol tables and debug information (sym.c), read
   when a report is written, never on a lock path.  */
#define _GNU_SOURCE
#include "lockdep-int.h"
#include "cancel.h"
#include "env.h"
#include "report-fd.h"
#include "sym.h"
#include "thread.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int report_fd = STDERR_FILENO;
static bool json_lines;

void
xp_ld_report_open (void)
{
  const char *path = xp_env_string ("XPTHREAD_LOCKDEP_FILE");
  if (path == NULL)
    return;
  int fd = xp_report_open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                           0644);
  if (fd < 0)
    xp_warn ("lockdep: cannot open XPTHREAD_LOCKDEP_FILE=%s; reporting "
             "on standard error", path);
  else
    {
      report_fd = fd;
      json_lines = true;
    }
}

/* One report is built here, under the lockdep lock, and written at
   once, so that reports of two threads never mix.  */
static char text[16384];
static size_t used;

/* Inside a JSON string: what is said is escaped.  */
static bool escaping;

static void
append (char c)
{
  if (used < sizeof text - 1)
    text[used++] = c;
}

static void __attribute__ ((format (printf, 1, 2)))
say (const char *fmt, ...)
{
  char piece[1024];
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (piece, sizeof piece, fmt, ap);
  va_end (ap);
  for (int i = 0; i < n && i < (int) sizeof piece - 1; i++)
    {
      unsigned char c = (unsigned char) piece[i];
      if (escaping && (c == '"' || c == '\\'))
        append ('\\');
      if (!escaping || c >= 0x20)
        append ((char) c);
    }
}

static void
flush (void)
{
  xp_report_write (report_fd, text, used);
  used = 0;
}

static void
say_code (const void *pc)
{
  if (pc == NULL)
    {
      say ("a place not known");
      return;
    }
  char name[256];
  xp_sym_describe_code (pc, name, sizeof name);
  say ("%s", name);
}

/* A site is the return address of the program's call: the call is the
   byte before.  */
static void
say_site (const void *site)
{
  if (site == NULL)
    {
      say_code (NULL);
      return;
    }
  char name[384];
  xp_sym_describe_site ((const char *) site - 1, name, sizeof name);
  say ("%s", name);
}

/* The object that defines the program's malloc, when it is not libc:
   such an allocator's locks are pthread mutexes, which lockdep sees, and
   a report may be written while the thread holds one.  glibc's malloc
   has locks of its own.  */
static const void *
allocator_base (void)
{
  Dl_info alloc, libc;
  void *fn = dlsym (RTLD_DEFAULT, "malloc");
  if (fn == NULL || dladdr (fn, &alloc) == 0
      || dladdr ((void *) gnu_get_libc_version, &libc) == 0
      || alloc.dli_fbase == libc.dli_fbase)
    return NULL;
  return alloc.dli_fbase;
}

static bool
in_object (const void *pc, const void *base)
{
  Dl_info info;
  return pc != NULL && dladdr (pc, &info) != 0 && info.dli_fbase == base;
}

/* The cancellation state the report found (xp_cancel_hold), given back
   when it ends; reports are written one at a time.  */
static unsigned cancel_held;

/* A report of the thread holding HELD and taking at SITE begins.  No
   cancel acts while it is written.  Naming may call malloc (the
   demangler, libdw) unless the thread holds or is taking at SITE a lock
   of the allocator's own, which malloc could wait for forever.  */
static void
begin_report (const struct xp_ld_held *held, unsigned depth,
              const void *site)
{
  cancel_held = xp_cancel_hold ();
  const void *base = allocator_base ();
  bool inside = base != NULL && in_object (site, base);
  for (unsigned i = 0; i < depth && !inside; i++)
    inside = in_object (held[i].site, base);
  xp_sym_allow_malloc (!inside);
}

static bool
in_some_object (const void *addr)
{
  Dl_info info;
  return dladdr (addr, &info) != 0 && info.dli_fname != NULL;
}

static void
say_class (uint32_t id)
{
  const struct xp_ld_class *c = xp_ld_class (id);
  char name[256];
  switch (c->origin)
    {
    case XP_LD_STATIC:
      xp_sym_describe_data (c->key, name, sizeof name);
      say ("%s", name);
      break;
    case XP_LD_INSTANCE:
      /* A lock of its own: named like a static one where it is a
         variable, else by its address.  */
      if (in_some_object (c->key))
        {
          xp_sym_describe_data (c->key, name, sizeof name);
          say ("%s", name);
        }
      else
        say ("lock %p", c->key);
      break;
    case XP_LD_INIT_SITE:
      say ("the locks initialised at ");
      say_site (c->key);
      break;
    case XP_LD_FIRST_LOCK:
      say ("the locks first taken at ");
      say_site (c->key);
      break;
    case XP_LD_THREAD_END:
      say ("the end of the threads running ");
      say_code (c->key);
      break;
    }
}

static void
say_thread (int tid)
{
  char path[64], name[32] = "";
  snprintf (path, sizeof path, "/proc/self/task/%d/comm", tid);
  int fd = xp_report_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (fd >= 0)
    {
      ssize_t n = xp_report_read (fd, name, sizeof name - 1);
      xp_report_close (fd);
      if (n > 0)
        name[n - (name[n - 1] == '\n')] = '\0';
    }
  say ("thread %d", tid);
  if (name[0] != '\0')
    say (" \"%s\"", name);
}

static void
say_one_held (unsigned i, const struct xp_ld_held *h)
{
  say ("    #%u %p, ", i, (const void *) h->lock);
  say_class (h->class_id);
  say (", taken%s at ", (h->flags & XP_LD_READ) ? " for reading" : "");
  say_site (h->site);
  say ("\n");
}

static bool
is_thread_end (uint32_t class_id)
{
  return xp_ld_class (class_id)->origin == XP_LD_THREAD_END;
}

/* A thread's own end, which it holds from its start, is left out.  */
static bool
shown (const struct xp_ld_held *h)
{
  return !is_thread_end (h->class_id);
}

static void
say_held (const struct xp_ld_held *held, unsigned depth)
{
  unsigned n = 0;
  for (unsigned i = 0; i < depth; i++)
    n += shown (&held[i]);
  say ("  it holds %u lock%s%s\n", n, n == 1 ? "" : "s", n == 0 ? "" : ":");
  for (unsigned i = 0, k = 0; i < depth; i++)
    if (shown (&held[i]))
      say_one_held (k++, &held[i]);
}

static void
say_stack (const struct xp_stack *stack)
{
  for (unsigned i = 0; i < stack->depth; i++)
    {
      say ("        at ");
      say_site (stack->pc[i]);
      say ("\n");
    }
}

/* "KEY":"…", the text between said by a say_ function.  */
static void
json_string (const char *key)
{
  say ("\"%s\":\"", key);
  escaping = true;
}

static void
json_string_end (void)
{
  escaping = false;
  say ("\"");
}

static void
json_class (const char *key, uint32_t id)
{
  json_string (key);
  say_class (id);
  json_string_end ();
}

static void
json_site (const char *key, const void *site)
{
  json_string (key);
  say_site (site);
  json_string_end ();
}

static void
json_held (const struct xp_ld_held *h)
{
  say ("{\"lock\":\"%p\",", (const void *) h->lock);
  json_class ("class", h->class_id);
  say (",\"for_reading\":%s,", (h->flags & XP_LD_READ) ? "true" : "false");
  json_site ("taken_at", h->site);
  say ("}");
}

static void
json_held_list (const struct xp_ld_held *held, unsigned depth)
{
  say ("\"held\":[");
  for (unsigned i = 0, k = 0; i < depth; i++)
    if (shown (&held[i]))
      {
        say (k++ == 0 ? "" : ",");
        json_held (&held[i]);
      }
  say ("]");
}

static void
json_stack (const struct xp_stack *stack)
{
  say ("\"stack\":[");
  for (unsigned i = 0; i < stack->depth; i++)
    {
      say (i == 0 ? "\"" : ",\"");
      escaping = true;
      say_site (stack->pc[i]);
      json_string_end ();
    }
  say ("]");
}

/* The text report is in the buffer: write it, then its JSON line, which
   JSON (when reports go to a file) says.  */
static void
finish_with (void (*json) (const void *), const void *arg)
{
  say ("\n");
  flush ();
  if (json_lines)
    {
      json (arg);
      say ("\n");
      flush ();
    }
  if (xp_ld_abort_after_report)
    {
      used = 0;
      say ("xpthread lockdep: aborting (XPTHREAD_LOCKDEP=abort)\n");
      flush ();
      abort ();
    }
  xp_cancel_resume (cancel_held);
}

struct cycle_report
{
  const void *lock;
  const uint32_t *cycle;
  unsigned n;
  const struct xp_ld_held *held;
  unsigned depth;
};

/* The thread that took every order of the cycle, alone; 0 when orders
   come from two threads.  */
static int
one_thread (const uint32_t *cycle, unsigned n)
{
  int tid = xp_ld_edge (cycle[0])->tid;
  for (unsigned i = 0; i < n; i++)
    {
      const struct xp_ld_edge *e = xp_ld_edge (cycle[i]);
      if (e->many_threads || e->tid != tid)
        return 0;
    }
  return tid;
}

/* The kernel's name of an order's kind: -(EN)-> and the like.  */
static const char *
dependency_name (unsigned kind)
{
  static const char names[4][3] = { "EN", "SN", "ER", "SR" };
  return names[kind & 3];
}

static void
json_cycle (const void *arg)
{
  const struct cycle_report *r = arg;
  const struct xp_ld_edge *closing = xp_ld_edge (r->cycle[r->n - 1]);
  say ("{\"report\":\"cycle\",\"thread\":%d,\"lock\":\"%p\",",
       xp_self_tid (), r->lock);
  json_class ("class", closing->to);
  say (",\"one_thread\":%s,",
       one_thread (r->cycle, r->n) != 0 ? "true" : "false");
  json_held_list (r->held, r->depth);
  say (",\"orders\":[");
  for (unsigned i = 0; i < r->n; i++)
    {
      const struct xp_ld_edge *e = xp_ld_edge (r->cycle[i]);
      say ("%s{", i == 0 ? "" : ",");
      json_class ("first", e->from);
      say (",");
      json_class ("second", e->to);
      say (",\"first_for_reading\":%s,\"second_for_reading\":%s,"
           "\"dependency\":\"%s\",\"thread\":%d,",
           (e->kind & XP_LD_SHARED_FIRST) ? "true" : "false",
           e->read_second ? "true" : "false", dependency_name (e->kind),
           e->tid);
      json_site ("first_taken_at", is_thread_end (e->from) ? NULL
                                                           : e->held_site);
      say (",");
      json_stack (&e->stack);
      say ("}");
    }
  say ("]}");
}

void
xp_ld_report_cycle (const void *lock, const uint32_t *cycle, unsigned n,
                    const struct xp_ld_held *held, unsigned depth)
{
  const struct xp_ld_edge *closing = xp_ld_edge (cycle[n - 1]);
  begin_report (held, depth, closing->stack.depth != 0 ? closing->stack.pc[0]
                                                       : NULL);
  say ("xpthread lockdep: possible deadlock: a cycle of %u lock orders\n", n);
  say_thread (xp_self_tid ());
  say (" is taking %p, ", lock);
  say_class (closing->to);
  say ("\n");
  say_held (held, depth);
  say ("  the orders, each seen in a run of the program:\n");
  for (unsigned i = 0; i < n; i++)
    {
      const struct xp_ld_edge *e = xp_ld_edge (cycle[i]);
      say ("    %u. ", i + 1);
      say_class (e->from);
      say ("\n       before ");
      say_class (e->to);
      say ("\n       in ");
      say_thread (e->tid);
      if (is_thread_end (e->from))
        say (", one of those threads, which took the second\n");
      else
        {
          say (", which held the first%s (taken at ",
               (e->kind & XP_LD_SHARED_FIRST) ? " for reading" : "");
          say_site (e->held_site);
          say (is_thread_end (e->to) ? ") and joined one of them\n"
               : e->read_second ? ") and took the second for reading\n"
               : ") and took the second\n");
        }
      say_stack (&e->stack);
    }
  int alone = one_thread (cycle, n);
  if (alone != 0)
    {
      say ("  all these orders were seen in one thread, ");
      say_thread (alone);
      say ("; another run can take them in two threads at once\n");
    }
  struct cycle_report r = { lock, cycle, n, held, depth };
  finish_with (json_cycle, &r);
}

struct self_report
{
  const struct xp_ld_held *again, *held;
  unsigned depth;
};

static void
json_self (const void *arg)
{
  const struct self_report *r = arg;
  say ("{\"report\":\"self-deadlock\",\"thread\":%d,\"taking\":",
       xp_self_tid ());
  json_held (r->again);
  say (",");
  json_held_list (r->held, r->depth);
  say ("}");
}

void
xp_ld_report_self (const struct xp_ld_held *again,
                   const struct xp_ld_held *held, unsigned depth)
{
  begin_report (held, depth, again->site);
  say ("xpthread lockdep: deadlock: a thread takes a lock it holds\n");
  say_thread (xp_self_tid ());
  say (" is taking %p, ", again->lock);
  say_class (again->class_id);
  say (", at ");
  say_site (again->site);
  say ((again->flags & XP_LD_READ)
       ? ", and will wait for itself once a writer waits\n"
       : ", and will wait for itself forever\n");
  say_held (held, depth);
  struct self_report r = { again, held, depth };
  finish_with (json_self, &r);
}

struct cond_report
{
  const void *cond, *mutex, *site;
  const struct xp_ld_held *kept;
};

static void
json_cond (const void *arg)
{
  const struct cond_report *r = arg;
  say ("{\"report\":\"condition-wait\",\"thread\":%d,\"cond\":\"%p\","
       "\"mutex\":\"%p\",", xp_self_tid (), r->cond, r->mutex);
  json_site ("at", r->site);
  say (",\"kept\":");
  json_held (r->kept);
  say ("}");
}

void
xp_ld_report_cond_wait (const void *cond, const void *mutex,
                        const void *site, const struct xp_ld_held *kept)
{
  begin_report (kept, 1, site);
  say ("xpthread lockdep: warning: a condition wait keeps another lock\n");
  say_thread (xp_self_tid ());
  say (" waits on condition variable %p at ", cond);
  say_site (site);
  say (", releasing mutex %p, but keeps:\n", mutex);
  say_one_held (0, kept);
  say ("  a thread that needs it before it signals will never signal\n");
  struct cond_report r = { cond, mutex, site, kept };
  finish_with (json_cond, &r);
}

struct misuse_report
{
  enum xp_ld_misuse what;
  const void *lock;
  uint32_t class_id;
  const struct xp_stack *stack;
  const struct xp_ld_held *held;
  unsigned depth;
};

static const char *const misuse_names[] = {
  [XP_LD_RELEASE_UNHELD] = "release-unheld",
  [XP_LD_DESTROY_HELD] = "destroy-held",
  [XP_LD_EXIT_HOLDING] = "exit-holding",
};

static void
json_misuse (const void *arg)
{
  const struct misuse_report *r = arg;
  say ("{\"report\":\"%s\",\"thread\":%d,", misuse_names[r->what],
       xp_self_tid ());
  if (r->what != XP_LD_EXIT_HOLDING)
    {
      say ("\"lock\":\"%p\",", r->lock);
      json_class ("class", r->class_id);
      say (",");
    }
  json_stack (r->stack);
  say (",");
  json_held_list (r->held, r->depth);
  say ("}");
}

void
xp_ld_report_misuse (enum xp_ld_misuse what, const void *lock,
                     uint32_t class_id, const struct xp_stack *stack,
                     const struct xp_ld_held *held, unsigned depth)
{
  begin_report (held, depth, stack->depth ? stack->pc[0] : NULL);
  if (what == XP_LD_EXIT_HOLDING)
    {
      say ("xpthread lockdep: a thread ends holding locks, which nobody "
           "can release\n");
      say_thread (xp_self_tid ());
      say (" ends\n");
    }
  else
    {
      say (what == XP_LD_RELEASE_UNHELD
           ? "xpthread lockdep: bad unlock: a thread releases a lock it "
             "does not hold\n"
           : "xpthread lockdep: a thread destroys a lock it holds\n");
      say_thread (xp_self_tid ());
      say (what == XP_LD_RELEASE_UNHELD ? " releases %p, " : " destroys %p, ",
           lock);
      say_class (class_id);
      say ("\n");
    }
  say_stack (stack);
  say_held (held, depth);
  struct misuse_report r = { what, lock, class_id, stack, held, depth };
  finish_with (json_misuse, &r);
}

/* The names of the gates of the cycles not reported, in text or as a
   list of JSON strings.  */
static void
say_gates (const struct xp_ld_summary *s, bool json)
{
  for (unsigned i = 0; i < s->gates_n; i++)
    {
      say (i == 0 ? "" : json ? "," : ", ");
      if (json)
        {
          say ("\"");
          escaping = true;
        }
      say_class (s->gates[i]);
      if (json)
        json_string_end ();
    }
  if (s->more_gates && !json)
    say (", and others");
}

void
xp_ld_report_summary (const struct xp_ld_summary *s)
{
  say ("xpthread lockdep: %u lock class%s, %u lock order%s, %u report%s",
       s->classes, s->classes == 1 ? "" : "es", s->edges,
       s->edges == 1 ? "" : "s", s->reports, s->reports == 1 ? "" : "s");
  if (s->retired != 0)
    say ("; %u class%s retired with %s unloaded object%s", s->retired,
         s->retired == 1 ? "" : "es", s->retired == 1 ? "its" : "their",
         s->retired == 1 ? "" : "s");
  if (s->gated != 0)
    {
      say ("; %u cycle%s inside a gate, not reported: ", s->gated,
           s->gated == 1 ? "" : "s");
      say_gates (s, false);
    }
  say ("\n");
  flush ();
  if (json_lines)
    {
      say ("{\"report\":\"summary\",\"classes\":%u,\"orders\":%u,"
           "\"reports\":%u,\"retired\":%u,\"gated\":%u,\"memory\":%zu,"
           "\"gates\":[", s->classes, s->edges, s->reports, s->retired,
           s->gated, s->memory);
      say_gates (s, true);
      say ("]}\n");
      flush ();
    }
}
