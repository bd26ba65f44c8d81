/* A dlopen'ed module compiled with -ftls-model=initial-exec: its __thread
   variable lives in static TLS, which glibc fills only in the threads it
   knows about when the module is loaded.  */

__thread int xp_tls_ie = 0x1234;

int
xp_tls_ie_get (void)
{
  return xp_tls_ie;
}

void
xp_tls_module_set (int value)
{
  xp_tls_ie = value;
}
