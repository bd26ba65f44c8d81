#!/bin/sh
# The USDT probes (man/xpthread-probes.7, lib/internal/probes.h).
#
# 1. readelf -n lists exactly the probes the manual page documents, all
#    under provider libc, each site with as many arguments as the page
#    gives; perf lists them as sdt_libc events where perf is installed.
# 2. Where bpftrace can attach (root, BPF and uprobes in the kernel), it
#    counts the probes fired by tests/probe-contend, whose worker takes
#    one mutex ROUNDS times, each time after a wait: mutex_entry and
#    mutex_acquired exactly ROUNDS times for that mutex.  Where it cannot,
#    the listing alone is checked and the reason printed.  bpftrace
#    traces a copy of the library, so that the tests running meanwhile
#    under valgrind do not meet its breakpoints.
#
# Skipped (77) when the library was built without <sys/sdt.h>.
set -u

lib=${XP_LIB:?XP_LIB: the libxpthread.so to check}
builddir=${XP_BUILDDIR:?}
srcdir=${XP_SRCDIR:?}
page=$srcdir/man/xpthread-probes.7
prog=$builddir/tests/probe-contend
rounds=200
fail=0

if ! grep -q '^#define HAVE_SYS_SDT_H 1' "$builddir/config.h"; then
  echo "probes: SKIP: built without <sys/sdt.h> (Debian: systemtap-sdt-dev)" \
       "or with --disable-probes: the library has no probes"
  exit 77
fi
if ! command -v readelf >/dev/null 2>&1; then
  echo "probes: SKIP: no readelf (Debian: binutils)"
  exit 77
fi

work=$(mktemp -d)
bt_pid=
cleanup () {
  [ -n "$bt_pid" ] && kill "$bt_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# "name nargs" per probe site: from the library, and from the page (the
# ".TP / .B name / Arguments: ..." entries of its PROBES section).
readelf -n "$lib" | awk '
  /Provider:/ { provider = $2 }
  /Name:/ { name = $2 }
  /Arguments:/ { print provider, name, NF - 1 }
' | sort -u > "$work/sites"
readelf -n "$lib" | grep -c 'NT_STAPSDT' > "$work/count"
awk '
  /^\.SH / { in_probes = ($2 == "PROBES") }
  in_probes && prev == ".TP" && $1 == ".B" { name = $2 }
  in_probes && name != "" && /^Arguments:/ {
    print "libc", name, gsub(/\\fI/, ""); name = "" }
  { prev = $0 }
' "$page" | sort -u > "$work/documented"

if [ ! -s "$work/documented" ]; then
  echo "probes: FAIL: no probe found in $page"
  exit 1
fi
if [ "$(cat "$work/count")" -eq 0 ]; then
  echo "probes: FAIL: $lib has no stapsdt notes although config.h has <sys/sdt.h>"
  exit 1
fi
# Each probe's argument counts must agree with the page at every site.
if ! diff -u "$work/documented" "$work/sites" > "$work/diff"; then
  echo "probes: FAIL: probes in $lib (+) differ from $page (-):"
  cat "$work/diff"
  fail=1
else
  echo "probes: readelf lists the $(wc -l < "$work/documented") documented" \
       "probes (provider libc, $(cat "$work/count") sites, arguments as documented)"
fi

# perf's listing, with a build-id cache of our own (perf keeps it in
# $HOME/.debug).
if command -v perf >/dev/null 2>&1; then
  mkdir "$work/home"
  if HOME=$work/home perf buildid-cache --add "$lib" > "$work/perf.log" 2>&1 &&
     HOME=$work/home perf list 'sdt_libc:*' > "$work/perf" 2>> "$work/perf.log"; then
    missing=
    for p in $(awk '{ print $2 }' "$work/documented"); do
      grep -q "sdt_libc:$p " "$work/perf" || missing="$missing $p"
    done
    if [ -n "$missing" ]; then
      echo "probes: FAIL: perf list lacks:$missing"
      fail=1
    else
      echo "probes: perf lists them as sdt_libc:* events"
    fi
  else
    echo "probes: perf could not read the library (listing by perf skipped):"
    cat "$work/perf.log"
  fi
else
  echo "probes: no perf (Debian: linux-perf): listing by perf skipped"
fi

# --- counting with bpftrace ---------------------------------------------
skip_count () {
  echo "probes: contended acquisitions not counted: $*"
  exit $fail
}
command -v bpftrace >/dev/null 2>&1 || skip_count "no bpftrace (Debian: bpftrace)"
[ "$(id -u)" -eq 0 ] || skip_count "bpftrace needs root"
[ -x "$prog" ] || { echo "probes: FAIL: no $prog"; exit 1; }

# A uprobe is a breakpoint in every process that maps the file, and the
# tests that run under valgrind meanwhile would execute it as SIGTRAP: so
# bpftrace attaches to a copy of the library, which only the traced
# program loads.  BEGIN fires once every probe is attached.
cp "$lib" "$work/libxpthread.so"
lib=$work/libxpthread.so
comm=$(basename "$prog" | cut -c1-15)
cat > "$work/count.bt" <<EOF
BEGIN { printf("ready\n"); }
usdt:$lib:libc:mutex_entry /comm == "$comm"/ { @entry[arg0] = count(); }
usdt:$lib:libc:mutex_acquired /comm == "$comm"/ { @acquired[arg0] = count(); }
usdt:$lib:libc:lll_lock_wait /comm == "$comm"/ { @sleeps[arg0] = count(); }
usdt:$lib:libc:pthread_create /comm == "$comm"/ { @created = count(); }
usdt:$lib:libc:pthread_join_ret /comm == "$comm"/ { @joined = count(); }
EOF
# One traced run of the program into $work/bt.out; fails (1) without
# counts: bpftrace could not attach or did not end (the reason in
# $work/why).  Never left running: bpftrace 0.17 has been seen not to end
# on SIGINT.
traced_run () {
  timeout -k 5 300 bpftrace "$work/count.bt" > "$work/bt.out" 2>&1 &
  bt_pid=$!
  ready=
  for _ in $(seq 300); do
    grep -q '^ready' "$work/bt.out" && { ready=yes; break; }
    kill -0 "$bt_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$ready" ]; then
    kill "$bt_pid" 2>/dev/null
    wait "$bt_pid" 2>/dev/null
    bt_pid=
    echo "bpftrace could not attach: $(grep -v RLIMIT_MEMLOCK "$work/bt.out" | head -5)" > "$work/why"
    return 1
  fi
  if ! LD_PRELOAD=$lib timeout 120 "$prog" "$rounds" > "$work/prog.out"; then
    echo "probes: FAIL: $prog $rounds failed"
    cat "$work/prog.out"
    exit 1
  fi
  kill -INT "$bt_pid"
  ended=
  for _ in $(seq 100); do
    kill -0 "$bt_pid" 2>/dev/null || { ended=yes; break; }
    sleep 0.1
  done
  if [ -z "$ended" ]; then
    kill -KILL "$bt_pid" 2>/dev/null
    pkill -KILL -f "bpftrace $work/count.bt" 2>/dev/null
    wait "$bt_pid" 2>/dev/null
    bt_pid=
    echo "bpftrace did not end within 10 s of SIGINT, so it printed no counts" > "$work/why"
    return 1
  fi
  wait "$bt_pid"
  bt_pid=
}

# bpftrace has been seen to print "ready" and then count no event at all,
# not even the program's one pthread_create: a run that traced nothing
# says nothing of the probes, so it is tried once more.
traced_run || skip_count "$(cat "$work/why")"
if ! grep -q '^@created: *[1-9]' "$work/bt.out"; then
  echo "probes: bpftrace saw no event of the traced program; tracing again"
  traced_run || skip_count "$(cat "$work/why")"
fi

addr=$(sed -n 's/^mutex //p' "$work/prog.out")
value () {   # value MAP [KEY]: what bpftrace printed for @MAP[KEY], or 0
  v=$(sed -n "s/^@$1${2:+\\[$2\\]}: *//p" "$work/bt.out")
  echo "${v:-0}"
}
entry=$(value entry "$addr")
acquired=$(value acquired "$addr")
sleeps=$(value sleeps "$addr")
created=$(value created)
joined=$(value joined)
echo "probes: bpftrace counted, for $rounds contended locks:" \
     "mutex_entry $entry, mutex_acquired $acquired, lll_lock_wait $sleeps," \
     "pthread_create $created, pthread_join_ret $joined"
if [ "$entry" != "$rounds" ] || [ "$acquired" != "$rounds" ] ||
   [ "$sleeps" -lt "$rounds" ] || [ "$created" != 1 ] || [ "$joined" != 1 ]; then
  echo "probes: FAIL: expected $rounds, $rounds, at least $rounds, 1, 1; bpftrace said:"
  grep -v -e RLIMIT_MEMLOCK -e uprobe_events -e 'failed to detach' "$work/bt.out"
  fail=1
fi
exit $fail
