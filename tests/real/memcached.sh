#!/bin/bash
# memcached (4 worker threads) with memcslap (libmemcached's load
# generator, 4 threads): a set test and a get test; memcached's own
# counters (stats: cmd_set, cmd_get, get_hits, get_misses) must be what
# memcslap says it sent.
. "$XP_SRCDIR/tests/real/lib.sh"
real_need memcached memcslap

C=4 E=10000

# stats PORT: memcached's counters, through bash's /dev/tcp.
stats ()
{
  (exec 3<> "/dev/tcp/127.0.0.1/$1" || exit 1
   printf 'stats\r\nquit\r\n' >&3
   tr -d '\r' <&3) | awk '$2 ~ /^(cmd_set|cmd_get|get_hits|get_misses)$/ { print $2, $3 }'
}

workload ()
{
  local mode=$1 port pid user=()
  port=$(real_port) || return 1
  # memcached refuses to run as root without -u.
  [ "$(id -u)" = 0 ] && user=(-u root)
  real_start "$mode" "$T/server.log" memcached "${user[@]}" -l 127.0.0.1 \
    -p "$port" -U 0 -t 4 -m 64
  pid=$REAL_PID
  real_wait_port "$pid" "$port" || { cat "$T/server.log"; return 1; }
  local test
  for test in set get; do
    real_timed "$mode" memcslap --servers="127.0.0.1:$port" --test=$test \
      --concurrency=$C --execute-number=$E > "$T/$test.out" ||
      { echo "FAIL: memcslap --test=$test failed"; cat "$T/$test.out"; return 1; }
  done
  stats "$port" | sort > "$T/counts"
  real_stop "$mode" "$pid" || { tail -20 "$T/server.log"; return 1; }
  # What memcslap says it did: the set test sets C x E keys; the get test
  # first loads E keys, then C threads get E each.
  local sets gets loads
  sets=$(awk '/^Time to set .* keys by/ { print $4 }' "$T/set.out")
  loads=$(awk '/^Time to set .* keys:/ { print $4 }' "$T/get.out")
  gets=$(awk '/^Time to get .* keys by/ { print $4 }' "$T/get.out")
  if [ "$sets" != $((C * E)) ] || [ "$loads" != $E ] || [ "$gets" != $((C * E)) ]; then
    echo "FAIL: memcslap reports ${sets:-?} sets, ${loads:-?} loads, ${gets:-?} gets"
    return 1
  fi
  printf '%s\n' "cmd_get $gets" "cmd_set $((sets + loads))" "get_hits $gets" \
    "get_misses 0" > "$T/want"
  if ! cmp -s "$T/counts" "$T/want"; then
    echo "FAIL: memcached counted"; cat "$T/counts"; echo "expected"; cat "$T/want"
    return 1
  fi
  cp "$T/counts" "$T/$mode.result"
}

real_main
