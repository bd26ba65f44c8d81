/* Raw threads on glibc's thread list; see glibc-list.c.  */
#ifndef XP_NPTL_COMPAT_GLIBC_LIST_H
#define XP_NPTL_COMPAT_GLIBC_LIST_H

#include "common.h"

/* Find and validate the lists; NULL or the reason they cannot be used.  */
const char *xp_glibc_list_discover (const char *main_tp) XP_HIDDEN;

void xp_glibc_list_lock (void) XP_HIDDEN;
void xp_glibc_list_unlock (void) XP_HIDDEN;
void xp_glibc_list_add (void *tp) XP_HIDDEN;
void xp_glibc_list_remove (void *tp) XP_HIDDEN;

#endif
