/* A dlopen'ed module with general-dynamic __thread variables: each thread
   gets its block on first access through __tls_get_addr.  */

__thread int xp_tls_dynamic = 0x3333;
/* Large enough that it cannot come from spare static TLS by accident.  */
__thread char xp_tls_dynamic_pad[8192] = "pad";

int
xp_tls_dynamic_get (void)
{
  if (xp_tls_dynamic_pad[0] != 'p')
    return -1;
  return xp_tls_dynamic;
}

void
xp_tls_module_set (int value)
{
  xp_tls_dynamic = value;
}
