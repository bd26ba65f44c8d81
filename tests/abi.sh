#!/bin/sh
# The library exports exactly the names and versions of the abilist, and
# the abilist gives each glibc name exactly the versions the machine's
# glibc gives it, so that every binary's references bind to xpthread.
set -eu
srcdir=${XP_SRCDIR:-.}
arch=$(uname -m)
abilist=$srcdir/nptl-compat/$arch/abilist
lib=${XP_LIB:?XP_LIB must name libxpthread.so}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Expected: name@@default and name@old for every abilist line.
awk '!/^#/ && NF { if ($2 != "-") print $1 "@@" $2
                   for (i = 3; i <= NF; i++) { split($i, v, "="); print $1 "@" v[1] } }' \
  "$abilist" | sort > "$tmp/expected"
nm -D --with-symbol-versions --defined-only "$lib" |
  awk '$2 != "A" { print $3 }' | sort > "$tmp/exported"
if ! cmp -s "$tmp/expected" "$tmp/exported"; then
  echo "exports differ from $abilist (< expected, > exported):"
  diff "$tmp/expected" "$tmp/exported" || true
  exit 1
fi

# The abilist against the running glibc, for the names glibc has.
awk '!/^#/ && NF && $2 !~ /^XPTHREAD/ { print $1 }' "$abilist" |
  sh "$srcdir/nptl-compat/glibc-versions.sh" > "$tmp/glibc"
awk '!/^#/ && NF && $2 !~ /^XPTHREAD/ {
       line = $1 " " $2
       for (i = 3; i <= NF; i++) { split($i, v, "="); line = line " " v[1] }
       print line }' "$abilist" > "$tmp/ours"
normalise () { awk '{ printf "%s %s", $1, $2; n = 0
                      for (i = 3; i <= NF; i++) c[++n] = $i
                      # order of old versions does not matter
                      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                        if (c[j] < c[i]) { t = c[i]; c[i] = c[j]; c[j] = t }
                      for (i = 1; i <= n; i++) printf " %s", c[i]
                      print "" }' "$1" | sort; }
normalise "$tmp/glibc" > "$tmp/glibc.n"
normalise "$tmp/ours" > "$tmp/ours.n"
if ! cmp -s "$tmp/glibc.n" "$tmp/ours.n"; then
  echo "abilist differs from this machine's glibc (< glibc, > abilist):"
  diff "$tmp/glibc.n" "$tmp/ours.n" || true
  exit 1
fi
echo "abi: $(wc -l < "$tmp/exported") versioned exports match"
