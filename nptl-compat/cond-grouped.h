/* The process-shared condition variable of glibc 2.25 to 2.40: its
   layout and xpthread's implementation of its protocol (cond-grouped.c).  */
#ifndef XP_NPTL_COMPAT_COND_GROUPED_H
#define XP_NPTL_COMPAT_COND_GROUPED_H

#include "glibc-cond.h"

/* pthread_cond_t in those releases; the meaning of each field is at the
   top of cond-grouped.c.  */
struct xp_cond_grouped
{
  uint64_t __wseq;
  uint64_t __g1_start;
  unsigned __g_refs[2];
  unsigned __g_size[2];
  unsigned __g1_orig_size;
  unsigned __wrefs;
  unsigned __g_signals[2];
};

_Static_assert (sizeof (struct xp_cond_grouped) == sizeof (pthread_cond_t),
                "pthread_cond_t has kept its size since glibc 2.3.2");
#define XP_COND_GROUPED_FLAGS_OFFSET \
  __builtin_offsetof (struct xp_cond_grouped, __wrefs)

extern const struct xp_shared_cond_ops xp_cond_grouped_ops XP_HIDDEN;

/* Whether the running glibc's own functions behave on scratch objects as
   this protocol does; only asked where its layout was found.  */
bool xp_cond_grouped_spoken (void) XP_HIDDEN;

#endif
