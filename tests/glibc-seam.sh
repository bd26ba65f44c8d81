#!/bin/sh
# The portable core (lib/) and the per-architecture primitives (arch/)
# know neither a particular glibc release nor glibc's private runtime:
# what differs between releases (the condition variable's layout and
# protocol, the rseq area, descriptor offsets, glibc's version) and what
# glibc keeps to itself (its TCB and jmp_buf layouts, its reserved signal
# numbers, its symbol versions, __register_atfork) are detected or
# tabled in the glibc layer (nptl-compat/), which lib/ asks.  Fails when
# code outside that layer spells one of those facts (comments are not
# looked at), and when the glibc layer includes a header of lib/ (it is
# the layer below).  An exception needs a line in tests/glibc-seam.allow
# saying why.
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
# glibc's private runtime: symbol versions, its fork handler registry,
# TCB and jmp_buf layouts, its reserved signals' numbers.
pattern="$pattern|dlvsym|\"GLIBC_2\\.[0-9.]*\"|__register_atfork"
pattern="$pattern|XP_TCB_OFF_[A-Z_0-9]+|XP_JMPBUF_[A-Z]+"
pattern="$pattern|XP_SIG(CANCEL|SETXID)[[:space:]]+[0-9]+"

found=$(mktemp)
trap 'rm -f "$found"' EXIT
cd "$srcdir"
for f in $(find lib arch -name '*.[chS]' | sort); do
  # Strip comments (and nothing else) before looking; gcc's way, which
  # clang's preprocessor does not share.
  gcc -fpreprocessed -dD -E -P -x c "$f" 2> /dev/null |
    grep -oE "$pattern" | sed 's/[[:space:]]\{1,\}/=/g' | sort -u |
    sed "s|^|$f |" >> "$found" || true
done
# The headers of lib/ that expose struct xp_thread: thread.h and every
# header that includes one of them.  The glibc layer includes none.
exposing=thread.h
while :; do
  more=$(find lib -name '*.h' | while read -r h; do
    b=$(basename "$h")
    case " $exposing " in *" $b "*) continue ;; esac
    for e in $exposing; do
      if grep -q "^#include \"$e\"" "$h"; then echo "$b"; break; fi
    done
  done | sort -u | tr '\n' ' ')
  [ -z "$more" ] && break
  exposing="$exposing $more"
done
for f in $(find nptl-compat -name '*.[ch]' | sort); do
  sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | sort -u | while read -r h; do
    case " $exposing " in *" $h "*) echo "$f include:$h" ;; esac
  done >> "$found"
done

status=0
while read -r file word; do
  if ! grep -q "^$file $word " "$allow"; then
    echo "glibc-seam: $file spells $word; glibc's private runtime and release knowledge belong in nptl-compat/, which includes no lib/ header that exposes struct xp_thread"
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
[ $status = 0 ] && echo "glibc-seam: lib/ and arch/ spell no glibc release or private runtime, nptl-compat/ includes no lib/ header that exposes struct xp_thread ($(wc -l < "$found") allowed)"
exit $status
