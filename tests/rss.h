/* The resident set of the calling process, for the tests that count
   what threads leave behind.  */
#ifndef XP_TESTS_RSS_H
#define XP_TESTS_RSS_H

#include <stdio.h>

/* VmRSS in KiB; -1 when it cannot be read.  */
static inline long
xp_test_rss_kib (void)
{
  FILE *f = fopen ("/proc/self/status", "r");
  if (f == NULL)
    return -1;
  char line[256];
  long kib = -1;
  while (fgets (line, sizeof line, f) != NULL)
    if (sscanf (line, "VmRSS: %ld kB", &kib) == 1)
      break;
  fclose (f);
  return kib;
}

#endif
