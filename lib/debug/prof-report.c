/* The profiler's reports: a table a person reads at a glance (text),
   the same counts as JSON, and folded stacks of wait time for a flame
   graph.  Addresses are named here, when a report is written, never on
   a lock path.  A report goes to standard error, or replaces the file
   XPTHREAD_PROF_FILE ("%p": the pid) whole, so that the file always
   holds the latest one.  */
#define _GNU_SOURCE
#include "prof-int.h"
#include "env.h"
#include "report-fd.h"
#include "sym.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum format { TEXT, JSON, FOLDED };

static enum format report_format;
static const char *report_path;
static long top_rows;

void
xp_prof_report_init (void)
{
  report_path = xp_env_string ("XPTHREAD_PROF_FILE");
  top_rows = xp_env_number ("XPTHREAD_PROF_TOP", 10, 1, 1000000);
  const char *f = xp_env_string ("XPTHREAD_PROF_FORMAT");
  if (f == NULL || strcmp (f, "text") == 0)
    report_format = TEXT;
  else if (strcmp (f, "json") == 0)
    report_format = JSON;
  else if (strcmp (f, "folded") == 0)
    report_format = FOLDED;
  else
    xp_warn ("XPTHREAD_PROF_FORMAT=%s is not text, json or folded; "
             "using text", f);
}

/* --- rows ----------------------------------------------------------------- */

/* The sites of one class and kind: a run of the sorted entries.  */
struct row
{
  struct xp_prof_entry total;
  const struct xp_prof_entry *sites;
  size_t sites_n;
};

static int
by_class_kind_wait (const void *a, const void *b)
{
  const struct xp_prof_entry *x = a, *y = b;
  if (x->class_id != y->class_id)
    return x->class_id < y->class_id ? -1 : 1;
  if (x->kind != y->kind)
    return x->kind < y->kind ? -1 : 1;
  return x->wait_ns > y->wait_ns ? -1 : x->wait_ns < y->wait_ns;
}

/* Locks by their total wait, then condition variables by theirs: a
   thread asleep in a condition wait waits for the program's reasons,
   not for a lock, and would head the table of every idle pool.  */
static int
by_wait (const void *a, const void *b)
{
  const struct row *x = a, *y = b;
  bool x_cond = x->total.kind == XP_PROF_COND;
  bool y_cond = y->total.kind == XP_PROF_COND;
  if (x_cond != y_cond)
    return x_cond ? 1 : -1;
  if (x->total.wait_ns != y->total.wait_ns)
    return x->total.wait_ns > y->total.wait_ns ? -1 : 1;
  return x->total.contended > y->total.contended ? -1
         : x->total.contended < y->total.contended;
}

static void
add_row_counts (struct xp_prof_entry *to, const struct xp_prof_entry *e)
{
  to->acquisitions += e->acquisitions;
  to->contended += e->contended;
  to->owner_changes += e->owner_changes;
  to->wait_ns += e->wait_ns;
  to->wait_max = e->wait_max > to->wait_max ? e->wait_max : to->wait_max;
  to->hold_ns += e->hold_ns;
  to->hold_samples += e->hold_samples;
  to->hold_max = e->hold_max > to->hold_max ? e->hold_max : to->hold_max;
  to->signals += e->signals;
  to->broadcasts += e->broadcasts;
  to->signals_no_waiter += e->signals_no_waiter;
  for (unsigned i = 0; i < XP_PROF_BUCKETS; i++)
    to->buckets[i] += e->buckets[i];
}

/* The owners' sites by the wait behind them, "other sites" last.  */
static int
by_blame (const void *a, const void *b)
{
  const struct xp_prof_held_by *x = a, *y = b;
  if ((x->waits == 0) != (y->waits == 0))
    return x->waits == 0 ? 1 : -1;
  if ((x->site == NULL) != (y->site == NULL))
    return x->site == NULL ? 1 : -1;
  return x->wait_ns > y->wait_ns ? -1 : x->wait_ns < y->wait_ns;
}

static void
sort_held_by (struct xp_prof_entry *e)
{
  qsort (e->held_by, XP_PROF_HELD_BY, sizeof *e->held_by, by_blame);
}

/* The rows of S, sorted by total wait; *N of them.  Sorts S's entries.  */
static struct row *
make_rows (const struct xp_prof_snapshot *s, size_t *n)
{
  qsort (s->entries, s->entries_n, sizeof *s->entries, by_class_kind_wait);
  for (size_t i = 0; i < s->entries_n; i++)
    sort_held_by (&s->entries[i]);
  struct row *rows = calloc (s->entries_n + 1, sizeof *rows);
  if (rows == NULL)
    return NULL;
  size_t r = 0;
  for (size_t i = 0; i < s->entries_n; r++)
    {
      struct row *row = &rows[r];
      row->sites = &s->entries[i];
      row->total.class_id = s->entries[i].class_id;
      row->total.kind = s->entries[i].kind;
      while (i < s->entries_n
             && s->entries[i].class_id == row->total.class_id
             && s->entries[i].kind == row->total.kind)
        add_row_counts (&row->total, &s->entries[i++]), row->sites_n++;
    }
  qsort (rows, r, sizeof *rows, by_wait);
  *n = r;
  return rows;
}

/* --- names ------------------------------------------------------------------ */

static const char *const kind_names[XP_PROF_KINDS] = {
  [XP_PROF_MUTEX] = "mutex", [XP_PROF_READ] = "rwlock-read",
  [XP_PROF_WRITE] = "rwlock-write", [XP_PROF_COND] = "cond",
  [XP_PROF_SEM] = "sem", [XP_PROF_BARRIER] = "barrier",
  [XP_PROF_SPIN] = "spinlock",
};

static const char *const origin_names[] = {
  [XP_PROF_STATIC] = "static", [XP_PROF_INIT_SITE] = "init",
  [XP_PROF_FIRST_CONTENDED] = "first-contended",
};

#define NAME_SIZE 512

/* The naming session of the report the thread renders.  */
static __thread struct xp_sym_names *names
  __attribute__ ((tls_model ("initial-exec")));

static void
class_name (const struct xp_prof_snapshot *s, uint32_t id, char *out)
{
  const struct xp_prof_class *c = &s->classes[id];
  if (c->origin == XP_PROF_STATIC)
    xp_sym_describe_data (names, c->key, out, NAME_SIZE);
  else
    xp_sym_describe_code (names, c->key, out, NAME_SIZE);
}

/* A site is the return address of the program's call: the call is the
   byte before, whose line is the call's.  */
static void
site_location (const void *site, char *out)
{
  if (site == NULL
      || !xp_sym_source_line (names, (const char *) site - 1, out, NAME_SIZE))
    out[0] = '\0';
}

/* The class's source line: its site's; "" for a static lock.  */
static void
class_location (const struct xp_prof_snapshot *s, uint32_t id, char *out)
{
  const struct xp_prof_class *c = &s->classes[id];
  if (c->origin == XP_PROF_STATIC)
    out[0] = '\0';
  else
    site_location (c->key, out);
}

/* --- text ----------------------------------------------------------------- */

static void
put_ns (FILE *f, uint64_t ns)
{
  if (ns >= 1000000000u)
    fprintf (f, "%7.3f s ", ns / 1e9);
  else if (ns >= 1000000u)
    fprintf (f, "%7.2f ms", ns / 1e6);
  else if (ns >= 1000u)
    fprintf (f, "%7.2f us", ns / 1e3);
  else
    fprintf (f, "%7u ns", (unsigned) ns);
}

static uint64_t
mean (uint64_t total, uint64_t n)
{
  return n != 0 ? total / n : 0;
}

/* Hold totals are estimated from the timed holds.  */
static uint64_t
hold_total (const struct xp_prof_entry *e)
{
  return mean (e->hold_ns, e->hold_samples) * e->acquisitions;
}

static void
put_counts (FILE *f, const struct xp_prof_entry *e)
{
  put_ns (f, e->wait_ns);
  fprintf (f, " %9llu/%-9llu %9llu ", (unsigned long long) e->contended,
           (unsigned long long) e->acquisitions,
           (unsigned long long) e->owner_changes);
  put_ns (f, e->wait_max);
  fputc (' ', f);
  put_ns (f, mean (e->wait_ns, e->contended));
  fputc (' ', f);
  put_ns (f, mean (e->hold_ns, e->hold_samples));
}

static void
put_held_by (FILE *f, const struct xp_prof_entry *e)
{
  char name[NAME_SIZE], line[NAME_SIZE];
  for (unsigned i = 0; i < XP_PROF_HELD_BY && e->held_by[i].waits; i++)
    {
      const struct xp_prof_held_by *h = &e->held_by[i];
      if (h->site != NULL)
        {
          xp_sym_describe_code (names, h->site, name, sizeof name);
          site_location (h->site, line);
        }
      else
        strcpy (name, "other sites"), line[0] = '\0';
      fprintf (f, "%66s held by %s%s%s (", "", name, line[0] ? " " : "",
               line);
      put_ns (f, h->wait_ns);
      fputs (")\n", f);
    }
}

#define TEXT_SITES 3

static void
put_text_row (FILE *f, const struct xp_prof_snapshot *s, const struct row *r,
              size_t rank)
{
  char name[NAME_SIZE], line[NAME_SIZE];
  class_name (s, r->total.class_id, name);
  class_location (s, r->total.class_id, line);
  fprintf (f, "%3zu  ", rank);
  put_counts (f, &r->total);
  fprintf (f, "  %s %s%s%s\n", kind_names[r->total.kind], name,
           line[0] ? " " : "", line);
  if (r->total.kind == XP_PROF_COND)
    fprintf (f, "%66s signals %llu, broadcasts %llu, no waiter %llu\n", "",
             (unsigned long long) r->total.signals,
             (unsigned long long) r->total.broadcasts,
             (unsigned long long) r->total.signals_no_waiter);
  for (size_t i = 0; i < r->sites_n && i < TEXT_SITES; i++)
    {
      const struct xp_prof_entry *e = &r->sites[i];
      xp_sym_describe_code (names, e->site, name, sizeof name);
      site_location (e->site, line);
      fputs ("     ", f);
      put_counts (f, e);
      fprintf (f, "  at %s%s%s\n", name, line[0] ? " " : "", line);
      put_held_by (f, e);
    }
}

static void
put_text_table (FILE *f, const struct xp_prof_snapshot *s,
                const struct row *rows, size_t n, const char *what)
{
  if (n == 0)
    return;
  fprintf (f, "  #  wait total  contended/acquired   owner chg    wait max"
           "   wait mean   hold mean  %s\n", what);
  for (size_t i = 0; i < n && i < (size_t) top_rows; i++)
    put_text_row (f, s, &rows[i], i + 1);
  if (n > (size_t) top_rows)
    fprintf (f, "  %zu more rows; all of them: XPTHREAD_PROF_FORMAT=json\n",
             n - (size_t) top_rows);
}

static const char *const reason_names[] = {
  [XP_PROF_AT_EXIT] = "at exit", [XP_PROF_ON_SIGNAL] = "on signal",
  [XP_PROF_ON_INTERVAL] = "at interval",
};

static void
put_text (FILE *f, const struct xp_prof_snapshot *s, const struct row *rows,
          size_t n, enum xp_prof_reason reason)
{
  fprintf (f, "xpthread profile: pid %d (%s), %s, after %.2f s; "
           "hold times timed 1 in %u\n", (int) getpid (),
           program_invocation_short_name, reason_names[reason],
           s->elapsed_ns / 1e9, s->hold_sampling);
  size_t locks = 0;
  while (locks < n && rows[locks].total.kind != XP_PROF_COND)
    locks++;
  put_text_table (f, s, rows, locks, "lock");
  if (locks == 0)
    fputs ("  no lock was contended\n", f);
  if (n > locks)
    {
      fputs ("condition variables (the wait: time asleep, for the program's "
             "reasons)\n", f);
      put_text_table (f, s, rows + locks, n - locks, "condition variable");
    }
  if (s->overflow.locks || s->overflow.entries || s->overflow.stacks)
    fprintf (f, "  tables full: %llu locks, %llu counts, %llu stacks not "
             "recorded (XPTHREAD_PROF_LOCKS)\n",
             (unsigned long long) s->overflow.locks,
             (unsigned long long) s->overflow.entries,
             (unsigned long long) s->overflow.stacks);
}

/* --- JSON ------------------------------------------------------------------ */

static void
put_json_string (FILE *f, const char *text)
{
  if (text == NULL || text[0] == '\0')
    {
      fputs ("null", f);
      return;
    }
  fputc ('"', f);
  for (const unsigned char *p = (const unsigned char *) text; *p; p++)
    if (*p == '"' || *p == '\\')
      fprintf (f, "\\%c", *p);
    else if (*p < 0x20)
      fprintf (f, "\\u%04x", *p);
    else
      fputc (*p, f);
  fputc ('"', f);
}

static void
put_json_stats (FILE *f, const struct xp_prof_entry *e)
{
  fprintf (f, "\"acquisitions\":%llu,\"contended\":%llu,"
           "\"owner_changes\":%llu,",
           (unsigned long long) e->acquisitions,
           (unsigned long long) e->contended,
           (unsigned long long) e->owner_changes);
  fprintf (f, "\"wait_ns\":{\"total\":%llu,\"max\":%llu,\"mean\":%llu},",
           (unsigned long long) e->wait_ns, (unsigned long long) e->wait_max,
           (unsigned long long) mean (e->wait_ns, e->contended));
  fprintf (f, "\"hold_ns\":{\"total\":%llu,\"max\":%llu,\"mean\":%llu,"
           "\"samples\":%llu},", (unsigned long long) hold_total (e),
           (unsigned long long) e->hold_max,
           (unsigned long long) mean (e->hold_ns, e->hold_samples),
           (unsigned long long) e->hold_samples);
  if (e->kind == XP_PROF_COND)
    fprintf (f, "\"waits\":%llu,\"signals\":%llu,\"broadcasts\":%llu,"
             "\"signals_no_waiter\":%llu,",
             (unsigned long long) e->acquisitions,
             (unsigned long long) e->signals,
             (unsigned long long) e->broadcasts,
             (unsigned long long) e->signals_no_waiter);
  fputs ("\"wait_log2_ns\":[", f);
  const char *sep = "";
  for (unsigned i = 0; i < XP_PROF_BUCKETS; i++)
    if (e->buckets[i] != 0)
      {
        fprintf (f, "%s[%u,%u]", sep, i + XP_PROF_FIRST_BUCKET, e->buckets[i]);
        sep = ",";
      }
  fputs ("]", f);
}

static void
put_json_held_by (FILE *f, const struct xp_prof_entry *e)
{
  char name[NAME_SIZE], line[NAME_SIZE];
  fputs (",\"held_by\":[", f);
  for (unsigned i = 0; i < XP_PROF_HELD_BY && e->held_by[i].waits; i++)
    {
      const struct xp_prof_held_by *h = &e->held_by[i];
      if (h->site != NULL)
        xp_sym_describe_code (names, h->site, name, sizeof name);
      else
        strcpy (name, "other sites");
      site_location (h->site, line);
      fputs (i ? ",{\"site\":" : "{\"site\":", f);
      put_json_string (f, name);
      fputs (",\"location\":", f);
      put_json_string (f, line);
      fprintf (f, ",\"waits\":%llu,\"wait_ns\":%llu}",
               (unsigned long long) h->waits,
               (unsigned long long) h->wait_ns);
    }
  fputs ("]", f);
}

static void
put_json_site (FILE *f, const struct xp_prof_entry *e)
{
  char name[NAME_SIZE], line[NAME_SIZE];
  xp_sym_describe_code (names, e->site, name, sizeof name);
  site_location (e->site, line);
  fputs ("{\"site\":", f);
  put_json_string (f, name);
  fputs (",\"location\":", f);
  put_json_string (f, line);
  fprintf (f, ",\"address\":\"%p\",", e->site);
  put_json_stats (f, e);
  put_json_held_by (f, e);
  fputs ("}", f);
}

/* The row's held-by list: its sites' lists merged.  */
static void
row_held_by (const struct row *r, struct xp_prof_entry *total)
{
  memset (total->held_by, 0, sizeof total->held_by);
  for (size_t i = 0; i < r->sites_n; i++)
    for (unsigned j = 0; j < XP_PROF_HELD_BY && r->sites[i].held_by[j].waits;
         j++)
      {
        const struct xp_prof_held_by *h = &r->sites[i].held_by[j];
        unsigned k = 0;
        while (k < XP_PROF_HELD_BY - 1 && total->held_by[k].waits
               && total->held_by[k].site != h->site)
          k++;
        if (total->held_by[k].waits && total->held_by[k].site != h->site)
          total->held_by[k].site = NULL;
        else
          total->held_by[k].site = h->site;
        total->held_by[k].waits += h->waits;
        total->held_by[k].wait_ns += h->wait_ns;
      }
}

static void
put_json_row (FILE *f, const struct xp_prof_snapshot *s, struct row *r)
{
  char name[NAME_SIZE], line[NAME_SIZE];
  const struct xp_prof_class *c = &s->classes[r->total.class_id];
  class_name (s, r->total.class_id, name);
  class_location (s, r->total.class_id, line);
  fputs ("{\"class\":", f);
  put_json_string (f, name);
  fprintf (f, ",\"origin\":\"%s\",\"location\":", origin_names[c->origin]);
  put_json_string (f, line);
  fprintf (f, ",\"kind\":\"%s\",\"instances\":%u,", kind_names[r->total.kind],
           c->instances);
  put_json_stats (f, &r->total);
  row_held_by (r, &r->total);
  sort_held_by (&r->total);
  put_json_held_by (f, &r->total);
  fputs (",\"sites\":[", f);
  for (size_t i = 0; i < r->sites_n; i++)
    {
      if (i)
        fputc (',', f);
      put_json_site (f, &r->sites[i]);
    }
  fputs ("]}", f);
}

/* A frame as a flame graph shows it: the function's name alone.  */
static void
frame_name (const void *pc, char *out)
{
  xp_sym_describe_code (names, pc, out, NAME_SIZE);
  out[strcspn (out, "+ ")] = '\0';
  for (char *p = out; *p; p++)
    if (*p == ';')
      *p = ':';
}

static void
put_json_stacks (FILE *f, const struct xp_prof_snapshot *s)
{
  char name[NAME_SIZE];
  fputs (",\"stacks\":[", f);
  const char *sep = "";
  for (size_t i = 0; i < s->stacks_n; i++)
    {
      const struct xp_prof_stack *st = &s->stacks[i];
      if (st->wait_ns == 0)
        continue;
      fprintf (f, "%s{\"frames\":[", sep);
      sep = ",";
      for (unsigned j = st->frames.depth; j-- > 0;)
        {
          frame_name (st->frames.pc[j], name);
          put_json_string (f, name);
          fputc (',', f);
        }
      class_name (s, st->class_id, name);
      put_json_string (f, name);
      fprintf (f, "],\"wait_ns\":%llu}", (unsigned long long) st->wait_ns);
    }
  fputs ("]", f);
}

static void
put_json (FILE *f, const struct xp_prof_snapshot *s, struct row *rows,
          size_t n, enum xp_prof_reason reason)
{
  static const char *const reasons[] = { "exit", "signal", "interval" };
  fprintf (f, "{\"format\":\"xpthread-profile\",\"version\":1,\"pid\":%d,"
           "\"program\":", (int) getpid ());
  put_json_string (f, program_invocation_name);
  fprintf (f, ",\"reason\":\"%s\",\"elapsed_ns\":%llu,\"hold_sampling\":%u,"
           "\"overflow\":{\"locks\":%llu,\"entries\":%llu,\"stacks\":%llu},"
           "\"rows\":[", reasons[reason],
           (unsigned long long) s->elapsed_ns, s->hold_sampling,
           (unsigned long long) s->overflow.locks,
           (unsigned long long) s->overflow.entries,
           (unsigned long long) s->overflow.stacks);
  for (size_t i = 0; i < n; i++)
    {
      if (i)
        fputc (',', f);
      put_json_row (f, s, &rows[i]);
    }
  fputs ("]", f);
  put_json_stacks (f, s);
  fputs ("}\n", f);
}

/* --- folded ---------------------------------------------------------------- */

static void
put_folded (FILE *f, const struct xp_prof_snapshot *s)
{
  char name[NAME_SIZE];
  for (size_t i = 0; i < s->stacks_n; i++)
    {
      const struct xp_prof_stack *st = &s->stacks[i];
      if (st->wait_ns == 0)
        continue;
      for (unsigned j = st->frames.depth; j-- > 0;)
        {
          frame_name (st->frames.pc[j], name);
          fprintf (f, "%s;", name);
        }
      class_name (s, st->class_id, name);
      for (char *p = name; *p; p++)
        if (*p == ' ' || *p == ';')
          *p = '_';
      fprintf (f, "%s %llu\n", name, (unsigned long long) st->wait_ns);
    }
}

/* --- where it goes ---------------------------------------------------------- */

/* The file's name, "%p" replaced by the pid; false when too long.  */
static bool
expand_path (char *out, size_t size)
{
  size_t n = 0;
  for (const char *p = report_path; *p; p++)
    {
      int w = p[0] == '%' && p[1] == 'p'
              ? snprintf (out + n, size - n, "%d", (int) getpid ())
              : snprintf (out + n, size - n, "%c", *p);
      p += p[0] == '%' && p[1] == 'p';
      if (w < 0 || (size_t) w >= size - n)
        return false;
      n += (size_t) w;
    }
  return true;
}

/* PATH is something else than a regular file (a device such as
   /dev/null, a FIFO, a symbolic link): write into it (what a link names
   is created if need be), and drop the report where a FIFO has no reader
   rather than wait for one.  */
static void
deliver_in_place (const char *path, const char *text, size_t n)
{
  int fd = xp_report_open (path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK
                                 | O_CLOEXEC, 0644);
  if (fd < 0)
    return;
  xp_report_set_blocking (fd);
  xp_report_write (fd, text, n);
  xp_report_close (fd);
}

/* A regular file (or none yet) is replaced whole, so that a reader never
   sees half a report; anything else is written into, never replaced.  */
void
xp_prof_report_deliver (const char *text, size_t n)
{
  if (report_path == NULL)
    {
      xp_report_write (STDERR_FILENO, text, n);
      return;
    }
  char path[4096], temp[4200];
  if (!expand_path (path, sizeof path))
    return;
  if (xp_report_is_special (path))
    {
      deliver_in_place (path, text, n);
      return;
    }
  snprintf (temp, sizeof temp, "%s.tmp", path);
  int fd = xp_report_open (temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                           0644);
  if (fd < 0)
    return;
  bool ok = xp_report_write (fd, text, n);
  xp_report_close (fd);
  if (!ok || !xp_report_rename (temp, path))
    xp_report_unlink (temp);
}

bool
xp_prof_report_render (const struct xp_prof_snapshot *s,
                       enum xp_prof_reason reason, char **text, size_t *n)
{
  size_t rows_n;
  struct row *rows = make_rows (s, &rows_n);
  names = malloc (sizeof *names);
  *text = NULL;
  FILE *f = rows != NULL && names != NULL ? open_memstream (text, n) : NULL;
  bool ok = false;
  if (f != NULL)
    {
      xp_sym_names_begin (names, true);
      if (report_format == JSON)
        put_json (f, s, rows, rows_n, reason);
      else if (report_format == FOLDED)
        put_folded (f, s);
      else
        put_text (f, s, rows, rows_n, reason);
      xp_sym_names_end (names);
      ok = fclose (f) == 0;
    }
  free (names);
  names = NULL;
  free (rows);
  if (!ok)
    {
      free (*text);
      *text = NULL;
    }
  return ok;
}
