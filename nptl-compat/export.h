/* Exporting a public function under glibc's symbol versions.

   Write XP_EXPORT (name) after the definition of name.  It expands to the
   .symver directives the abilist asks for: the default version (for new
   links) and every older version glibc still carries (for binaries built
   against an older glibc).  A name missing from the abilist is a compile
   error, so the list and the code cannot drift apart.

   Old versions alias the same code unless the abilist names a separate
   implementation (an older ABI).  In the static library only the old
   versions are marked: a plain name already serves a static link.  */
#ifndef XP_NPTL_COMPAT_EXPORT_H
#define XP_NPTL_COMPAT_EXPORT_H

#include "xp-symver.h"

#ifdef PIC
# define XP_SYMVER_DEFAULT(name, version) \
  __asm__ (".symver " #name "," #name "@@" version);
#else
# define XP_SYMVER_DEFAULT(name, version)
#endif

/* A name whose old versions all have code of their own gets its default
   version by renaming its definition (.symver ..., remove): the plain
   name must not stay in the symbol table, or the version script, which
   lists the name under the old versions too, would give it one of those
   as a second default version.  Calls inside the library then use a
   hidden alias (lib/sync/cond.h).  */
#ifdef PIC
# define XP_SYMVER_DEFAULT_ALIAS(name, version) \
  __asm__ (".symver " #name "," #name "@@" version ",remove");
#else
# define XP_SYMVER_DEFAULT_ALIAS(name, version)
#endif

/* gcc wants an alias to carry its target's attributes (nothrow...).  */
#ifdef __clang__
# define XP_ALIAS_OF(name) __attribute__ ((alias (#name)))
#else
# define XP_ALIAS_OF(name) __attribute__ ((alias (#name), copy (name)))
#endif

/* Old versions of deprecated functions are still part of the ABI.  */
#define XP_SYMVER_COMPAT(name, tag, version) \
  _Pragma ("GCC diagnostic push") \
  _Pragma ("GCC diagnostic ignored \"-Wdeprecated-declarations\"") \
  extern __typeof (name) xp_compat_##name##_##tag XP_ALIAS_OF (name); \
  _Pragma ("GCC diagnostic pop") \
  __asm__ (".symver xp_compat_" #name "_" #tag "," #name "@" version);

#define XP_SYMVER_IMPL(name, impl, version) \
  __asm__ (".symver " #impl "," #name "@" version);

#define XP_EXPORT(name) XP_VERSIONS_##name

/* Write XP_EXPORT_OLD (impl) after the definition of a separate
   implementation of an older ABI (abilist "VERSION=impl").  Code for a
   name or an old ABI that one architecture's abilist lacks (glibc's
   aarch64 and riscv64 ports begin at GLIBC_2.17 and GLIBC_2.27) is kept
   out of its build with #ifdef XP_VERSIONS_name or #ifdef
   XP_OLD_VERSION_impl, which the abilist defines.  */
#define XP_EXPORT_OLD(impl) XP_OLD_VERSION_##impl

#endif
