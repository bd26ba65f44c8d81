/* Names for addresses in reports.  dladdr sees only the dynamic symbols,
   which leave out static functions and variables and most of a program's
   own; so the object's file is mapped and its .symtab searched, at report
   time only, and kept mapped by the naming session until a name in
   another object is asked for.  C++ names are demangled by libstdc++'s
   demangler, where the program has loaded it; sites get their source
   lines (sym-lines.c).  */
#define _GNU_SOURCE
#include "sym.h"
#include "objects.h"
#include "report-fd.h"
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct symbol
{
  const char *name;       /* NULL: none found */
  uintptr_t offset;       /* of the address from the symbol's start */
};

/* The symbol of FILE's .symtab (or .dynsym) covering ADDR, a run-time
   address in an object loaded at BASE; for code, when none covers it,
   the nearest function before it that has no size (one written in
   assembly): in a stripped object, the nearest exported function would
   be another function's name.  The name lives in MAP.  */
static struct symbol
search_file (const char *map, size_t size, uintptr_t base, uintptr_t addr,
             bool code)
{
  struct symbol best = { NULL, 0 };
  const ElfW (Ehdr) *eh = (const void *) map;
  if (size < sizeof *eh || memcmp (eh->e_ident, ELFMAG, SELFMAG) != 0
      || eh->e_shoff == 0
      || eh->e_shoff + eh->e_shnum * sizeof (ElfW (Shdr)) > size)
    return best;
  uintptr_t target = addr - (eh->e_type == ET_DYN ? base : 0);
  const ElfW (Shdr) *sh = (const void *) (map + eh->e_shoff);
  uintptr_t nearest = 0;
  for (unsigned s = 0; s < eh->e_shnum; s++)
    {
      if (sh[s].sh_type != SHT_SYMTAB && sh[s].sh_type != SHT_DYNSYM)
        continue;
      if (sh[s].sh_link >= eh->e_shnum
          || sh[s].sh_offset + sh[s].sh_size > size)
        continue;
      const ElfW (Shdr) *strtab = &sh[sh[s].sh_link];
      const ElfW (Sym) *sym = (const void *) (map + sh[s].sh_offset);
      size_t count = sh[s].sh_size / sizeof *sym;
      for (size_t i = 0; i < count; i++)
        {
          unsigned type = ELF64_ST_TYPE (sym[i].st_info);
          if (sym[i].st_shndx == SHN_UNDEF || sym[i].st_name == 0
              || sym[i].st_name >= strtab->sh_size
              || (type != STT_FUNC && type != STT_OBJECT))
            continue;
          const char *name = map + strtab->sh_offset + sym[i].st_name;
          uintptr_t start = sym[i].st_value;
          if (target >= start && target < start + sym[i].st_size)
            return (struct symbol) { name, target - start };
          if (code && type == STT_FUNC && sym[i].st_size == 0
              && start <= target && start >= nearest)
            {
              nearest = start;
              best = (struct symbol) { name, target - start };
            }
        }
    }
  return best;
}

void
xp_sym_names_begin (struct xp_sym_names *names, bool may_allocate)
{
  names->may_allocate = may_allocate;
  names->mapped.map = NULL;
  names->last.addr = NULL;
}

void
xp_sym_names_end (struct xp_sym_names *names)
{
  if (names->mapped.map != NULL)
    munmap ((void *) names->mapped.map, names->mapped.size);
  names->mapped.map = NULL;
}

static bool
map_object (struct xp_sym_names *names, const char *path)
{
  struct xp_sym_mapped *mapped = &names->mapped;
  if (mapped->map != NULL && strcmp (mapped->path, path) == 0)
    return true;
  if (mapped->map != NULL)
    munmap ((void *) mapped->map, mapped->size);
  mapped->map = NULL;
  int fd = xp_report_open (path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    return false;
  off_t size = xp_report_file_size (fd);
  if (size > 0 && strlen (path) < sizeof mapped->path)
    {
      void *map = mmap (NULL, (size_t) size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (map != MAP_FAILED)
        {
          mapped->map = map;
          mapped->size = (size_t) size;
          strcpy (mapped->path, path);
        }
    }
  xp_report_close (fd);
  return mapped->map != NULL;
}

static struct symbol
search_object (struct xp_sym_names *names, const Dl_info *info,
               const void *addr, bool code, char *name_out, size_t size)
{
  struct symbol found = { NULL, 0 };
  const char *path = info->dli_fname != NULL && info->dli_fname[0] != '\0'
                     ? info->dli_fname : "/proc/self/exe";
  if (!map_object (names, path))
    return found;
  found = search_file (names->mapped.map, names->mapped.size,
                       (uintptr_t) info->dli_fbase, (uintptr_t) addr, code);
  if (found.name != NULL)
    {
      snprintf (name_out, size, "%s", found.name);
      found.name = name_out;
    }
  return found;
}

static const char *
object_name (const Dl_info *info)
{
  const char *path = info->dli_fname;
  if (path == NULL || path[0] == '\0')
    return "the program";
  const char *slash = strrchr (path, '/');
  return slash != NULL ? slash + 1 : path;
}

/* NAME demangled into OUT when it is a C++ name, the program has
   libstdc++'s demangler, and the session may allocate; else NAME.  */
static const char *
demangled (const struct xp_sym_names *names, const char *name, char *out,
           size_t size)
{
  typedef char *demangler (const char *, char *, size_t *, int *);
  if (!names->may_allocate || strncmp (name, "_Z", 2) != 0)
    return name;
  demangler *demangle = (demangler *) dlsym (RTLD_DEFAULT, "__cxa_demangle");
  int status = -1;
  char *plain = demangle != NULL ? demangle (name, NULL, NULL, &status)
                                 : NULL;
  if (status != 0 || plain == NULL)
    return name;
  snprintf (out, size, "%s", plain);
  free (plain);
  return out;
}

enum what { DATA, FUNCTION, SITE };

/* "name+0x1c (object, file.c:12)", the offset when not 0, the line for
   a site where it is known; "object+0x4010" when no symbol covers
   ADDR.  */
static void
describe (struct xp_sym_names *names, const void *addr, enum what what,
          char *out, size_t size)
{
  Dl_info info;
  if (addr == NULL || dladdr (addr, &info) == 0)
    {
      snprintf (out, size, "%p", addr);
      return;
    }
  char name[160], plain[256], line[128], offset[32] = "";
  struct symbol s = search_object (names, &info, addr, what != DATA, name,
                                   sizeof name);
  if (s.name == NULL && info.dli_sname != NULL)
    s = (struct symbol) { info.dli_sname,
                          (uintptr_t) addr - (uintptr_t) info.dli_saddr };
  bool lined = what == SITE && xp_sym_source_line (names, addr, line,
                                                    sizeof line);
  if (s.name == NULL)
    {
      int n = snprintf (out, size, "%s+%#lx", object_name (&info),
                        (unsigned long) ((uintptr_t) addr
                                         - (uintptr_t) info.dli_fbase));
      if (lined && n > 0 && (size_t) n < size)
        snprintf (out + n, size - (size_t) n, " (%s)", line);
      return;
    }
  if (s.offset != 0)
    snprintf (offset, sizeof offset, "+%#lx", (unsigned long) s.offset);
  snprintf (out, size, "%s%s (%s%s%s)",
            demangled (names, s.name, plain, sizeof plain), offset,
            object_name (&info), lined ? ", " : "", lined ? line : "");
}

/* The last name given stands while no object was loaded or
   unloaded.  */
static void
describe_again (struct xp_sym_names *names, const void *addr,
                enum what what, char *out, size_t size)
{
  struct xp_sym_last *last = &names->last;
  unsigned long long generation = xp_objects_generation ();
  if (last->addr != addr || last->what != (int) what || addr == NULL
      || last->generation != generation)
    {
      describe (names, addr, what, last->name, sizeof last->name);
      last->addr = addr;
      last->what = (int) what;
      last->generation = generation;
    }
  snprintf (out, size, "%s", last->name);
}

void
xp_sym_describe_code (struct xp_sym_names *names, const void *pc, char *out,
                      size_t size)
{
  describe_again (names, pc, FUNCTION, out, size);
}

void
xp_sym_describe_site (struct xp_sym_names *names, const void *pc, char *out,
                      size_t size)
{
  describe_again (names, pc, SITE, out, size);
}

void
xp_sym_describe_data (struct xp_sym_names *names, const void *addr,
                      char *out, size_t size)
{
  describe_again (names, addr, DATA, out, size);
}
