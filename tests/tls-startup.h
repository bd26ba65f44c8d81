/* A library the glibc suite is linked with, whose __thread variable lives
   in static TLS set up at program start.  */
#ifndef XP_TESTS_TLS_STARTUP_H
#define XP_TESTS_TLS_STARTUP_H

extern __thread int xp_tls_startup;

int xp_tls_startup_get (void);
int *xp_tls_startup_address (void);

#endif
