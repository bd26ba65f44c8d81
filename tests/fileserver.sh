#!/bin/sh
# The example file server (examples/fileserver.c) creates every file as
# the user of its request, with both kinds of identity switch.
set -eu
if [ "$(id -u)" != 0 ]; then
  echo "fileserver: SKIP: needs root"
  exit 77
fi
server=${XP_BUILDDIR:-.}/examples/fileserver
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"   # the users must reach the directory below
for flags in "" -f; do
  rm -rf "$tmp/files"
  mkdir -m 1777 "$tmp/files"
  "$server" $flags -w 4 "$tmp/files" 64 > "$tmp/out"
  test "$(wc -l < "$tmp/out")" = 64
  test "$(cut -d' ' -f2 "$tmp/out" | sort -u | wc -l)" = 4
  while read -r path uid gid; do
    got=$(stat -c '%u %g' "$path")
    if [ "$got" != "$uid $gid" ]; then
      echo "fileserver $flags: $path is owned by $got, expected $uid $gid"
      exit 1
    fi
  done < "$tmp/out"
  echo "fileserver $flags: 64 files, owners right"
done
