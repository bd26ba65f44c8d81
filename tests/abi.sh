#!/bin/sh
# The library exports exactly the names and versions of the abilist, and
# the abilist gives each glibc name exactly the versions the machine's
# glibc gives it, so that every binary's references bind to xpthread.
set -eu
srcdir=${XP_SRCDIR:-.}
# The architecture the library was built for (configure's, which make
# check passes), not necessarily this machine's.
arch=${XP_ARCH:-$(uname -m)}
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
# Names newer than this glibc (the abilist spans every supported release)
# are compared where they exist.
awk 'NR == FNR { has[$1] = 1; next } $1 in has' "$tmp/glibc" "$tmp/ours" \
  > "$tmp/ours.here"
normalise "$tmp/glibc" > "$tmp/glibc.n"
normalise "$tmp/ours.here" > "$tmp/ours.n"
if ! cmp -s "$tmp/glibc.n" "$tmp/ours.n"; then
  echo "abilist differs from this machine's glibc (< glibc, > abilist):"
  diff "$tmp/glibc.n" "$tmp/ours.n" || true
  exit 1
fi

# And every public name of glibc's thread ABI is in the abilist, so that
# no program built against this glibc binds one to glibc's threads.
libc=$(${CC:-cc} -print-file-name=libc.so.6)
nm -D --with-symbol-versions --defined-only "$libc" |
  awk '{ split($3, p, "@"); v = p[length(p)] }
       v != "GLIBC_PRIVATE" && p[1] ~ /^(_*pthread_|sem_|thrd_|mtx_|cnd_|tss_|call_once$)/ { print p[1] }' |
  sort -u > "$tmp/glibc-thread-names"
awk '!/^#/ && NF { print $1 }' "$abilist" | sort -u > "$tmp/abilist-names"
missing=$(comm -23 "$tmp/glibc-thread-names" "$tmp/abilist-names")
if [ -n "$missing" ]; then
  echo "this machine's glibc has thread functions the abilist lacks:" $missing
  exit 1
fi
echo "abi: $(wc -l < "$tmp/exported") versioned exports match"
