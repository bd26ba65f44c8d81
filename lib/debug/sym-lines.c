/* Source lines for the sites in reports, from the objects' DWARF debug
   information, read with elfutils' libdw.  libdw is neither needed to
   build xpthread nor loaded by it until a report first asks for a line:
   then it is opened once with dlopen, and without it (libdw1 not
   installed, or a library of that name that lacks a function) reports
   name their sites without lines.  The few functions and types used are
   declared here as libdw.h has them; of the structures that libdw
   fills, only the size is xpthread's concern.  */
#define _GNU_SOURCE
#include "sym.h"
#include "fork-locks.h"
#include "thread.h"
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Dwfl Dwfl;
typedef struct Dwfl_Module Dwfl_Module;
typedef struct Dwarf_Line Dwarf_Line;
typedef struct Dwarf_Files Dwarf_Files;
typedef uint64_t Dwarf_Addr;
typedef uint64_t Dwarf_Word;

typedef struct
{
  void *addr, *cu, *abbrev;
  long padding;
} Dwarf_Die;

typedef struct
{
  unsigned code, form;
  unsigned char *valp;
  void *cu;
} Dwarf_Attribute;

typedef int find_elf_fn (Dwfl_Module *, void **, const char *, Dwarf_Addr,
                         char **, void **);
typedef int find_debuginfo_fn (Dwfl_Module *, void **, const char *,
                               Dwarf_Addr, const char *, const char *,
                               uint32_t, char **);

typedef struct
{
  find_elf_fn *find_elf;
  find_debuginfo_fn *find_debuginfo;
  void (*section_address) (void);   /* for relocatable files only */
  char **debuginfo_path;
} Dwfl_Callbacks;

enum
{
  DW_TAG_inlined_subroutine = 0x1d,
  DW_TAG_subprogram = 0x2e,
  DW_AT_call_file = 0x58,
  DW_AT_call_line = 0x59
};

#define LIBDW_FUNCTIONS(F)                                                   \
  F (dwfl_begin, Dwfl *, (const Dwfl_Callbacks *))                           \
  F (dwfl_report_begin, void, (Dwfl *))                                      \
  F (dwfl_linux_proc_report, int, (Dwfl *, pid_t))                           \
  F (dwfl_report_end, int, (Dwfl *, void *, void *))                         \
  F (dwfl_linux_proc_find_elf, int, (Dwfl_Module *, void **, const char *,   \
                                     Dwarf_Addr, char **, void **))          \
  F (dwfl_standard_find_debuginfo, int,                                      \
     (Dwfl_Module *, void **, const char *, Dwarf_Addr, const char *,        \
      const char *, uint32_t, char **))                                      \
  F (dwfl_addrmodule, Dwfl_Module *, (Dwfl *, Dwarf_Addr))                   \
  F (dwfl_module_addrdie, Dwarf_Die *, (Dwfl_Module *, Dwarf_Addr,           \
                                        Dwarf_Addr *))                       \
  F (dwfl_module_nextcu, Dwarf_Die *, (Dwfl_Module *, Dwarf_Die *,           \
                                       Dwarf_Addr *))                        \
  F (dwarf_haspc, int, (Dwarf_Die *, Dwarf_Addr))                            \
  F (dwarf_getsrc_die, Dwarf_Line *, (Dwarf_Die *, Dwarf_Addr))              \
  F (dwarf_lineno, int, (Dwarf_Line *, int *))                               \
  F (dwarf_linesrc, const char *, (Dwarf_Line *, Dwarf_Word *, Dwarf_Word *)) \
  F (dwarf_getscopes, int, (Dwarf_Die *, Dwarf_Addr, Dwarf_Die **))          \
  F (dwarf_getscopes_die, int, (Dwarf_Die *, Dwarf_Die **))                  \
  F (dwarf_tag, int, (Dwarf_Die *))                                          \
  F (dwarf_diename, const char *, (Dwarf_Die *))                             \
  F (dwarf_attr, Dwarf_Attribute *, (Dwarf_Die *, unsigned,                  \
                                     Dwarf_Attribute *))                     \
  F (dwarf_formudata, int, (Dwarf_Attribute *, Dwarf_Word *))                \
  F (dwarf_getsrcfiles, int, (Dwarf_Die *, Dwarf_Files **, size_t *))        \
  F (dwarf_filesrc, const char *, (Dwarf_Files *, size_t, Dwarf_Word *,      \
                                   Dwarf_Word *))

#define DECLARE(name, ret, args) ret (*name) args;
static struct
{
  LIBDW_FUNCTIONS (DECLARE)
} dw;

#define LOAD(name, ret, args)                                                \
  && (dw.name = (__typeof__ (dw.name)) dlsym (handle, #name)) != NULL

/* libdw's session (and its loading) is one for the process, under this
   lock; a naming thread waits for it a second at most (LIBDW_PATIENCE_MS)
   and never while it holds it itself (a signal handler's report), then
   names its sites without lines.  So no thread waits for ever for a
   thread inside libdw, which allocates and reads files.  */
static XP_FORK_LOCK (sym, libdw_lock);
static int libdw_holder;           /* its holder's thread ID; 0: none */
#define LIBDW_PATIENCE_MS 1000

static bool
libdw_take (void)
{
  int self = xp_self_tid ();
  if (xp_load_relaxed (&libdw_holder) == self
      || !xp_lock_within (&libdw_lock, LIBDW_PATIENCE_MS))
    return false;
  xp_store_relaxed (&libdw_holder, self);
  return true;
}

static void
libdw_give (void)
{
  xp_store_relaxed (&libdw_holder, 0);
  xp_unlock (&libdw_lock);
}

/* Under libdw_lock, as everything below.  */
static enum { UNTRIED, LOADED, ABSENT } libdw_state;

/* Loaded into the program's namespace: a namespace of its own
   (dlmopen) would have a libc of its own, whose thread-specific data
   shares the threads' descriptors with the program's libc and
   overwrites it.  */
static bool
libdw_loaded (void)
{
  if (libdw_state == UNTRIED)
    {
      void *handle = dlopen ("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
      libdw_state = handle != NULL LIBDW_FUNCTIONS (LOAD) ? LOADED : ABSENT;
    }
  return libdw_state == LOADED;
}

/* Separate debug files are looked for in the usual places, but not
   through debuginfod: a report must not wait for the network.  */
static int
no_separate_debuginfo (Dwfl_Module *mod, void **data, const char *name,
                       Dwarf_Addr base, const char *file, const char *link,
                       uint32_t crc, char **found)
{
  return -1;
}

static bool
debuginfod_configured (void)
{
  const char *urls = getenv ("DEBUGINFOD_URLS");
  return urls != NULL && urls[0] != '\0';
}

/* Objects loaded and unloaded so far: the session reads the process's
   maps again when this changes.  */
static int
count_loads (struct dl_phdr_info *info, size_t size, void *arg)
{
  *(unsigned long long *) arg = info->dlpi_adds + info->dlpi_subs;
  return 1;
}

static unsigned long long
loads_so_far (void)
{
  unsigned long long n = 0;
  dl_iterate_phdr (count_loads, &n);
  return n;
}

/* The libdw session that knows the process's objects as they are now;
   kept from report to report, since it caches what it has read.  */
static Dwfl *
session (void)
{
  static Dwfl_Callbacks callbacks;
  static Dwfl *dwfl;
  static unsigned long long loads;
  unsigned long long now = loads_so_far ();
  if (dwfl != NULL && now == loads)
    return dwfl;
  if (dwfl == NULL)
    {
      callbacks.find_elf = dw.dwfl_linux_proc_find_elf;
      callbacks.find_debuginfo = debuginfod_configured ()
                                 ? no_separate_debuginfo
                                 : dw.dwfl_standard_find_debuginfo;
      if ((dwfl = dw.dwfl_begin (&callbacks)) == NULL)
        return NULL;
    }
  dw.dwfl_report_begin (dwfl);
  dw.dwfl_linux_proc_report (dwfl, getpid ());
  dw.dwfl_report_end (dwfl, NULL, NULL);
  loads = now;
  return dwfl;
}

static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');
  return slash != NULL ? slash + 1 : path;
}

static bool
number_of (Dwarf_Die *die, unsigned attribute, Dwarf_Word *value)
{
  Dwarf_Attribute a;
  return dw.dwarf_attr (die, attribute, &a) != NULL
         && dw.dwarf_formudata (&a, value) == 0;
}

/* Where the code of the inlined call DIE, in compilation unit CU, was
   called from.  */
static bool
call_site (Dwarf_Die *cu, Dwarf_Die *die, const char **file, int *line)
{
  Dwarf_Word index, number;
  Dwarf_Files *files;
  size_t count;
  if (!number_of (die, DW_AT_call_file, &index)
      || !number_of (die, DW_AT_call_line, &number)
      || dw.dwarf_getsrcfiles (cu, &files, &count) != 0 || index >= count)
    return false;
  *file = dw.dwarf_filesrc (files, index, NULL, NULL);
  *line = (int) number;
  return *file != NULL;
}

/* The index of the innermost inlined call in SCOPES[0..N), innermost
   first; -1: none.  */
static int
innermost_inlined_call (Dwarf_Die *scopes, int n)
{
  for (int i = 0; i < n; i++)
    if (dw.dwarf_tag (&scopes[i]) == DW_TAG_inlined_subroutine)
      return i;
  return -1;
}

/* The same for the outermost inlined call of a function other than the
   one that holds it: gcc's partial inlining puts a function's own body
   into it as an inlined call from its first line.  */
static int
outermost_inlined_call (Dwarf_Die *scopes, int n)
{
  const char *holder = NULL;
  for (int i = n; i-- > 0;)
    {
      int tag = dw.dwarf_tag (&scopes[i]);
      const char *name = dw.dwarf_diename (&scopes[i]);
      if (tag == DW_TAG_subprogram)
        holder = name;
      else if (tag == DW_TAG_inlined_subroutine
               && (holder == NULL || name == NULL || strcmp (name, holder)))
        return i;
    }
  return -1;
}

/* Code inlined into a function has the lines of the inlined function's
   source (a header's, for std::mutex::lock); a report names the
   function that holds the code, so its line is where the outermost
   inlined call was made.  The scopes of PC, in compilation unit CU, go
   up through the innermost inlined call to the inlined function's own
   definition; the calls that enclose that one are the scopes of its
   DIE.  */
static bool
outermost_call (Dwarf_Die *cu, Dwarf_Addr pc, const char **file, int *line)
{
  Dwarf_Die *scopes, *outer;
  int n = dw.dwarf_getscopes (cu, pc, &scopes);
  if (n <= 0)
    return false;
  int i = innermost_inlined_call (scopes, n);
  int m = i >= 0 ? dw.dwarf_getscopes_die (&scopes[i], &outer) : -1;
  bool found = false;
  if (m > 0)
    {
      int j = outermost_inlined_call (outer, m);
      found = j >= 0 && call_site (cu, &outer[j], file, line);
      free (outer);
    }
  free (scopes);
  return found;
}

/* The compilation unit that holds PC, and the bias of MOD's addresses.
   libdw finds it through .debug_aranges, which clang leaves out unless
   asked (-gdwarf-aranges), and elfutils 0.188 has no other way: then
   the units' own ranges are searched.  */
static Dwarf_Die *
unit_of (Dwfl_Module *mod, Dwarf_Addr pc, Dwarf_Addr *bias)
{
  Dwarf_Die *cu = dw.dwfl_module_addrdie (mod, pc, bias);
  for (Dwarf_Die *c = NULL;
       cu == NULL && (c = dw.dwfl_module_nextcu (mod, c, bias)) != NULL;)
    if (dw.dwarf_haspc (c, pc - *bias) > 0)
      cu = c;
  return cu;
}

static bool
source_line (const void *pc, char *out, size_t size)
{
  if (!libdw_loaded ())
    return false;
  Dwfl *dwfl = session ();
  Dwfl_Module *mod = dwfl != NULL ? dw.dwfl_addrmodule (dwfl,
                                                        (uintptr_t) pc)
                                  : NULL;
  Dwarf_Addr bias;
  Dwarf_Die *cu = mod != NULL ? unit_of (mod, (uintptr_t) pc, &bias) : NULL;
  if (cu == NULL)
    return false;
  Dwarf_Addr addr = (uintptr_t) pc - bias;
  const char *file = NULL;
  int line = 0;
  if (!outermost_call (cu, addr, &file, &line))
    {
      Dwarf_Line *l = dw.dwarf_getsrc_die (cu, addr);
      file = l != NULL && dw.dwarf_lineno (l, &line) == 0
             ? dw.dwarf_linesrc (l, NULL, NULL) : NULL;
    }
  if (file == NULL || line <= 0)
    return false;
  snprintf (out, size, "%s:%d", base_name (file), line);
  return true;
}

bool
xp_sym_source_line (struct xp_sym_names *names, const void *pc, char *out,
                    size_t size)
{
  if (!names->may_allocate || !libdw_take ())
    return false;
  bool found = source_line (pc, out, size);
  libdw_give ();
  return found;
}
