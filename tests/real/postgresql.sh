#!/bin/bash
# PostgreSQL with pgbench: the postmaster and every backend it forks are
# preloaded (they share process-shared POSIX semaphores in shared memory,
# sem_init/sem_wait/sem_post); pgbench runs 8 clients on 2 threads, a
# fixed number of TPC-B-like transactions.  No transaction may fail, and
# the balances must add up: accounts, tellers and branches each sum to
# the history's deltas, with one history row per transaction.
. "$XP_SRCDIR/tests/real/lib.sh"
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -n 1)
[ -n "$pgbin" ] && PATH=$pgbin:$PATH
real_need initdb postgres pgbench psql

CLIENTS=8 TX=1000
# The server refuses to run as root: run it as postgres, from files that
# user can read (the build tree may be in a private home directory).
as=()
if [ "$(id -u)" = 0 ]; then
  id postgres > /dev/null 2>&1 || real_skip "running as root and no postgres user"
  as=(setpriv --reuid=postgres --regid=postgres --init-groups)
  chmod 755 "$T"
fi
mkdir "$T/lib" && cp "$XP_LIB" "$T/lib/libxpthread.so" && chmod -R a+rX "$T/lib" || exit 99
XP_LIB=$T/lib/libxpthread.so
mkdir -m 700 "$T/pg" "$T/sock" && chmod 777 "$T/sock" || exit 99
[ ${#as[@]} = 0 ] || chown postgres: "$T/pg" || exit 99
"${as[@]}" initdb -D "$T/pg" -A trust -U postgres --no-sync > "$T/initdb.log" 2>&1 ||
  { cat "$T/initdb.log"; echo "ERROR: initdb failed"; exit 99; }

workload ()
{
  local mode=$1 port pid c maps
  port=$(real_port) || return 1
  real_start "$mode" "$T/server.log" "${as[@]}" postgres -D "$T/pg" \
    -k "$T/sock" -h 127.0.0.1 -p "$port" -c fsync=off \
    -c synchronous_commit=off -c shared_buffers=32MB -c max_connections=30
  pid=$REAL_PID
  real_wait_port "$pid" "$port" || { cat "$T/server.log"; return 1; }
  local conn=(-h 127.0.0.1 -p "$port" -U postgres)
  real_run "$mode" pgbench "${conn[@]}" -i -q -s 2 postgres > "$T/init.log" 2>&1 ||
    { echo "FAIL: pgbench -i failed"; cat "$T/init.log"; return 1; }
  real_timed "$mode" pgbench "${conn[@]}" -c $CLIENTS -j 2 -t $TX postgres > "$T/bench" ||
    { echo "FAIL: pgbench failed"; cat "$T/bench"; tail "$T/server.log"; return 1; }
  grep -E '^(number of (transactions actually processed|failed)|tps)' "$T/bench"
  # Every process the postmaster forked has the library mapped.
  local kids=0 bare=
  for c in $(ps -o pid= --ppid "$pid"); do
    # A backend may exit in between (a zombie's maps are empty).
    maps=$(cat "/proc/$c/maps" 2> /dev/null) && [ -n "$maps" ] || continue
    kids=$((kids + 1))
    case $maps in *libxpthread*) ;; *) bare="$bare $c" ;; esac
  done
  if [ "$mode" != glibc ] && { [ $kids = 0 ] || [ -n "$bare" ]; }; then
    echo "FAIL: of $kids server processes, these lack libxpthread:$bare"; return 1
  fi
  real_run "$mode" psql "${conn[@]}" -XAtq -d postgres -c "
    SELECT 'history', count(*), sum(delta) FROM pgbench_history;
    SELECT 'accounts', count(*), sum(abalance) FROM pgbench_accounts;
    SELECT 'tellers', count(*), sum(tbalance) FROM pgbench_tellers;
    SELECT 'branches', count(*), sum(bbalance) FROM pgbench_branches;" > "$T/sums" ||
    { echo "FAIL: psql failed"; return 1; }
  real_stop "$mode" "$pid" || { tail -20 "$T/server.log"; return 1; }
  grep -q "^number of transactions actually processed: $((CLIENTS * TX))/$((CLIENTS * TX))$" "$T/bench" ||
    { echo "FAIL: not all transactions were processed"; cat "$T/bench"; return 1; }
  # pgbench 14 and later count failures; older ones fail outright instead.
  if grep -q '^number of failed' "$T/bench" &&
     ! grep -q '^number of failed transactions: 0 ' "$T/bench"; then
    echo "FAIL: transactions failed"; cat "$T/bench"; return 1
  fi
  # history: one row per transaction; every table sums to the deltas;
  # scale 2: 200000 accounts, 20 tellers, 2 branches.
  if ! awk -F'|' -v tx=$((CLIENTS * TX)) '
      $1 == "history" { n = $2; sum = $3; ok = (n == tx) }
      $1 == "accounts" { ok = ok && $2 == 200000 && $3 == sum }
      $1 == "tellers" { ok = ok && $2 == 20 && $3 == sum }
      $1 == "branches" { ok = ok && $2 == 2 && $3 == sum; done = 1 }
      END { exit !(ok && done) }' "$T/sums"; then
    echo "FAIL: the balances do not add up (table|rows|sum):"; cat "$T/sums"; return 1
  fi
  # The sums depend on pgbench's random choices: only the shape is the same.
  echo "$((CLIENTS * TX)) transactions, none failed, balances add up" > "$T/$mode.result"
}

real_main
