/* The lock hooks' deliveries to valgrind's thread checkers
   (valgrind.c); without valgrind's headers at build time, only the
   finding that there is no valgrind.  */
#ifndef XP_DEBUG_VALGRIND_H
#define XP_DEBUG_VALGRIND_H

#include "common.h"

/* True when the process runs under valgrind; *OBSERVES when the tool is
   helgrind or DRD, which want the deliveries.  */
bool xp_vg_init (bool *observes) XP_HIDDEN;
void xp_vg_acquired (void *lock, size_t size, bool writer) XP_HIDDEN;
void xp_vg_releasing (void *lock, size_t size, bool writer) XP_HIDDEN;
void xp_vg_send (const void *obj) XP_HIDDEN;
void xp_vg_receive (const void *obj) XP_HIDDEN;
void xp_vg_sync_words (const void *addr, size_t size) XP_HIDDEN;

#endif
