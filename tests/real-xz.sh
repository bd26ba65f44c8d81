#!/bin/sh
# A multi-threaded compressor under LD_PRELOAD: xz -T2 (and zstd -T2 when
# installed) compresses and decompresses about 50 MB of generated data;
# the round trip must give back the same bytes.
set -u
command -v xz > /dev/null || { echo "SKIP: xz is not installed"; exit 77; }
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

# Deterministic and compressible, but large enough for xz to cut it into
# many blocks, so that both threads get work.
seq 1 6500000 > "$tmp/data" || exit 99
want=$(sha256sum < "$tmp/data") || exit 99

preloaded ()
{
  env LD_PRELOAD="$XP_LIB" XPTHREAD_SHOW_MODE=1 "$@" 2>> "$tmp/err"
}

round_trip ()
{
  name=$1; shift
  : > "$tmp/err"
  if ! preloaded "$@" -c "$tmp/data" > "$tmp/packed"; then
    echo "FAIL: $name compression failed"; cat "$tmp/err"; return 1
  fi
  got=$(preloaded "$@" -d -c "$tmp/packed" | sha256sum)
  # Both runs announced themselves.
  lines=$(grep -c '^xpthread: mode ' "$tmp/err")
  sed -n '1p' "$tmp/err"
  if [ "$lines" -ne 2 ]; then
    echo "FAIL: $name did not run with xpthread loaded"; cat "$tmp/err"
    return 1
  fi
  if [ "$got" != "$want" ]; then
    echo "FAIL: $name round trip changed the data"; cat "$tmp/err"
    return 1
  fi
  echo "$name: round trip of $(wc -c < "$tmp/data") bytes ok" \
       "($(wc -c < "$tmp/packed") compressed)"
}

round_trip xz xz -1 -T2 || exit 1
if command -v zstd > /dev/null; then
  round_trip zstd zstd -q -3 -T2 || exit 1
fi
exit 0
