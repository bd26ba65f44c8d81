/* Diagnostics shared by the whole library.  */
#include "common.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void
xp_vreport (const char *fmt, va_list ap)
{
  char buf[512];
  int n = snprintf (buf, sizeof buf, "xpthread: ");
  n += vsnprintf (buf + n, sizeof buf - n, fmt, ap);
  if (n > (int) sizeof buf - 2)
    n = sizeof buf - 2;
  buf[n++] = '\n';
  /* write(2) directly: stdio may be the thing that is broken.  */
  xp_syscall3 (SYS_write, STDERR_FILENO, (long) buf, n);
}

void
xp_warn (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  xp_vreport (fmt, ap);
  va_end (ap);
}

void
xp_fatal (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  xp_vreport (fmt, ap);
  va_end (ap);
  abort ();
}
