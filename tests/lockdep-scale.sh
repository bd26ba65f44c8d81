#!/bin/bash
# Lockdep at scale (bench/bench-lockdep-scale): 1,000,000 live locks, and
# 10,000 classes with 100,000 orders, leave the validator on: the cycle
# planted at the end is reported, nothing says it ran out, and the
# summary counts every class and order.  Memory, from the summary's JSON
# line, against a run without them: at most 64 bytes per live lock and
# 256 per class.  How fast it checks is measured by the same program
# with -t, in bench/, not here.
set -u
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
prog=$XP_BUILDDIR/bench/bench-lockdep-scale
fail=0

# run NAME ARG...: the summary of a run as "classes orders reports
# memory", in $tmp/NAME; checks that the planted cycle, only it, was
# reported, and that nothing went unchecked.
run ()
{
  local name=$1; shift
  env LD_PRELOAD="$XP_LIB" XPTHREAD_LOCKDEP=1 XPTHREAD_LOCKDEP_FILE="$tmp/$name.file" \
    "$prog" "$@" > /dev/null 2> "$tmp/$name.err"
  local status=$?
  python3 - "$tmp/$name.file" > "$tmp/$name" <<'PYTHON'
import json, sys
cycles = 0
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    o = json.loads(line)
    # The random orders never close a cycle: the planted one has 2.
    if o["report"] == "cycle":
        cycles += len(o["orders"]) == 2
    elif o["report"] == "summary":
        print(o["classes"], o["orders"], o["reports"], cycles, o["memory"])
PYTHON
  if [ $status != 0 ] || [ -s "$tmp/$name.err" ]; then
    echo "FAIL: $name: exit status $status, and on standard error:"
    cat "$tmp/$name.err"; fail=1
  fi
}

# check NAME CLASSES ORDERS: the counts of run NAME, and its planted
# cycle, the one report.
check ()
{
  read -r classes orders reports cycles memory < "$tmp/$1"
  if [ "$classes $orders $reports $cycles" != "$2 $3 1 1" ]; then
    echo "FAIL: $1: $classes classes, $orders orders, $reports reports," \
         "$cycles planted cycle reported; want $2 classes, $3 orders, the cycle"
    fail=1
  fi
}

# per NAME COUNT LIMIT WHAT: the memory of run NAME beyond the base run's,
# per one of COUNT, at most LIMIT.
per ()
{
  local base memory
  base=$(awk '{ print $5 }' "$tmp/base")
  memory=$(awk '{ print $5 }' "$tmp/$1")
  local each=$(( (memory - base + $2 - 1) / $2 ))
  echo "lockdep-scale: $each bytes per $4"
  if [ $each -gt $3 ]; then
    echo "FAIL: $1: $each bytes per $4, more than $3"; fail=1
  fi
}

run base
check base 2 2
run live -l 1000000
check live 3 2
per live 1000000 64 "live lock"
XPTHREAD_LOCKDEP_CLASSES=instance run classes -c 10000
check classes 10002 2
per classes 10000 256 class
XPTHREAD_LOCKDEP_CLASSES=instance run orders -c 10000 -e 100000
check orders 10002 100002
[ $fail = 0 ] && echo "lockdep-scale: the validator stayed on"
exit $fail
