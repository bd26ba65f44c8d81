/* The table of away marks (away.h).  */
#include "away.h"

int xp_away_marks[XP_AWAY_SLOTS];
