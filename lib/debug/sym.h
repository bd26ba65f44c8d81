/* Names for addresses in reports (sym.c): the dynamic linker's view,
   completed from each object's full symbol table on disk, C++ names
   demangled, and sites' source lines from their debug information
   (sym-lines.c).  */
#ifndef XP_DEBUG_SYM_H
#define XP_DEBUG_SYM_H

#include "common.h"

/* "function+0x1c (object)" for an address in code.  */
void xp_sym_describe_code (const void *pc, char *out, size_t size)
  XP_HIDDEN;
/* The same for a site, a place in a function, with its source line
   where the object has debug information: "function+0x1c (object,
   file.c:12)".  */
void xp_sym_describe_site (const void *pc, char *out, size_t size)
  XP_HIDDEN;
/* "variable (object)" or "variable+0x8 (object)" for static data;
   "object+0x4010" when no symbol covers it.  */
void xp_sym_describe_data (const void *addr, char *out, size_t size)
  XP_HIDDEN;

/* Whether naming may call malloc, which the demangler and libdw do:
   not while the reporting thread holds one of the allocator's own
   locks.  Set before each report; true until then.  */
void xp_sym_allow_malloc (bool allowed) XP_HIDDEN;

/* "file.c:12" for PC, into OUT, from the debug information of PC's
   object; false when libdw or the information is missing.  Allocates.
   The _held form for a caller that holds the naming lock.  */
bool xp_sym_source_line (const void *pc, char *out, size_t size)
  XP_HIDDEN;
bool xp_sym_source_line_held (const void *pc, char *out, size_t size)
  XP_HIDDEN;

/* The naming lock: lockdep's and the profiler's reports may be written
   at once, and libdw's session and the mapped file are shared.  Every
   function above takes it.  */
void xp_sym_lock (void) XP_HIDDEN;
void xp_sym_unlock (void) XP_HIDDEN;

#endif
