/* The table of away marks (away.h).  */
#include "away.h"

int xp_away_marks[XP_AWAY_SLOTS];

/* The marks left are those of the parent's other threads, asleep there:
   they do not exist in the child.  Only marked slots are written, so
   that the child copies no page of the table that it does not need.  */
void
xp_away_after_fork_child (void)
{
  for (int i = 0; i < XP_AWAY_SLOTS; i++)
    if (xp_away_marks[i] != 0)
      xp_away_marks[i] = 0;
}
