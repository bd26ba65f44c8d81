#!/bin/sh
# The portable core (lib/) and the per-architecture primitives (arch/)
# know no particular glibc release: what differs between releases (the
# condition variable's layout and protocol, the rseq area, descriptor
# offsets, glibc's version) is detected or tabled in the glibc layer
# (nptl-compat/), which lib/ asks.  Fails when code outside that layer
# spells one of those facts; comments are not looked at.  An exception
# needs a line in tests/glibc-seam.allow saying why.
set -eu
srcdir=${XP_SRCDIR:-.}
allow=$srcdir/tests/glibc-seam.allow

# Compile-time release conditionals, glibc's version at run time, and the
# private or release-dependent fields and entry points.
pattern='__GLIBC__|__GLIBC_MINOR__|__GLIBC_PREREQ|gnu_get_libc_version'
pattern="$pattern|gnu_get_libc_release|_CS_GNU_LIBC_VERSION"
pattern="$pattern|__rseq_offset|__rseq_size|__rseq_flags"
pattern="$pattern|__pthread_cond_s|__g_refs|__g_signals|__g_size|__g1_start"
pattern="$pattern|__g1_orig_size|__wseq|__wrefs"
pattern="$pattern|_thread_db_|_dl_get_tls_static_info|_dl_allocate_tls"
pattern="$pattern|__libc_single_threaded"

found=$(mktemp)
trap 'rm -f "$found"' EXIT
cd "$srcdir"
for f in $(find lib arch -name '*.[chS]' | sort); do
  # Strip comments (and nothing else) before looking; gcc's way, which
  # clang's preprocessor does not share.
  gcc -fpreprocessed -dD -E -P -x c "$f" 2> /dev/null |
    grep -oE "$pattern" | sort -u | sed "s|^|$f |" >> "$found" || true
done

status=0
while read -r file word; do
  if ! grep -q "^$file $word " "$allow"; then
    echo "glibc-seam: $file spells $word; release knowledge belongs in nptl-compat/"
    status=1
  fi
done < "$found"
# Every exception is still needed.
while read -r file word reason; do
  case $file in ''|'#'*) continue ;; esac
  if ! grep -q "^$file $word\$" "$found"; then
    echo "glibc-seam: $allow: $file no longer spells $word; drop the line"
    status=1
  fi
done < "$allow"
[ $status = 0 ] && echo "glibc-seam: lib/ and arch/ spell no glibc release knowledge ($(wc -l < "$found") allowed)"
exit $status
