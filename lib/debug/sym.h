/* Names for addresses in reports (sym.c): the dynamic linker's view,
   completed from each object's full symbol table on disk, C++ names
   demangled, and sites' source lines from their debug information
   (sym-lines.c).  */
#ifndef XP_DEBUG_SYM_H
#define XP_DEBUG_SYM_H

#include "common.h"

/* A naming session: the names of one report, which share the object
   file mapped last and the last name given (a report names many
   addresses of one object, and one site many times).  Sessions of two
   threads, or of a signal handler and the thread it interrupted, run at
   once and never wait for each other, so that a thread that names may
   hold nothing another thread could need: naming calls dladdr, which
   waits for the dynamic linker's lock, and the demangler and libdw,
   which allocate.  */
struct xp_sym_mapped
{
  char path[4096];
  const char *map;          /* NULL: none */
  size_t size;
};

struct xp_sym_last
{
  const void *addr;         /* NULL: none */
  int what;
  unsigned long long generation;
  char name[512];
};

struct xp_sym_names
{
  bool may_allocate;        /* the demangler and libdw may be used */
  struct xp_sym_mapped mapped;
  struct xp_sym_last last;
};

/* Begin a session; MAY_ALLOCATE is false where the caller holds, or is
   taking, one of the allocator's own locks, which malloc would wait for
   forever.  End it to give back the mapped file.  */
void xp_sym_names_begin (struct xp_sym_names *names, bool may_allocate)
  XP_HIDDEN;
void xp_sym_names_end (struct xp_sym_names *names) XP_HIDDEN;

/* "function+0x1c (object)" for an address in code.  */
void xp_sym_describe_code (struct xp_sym_names *names, const void *pc,
                           char *out, size_t size) XP_HIDDEN;
/* The same for a site, a place in a function, with its source line
   where the object has debug information: "function+0x1c (object,
   file.c:12)".  */
void xp_sym_describe_site (struct xp_sym_names *names, const void *pc,
                           char *out, size_t size) XP_HIDDEN;
/* "variable (object)" or "variable+0x8 (object)" for static data;
   "object+0x4010" when no symbol covers it.  */
void xp_sym_describe_data (struct xp_sym_names *names, const void *addr,
                           char *out, size_t size) XP_HIDDEN;

/* "file.c:12" for PC, into OUT, from the debug information of PC's
   object (sym-lines.c); false when libdw or the information is missing,
   when the session may not allocate, or when another session has had
   libdw for a second (libdw's session is one, shared, and the only thing
   a naming thread waits for, and never without end).  */
bool xp_sym_source_line (struct xp_sym_names *names, const void *pc,
                         char *out, size_t size) XP_HIDDEN;

#endif
