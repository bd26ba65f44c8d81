/* Names for addresses in reports (sym.c): the dynamic linker's view,
   completed from each object's full symbol table on disk.  */
#ifndef XP_DEBUG_SYM_H
#define XP_DEBUG_SYM_H

#include "common.h"

/* "function+0x1c (object)" for an address in code.  */
void xp_sym_describe_code (const void *pc, char *out, size_t size)
  XP_HIDDEN;
/* "variable (object)" or "variable+0x8 (object)" for static data;
   "object+0x4010" when no symbol covers it.  */
void xp_sym_describe_data (const void *addr, char *out, size_t size)
  XP_HIDDEN;

#endif
