/* Lockdep's reports: text a person reads at a glance, written to the
   standard error the program started with or XPTHREAD_LOCKDEP_FILE
   (report-fd.h), where each report is followed by the same as one line
   of JSON, for programs.  Names come from the objects' symbol tables and
   debug information (sym.c), found when a report is written, never on a
   lock path nor under lockdep's lock.  */
#define _GNU_SOURCE
#include "lockdep-int.h"
#include "cancel.h"
#include "env.h"
#include "report-fd.h"
#include "fork-locks.h"
#include "sched-util.h"
#include "sym.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* A report is made in two steps.  Under the lockdep lock its text is
   built, with each address that is to be named left as a mark; once
   lockdep.c has released the lock, xp_ld_report_deliver puts the names
   in and writes the text.  Naming calls dladdr, which waits for the
   dynamic linker's lock, and may allocate; a thread in dlopen holds that
   lock while the constructors it runs take locks, which go through
   lockdep, so lockdep's lock is never held while naming.

   A mark: MARK, the kind of name (enum mark_kind), 'j' inside a JSON
   string or 't' outside, and the address in MARK_DIGITS hexadecimal
   digits.  MARK is taken out of everything else said.  */
#define MARK '\001'
#define MARK_DIGITS 16
#define MARK_SIZE (3 + MARK_DIGITS)

enum mark_kind
{
  MARK_CODE = 'c',          /* a function */
  MARK_SITE = 's',          /* a place in one */
  MARK_DATA = 'd',          /* a variable */
  MARK_LOCK = 'l'           /* a lock of its own: a variable's name, else
                               its address */
};

/* The reports one entry into lockdep made, and their names; whole pages
   of their own, so that a signal handler's report and the report it
   interrupted never share one.  */
#define MARKED_SIZE 32768
#define TEXT_SIZE 65536
#define SITES_KEPT 32

struct xp_ld_pending
{
  size_t marked_used, text_used;
  bool abort_after;         /* XPTHREAD_LOCKDEP=abort, after a report */
  /* The sites of the locks the reporting thread holds and takes, for
     xp_sym_names_begin; SITES_KEPT + 1: more than kept.  */
  unsigned sites_n;
  const void *sites[SITES_KEPT];
  struct xp_sym_names names;
  char marked[MARKED_SIZE];
  char text[TEXT_SIZE];
};

/* The reports of the thread inside lockdep, under the lockdep lock.  */
static struct xp_ld_pending *pending;

/* Inside a JSON string: what is said is escaped.  */
static bool escaping;

/* N bytes of S at the end of BUF, of SIZE bytes of which *USED are
   used, escaped for a JSON string when IN_JSON, without MARK.  */
static void
add (char *buf, size_t size, size_t *used, const char *s, size_t n,
     bool in_json)
{
  for (size_t i = 0; i < n && *used + 2 < size; i++)
    {
      unsigned char c = (unsigned char) s[i];
      if (c == MARK || (in_json && c < 0x20))
        continue;
      if (in_json && (c == '"' || c == '\\'))
        buf[(*used)++] = '\\';
      buf[(*used)++] = (char) c;
    }
}

static void __attribute__ ((format (printf, 1, 2)))
say (const char *fmt, ...)
{
  if (pending == NULL)
    return;
  char piece[1024];
  va_list ap;
  va_start (ap, fmt);
  int n = vsnprintf (piece, sizeof piece, fmt, ap);
  va_end (ap);
  if (n > (int) sizeof piece - 1)
    n = (int) sizeof piece - 1;
  if (n > 0)
    add (pending->marked, sizeof pending->marked, &pending->marked_used,
         piece, (size_t) n, escaping);
}

static void
mark (enum mark_kind kind, const void *addr)
{
  if (pending == NULL || pending->marked_used + MARK_SIZE
                         >= sizeof pending->marked)
    return;
  char *at = &pending->marked[pending->marked_used];
  at[0] = MARK;
  at[1] = (char) kind;
  at[2] = escaping ? 'j' : 't';
  snprintf (at + 3, MARK_DIGITS + 1, "%0*lx", MARK_DIGITS,
            (unsigned long) (uintptr_t) addr);
  pending->marked_used += MARK_SIZE;
}

static void
say_code (const void *pc)
{
  if (pc == NULL)
    say ("a place not known");
  else
    mark (MARK_CODE, pc);
}

/* A site is the return address of the program's call: the call is the
   byte before.  */
static void
say_site (const void *site)
{
  if (site == NULL)
    say_code (NULL);
  else
    mark (MARK_SITE, (const char *) site - 1);
}

/* A report of the thread holding HELD and taking at SITE begins.  */
static void
begin_report (const struct xp_ld_held *held, unsigned depth,
              const void *site)
{
  if (pending == NULL)
    {
      void *pages = mmap (NULL, sizeof *pending, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (pages == MAP_FAILED)
        return;
      pending = pages;
    }
  unsigned n = pending->sites_n;
  for (unsigned i = 0; i <= depth && n <= SITES_KEPT; i++)
    {
      const void *s = i < depth ? held[i].site : site;
      if (s != NULL && n < SITES_KEPT)
        pending->sites[n++] = s;
      else if (s != NULL)
        n = SITES_KEPT + 1;
    }
  pending->sites_n = n;
}

struct xp_ld_pending *
xp_ld_report_take (void)
{
  struct xp_ld_pending *p = pending;
  pending = NULL;
  return p;
}

/* The object that defines the program's malloc, when it is not libc:
   such an allocator's locks are pthread mutexes, which lockdep sees, and
   a report may be made while the thread holds one.  glibc's malloc
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

/* Naming may call malloc (the demangler, libdw) unless the thread holds
   or takes, at a site of P's, a lock of the allocator's own, which
   malloc could wait for forever.  */
static bool
may_allocate (const struct xp_ld_pending *p)
{
  const void *base = allocator_base ();
  if (base == NULL)
    return true;
  if (p->sites_n > SITES_KEPT)
    return false;
  for (unsigned i = 0; i < p->sites_n; i++)
    if (in_object (p->sites[i], base))
      return false;
  return true;
}

static bool
in_some_object (const void *addr)
{
  Dl_info info;
  return dladdr (addr, &info) != 0 && info.dli_fname != NULL;
}

/* The name for a mark of KIND at ADDR into OUT.  */
static void
name_mark (struct xp_sym_names *names, char kind, const void *addr,
           char *out, size_t size)
{
  switch (kind)
    {
    case MARK_CODE:
      xp_sym_describe_code (names, addr, out, size);
      break;
    case MARK_SITE:
      xp_sym_describe_site (names, addr, out, size);
      break;
    case MARK_LOCK:
      if (in_some_object (addr))
        xp_sym_describe_data (names, addr, out, size);
      else
        snprintf (out, size, "lock %p", addr);
      break;
    default:
      xp_sym_describe_data (names, addr, out, size);
    }
}

/* P's text: its marked text with the names in.  */
static void
render (struct xp_ld_pending *p)
{
  char digits[MARK_DIGITS + 1], name[512];
  const char *at = p->marked, *end = p->marked + p->marked_used;
  while (at < end)
    {
      const char *m = memchr (at, MARK, (size_t) (end - at));
      add (p->text, sizeof p->text, &p->text_used, at,
           (size_t) ((m != NULL ? m : end) - at), false);
      if (m == NULL || end - m < MARK_SIZE)
        break;
      memcpy (digits, m + 3, MARK_DIGITS);
      digits[MARK_DIGITS] = '\0';
      name_mark (&p->names, m[1],
                 (const void *) (uintptr_t) strtoul (digits, NULL, 16), name,
                 sizeof name);
      add (p->text, sizeof p->text, &p->text_used, name, strlen (name),
           m[2] == 'j');
      at = m + MARK_SIZE;
    }
}

static void
say_class (uint32_t id)
{
  const struct xp_ld_class *c = xp_ld_class (id);
  switch (c->origin)
    {
    case XP_LD_STATIC:
      mark (MARK_DATA, c->key);
      break;
    case XP_LD_INSTANCE:
      mark (MARK_LOCK, c->key);
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

/* The text report is said: end it, then say its JSON line, which JSON
   (when reports go to a file) says.  */
static void
finish_with (void (*json) (const void *), const void *arg)
{
  say ("\n");
  if (json_lines)
    {
      json (arg);
      say ("\n");
    }
  if (pending != NULL)
    pending->abort_after |= xp_ld_abort_after_report;
}

/* TEXT, written whole: two threads' reports never mix, and the write
   lock is held only for the write, with every signal blocked, so that a
   handler's report never waits for its own thread.  A fork that has
   held the lock table long lets the report through without the lock
   (fork-locks.h).  */
static XP_FORK_LOCK (report_write, write_lock);

static void
write_whole (const char *text, size_t n)
{
  sigset_t saved;
  xp_signals_block_all (&saved);
  bool locked = xp_fork_lock_for_hook (&write_lock);
  xp_report_write (report_fd, text, n);
  if (locked)
    xp_unlock (&write_lock);
  xp_signals_restore (&saved);
}

/* No cancel acts while the names are found: what finds them (libdw's
   file reading) may be a cancellation point.  */
void
xp_ld_report_deliver (struct xp_ld_pending *p)
{
  unsigned cancel_held = xp_cancel_hold ();
  xp_sym_names_begin (&p->names, may_allocate (p));
  render (p);
  xp_sym_names_end (&p->names);
  write_whole (p->text, p->text_used);
  bool abort_now = p->abort_after;
  munmap (p, sizeof *p);
  if (abort_now)
    {
      static const char aborting[]
        = "xpthread lockdep: aborting (XPTHREAD_LOCKDEP=abort)\n";
      write_whole (aborting, sizeof aborting - 1);
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
  begin_report (NULL, 0, NULL);
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
  if (json_lines)
    {
      say ("{\"report\":\"summary\",\"classes\":%u,\"orders\":%u,"
           "\"reports\":%u,\"retired\":%u,\"gated\":%u,\"memory\":%zu,"
           "\"gates\":[", s->classes, s->edges, s->reports, s->retired,
           s->gated, s->memory);
      say_gates (s, true);
      say ("]}\n");
    }
}
