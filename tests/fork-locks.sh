#!/bin/sh
# Every process-wide internal lock is in the table that fork holds
# (lib/internal/fork-locks.h): it must be defined with XP_FORK_LOCK, which
# alone uses XP_LOCK_INIT.  Lists any other definition: an initialised
# lock, or a static or file-scope xp_lock_t (struct members, which are
# indented and not static, are per-thread and handled at fork by init.c).
src=${XP_SRCDIR:-$(dirname "$0")/..}
found=$(grep -rnE --include='*.c' --include='*.h' \
          -e 'XP_LOCK_INIT' \
          -e '^(static[[:space:]]+)?xp_lock_t[[:space:]]+[A-Za-z_]' \
          -e '^[[:space:]]+static[[:space:]]+xp_lock_t[[:space:]]' \
          "$src/lib" "$src/nptl-compat" |
        grep -vE '/lib/internal/(lock|fork-locks)\.h:')
if [ -n "$found" ]; then
  echo "internal locks not defined with XP_FORK_LOCK (lib/internal/fork-locks.h):"
  printf '%s\n' "$found"
  exit 1
fi
echo "every internal lock is in the fork table"
