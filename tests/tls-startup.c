/* __thread with an initialiser in a library loaded at program start.  */
#include "tls-startup.h"

__thread int xp_tls_startup = 0x2222;

/* Reached from the library's own code, through its TLS model rather than
   the executable's.  */
int
xp_tls_startup_get (void)
{
  return xp_tls_startup;
}

int *
xp_tls_startup_address (void)
{
  return &xp_tls_startup;
}
