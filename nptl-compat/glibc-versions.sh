#!/bin/sh
# Print, in abilist format, the versions glibc's libc.so.6 gives each name
# read on standard input:  name default-version [compat-version...]
# ("-" when glibc has no default version, i.e. the name is compat-only).
# Used to write nptl-compat/<arch>/abilist and by the ABI test to compare
# that list with the glibc on the machine.
set -eu
libc=${1:-$(${CC:-cc} -print-file-name=libc.so.6)}
names=$(mktemp)
trap 'rm -f "$names"' EXIT
cat > "$names"
nm -D --with-symbol-versions --defined-only "$libc" |
awk 'NR == FNR { want[$1] = 1; next }
     { split($3, p, "@"); name = p[1]
       if (!(name in want)) next
       if ($3 ~ /@@/) def[name] = p[3]; else compat[name] = compat[name] " " p[2] }
     END { for (n in want) if ((n in def) || (n in compat))
             print n " " ((n in def) ? def[n] : "-") compat[n] }' "$names" - |
sort
