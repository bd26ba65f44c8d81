#!/bin/bash
# xz -T2 and zstd -T2: compress and decompress generated data; the round
# trip must give back the same bytes, and the compressed bytes (both
# tools' threaded output is deterministic) must be glibc's.
. "$XP_SRCDIR/tests/real/lib.sh"
real_need xz zstd sha256sum

# Compressible but large enough for both tools to cut it into blocks for
# both threads (xz: 1 MiB blocks).
seq 1 4000000 > "$T/data" || exit 99
want=$(sha256sum < "$T/data" | cut -d' ' -f1)

# round_trip MODE NAME COMPRESSOR...
round_trip ()
{
  local mode=$1 name=$2; shift 2
  real_timed "$mode" "$@" -c "$T/data" > "$T/packed" ||
    { echo "FAIL: $name compression failed"; return 1; }
  real_timed "$mode" "$@" -d -c "$T/packed" > "$T/unpacked" ||
    { echo "FAIL: $name decompression failed"; return 1; }
  local got
  got=$(sha256sum < "$T/unpacked" | cut -d' ' -f1)
  if [ "$got" != "$want" ]; then
    echo "FAIL: $name round trip changed the data ($got, want $want)"
    return 1
  fi
  echo "$name: $(wc -c < "$T/data") bytes, $(wc -c < "$T/packed") compressed," \
       "packed sha256 $(sha256sum < "$T/packed" | cut -d' ' -f1)" >> "$T/$mode.result"
}

workload ()
{
  round_trip "$1" xz xz -2 -T2 --block-size=1MiB &&
    round_trip "$1" zstd zstd -q -3 -T2
}

real_main
