/* Prints the mode xpthread chose; linked with -lxpthread, for
   tests/secure-env.sh.  */
#include <stdio.h>
#include <xpthread.h>

int
main (void)
{
  printf ("%s\n", xpthread_mode_np ());
  return 0;
}
