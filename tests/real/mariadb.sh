#!/bin/bash
# MariaDB with sysbench's oltp_read_write: the server (one process, a
# thread per connection, InnoDB's own mutexes and waits on pthread
# condition variables) and the client are preloaded; sysbench runs 8
# threads for a fixed number of transactions on 4 tables of 10000 rows.
# No transaction may fail beyond the deadlocks InnoDB reports and
# sysbench retries (glibc's runs have them too), no connection may be
# lost, CHECK TABLE must find every table OK, and every table must keep
# its 10000 distinct ids (each transaction deletes a row and inserts it
# back).  The server must stop cleanly on SIGTERM.
. "$XP_SRCDIR/tests/real/lib.sh"
real_need mariadbd mariadb-install-db mariadb sysbench
lua=/usr/share/sysbench/oltp_read_write.lua
[ -r "$lua" ] || real_skip "sysbench has no $lua"

TABLES=4 ROWS=10000 THREADS=8 TX=3000
mariadb-install-db --no-defaults --datadir="$T/data" --user="$(id -un)" \
  --auth-root-authentication-method=normal --skip-test-db > "$T/install.log" 2>&1 ||
  { cat "$T/install.log"; echo "ERROR: mariadb-install-db failed"; exit 99; }

workload ()
{
  local mode=$1 port pid
  port=$(real_port) || return 1
  real_start "$mode" "$T/server.log" mariadbd --no-defaults \
    --datadir="$T/data" --socket="$T/sock" --port="$port" \
    --bind-address=127.0.0.1 --user="$(id -un)" --pid-file="$T/pid" \
    --innodb-buffer-pool-size=64M --innodb-flush-log-at-trx-commit=0 \
    --max-connections=50
  pid=$REAL_PID
  real_wait_port "$pid" "$port" || { cat "$T/server.log"; return 1; }
  local db=(--mysql-socket="$T/sock" --mysql-user=root --mysql-db=sbtest
            --tables=$TABLES --table-size=$ROWS)
  real_run "$mode" mariadb --socket="$T/sock" -uroot \
    -e "DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest" &&
    real_run "$mode" sysbench "$lua" --db-driver=mysql "${db[@]}" prepare \
      > "$T/prepare.log" ||
    { echo "FAIL: preparing the tables failed"; cat "$T/prepare.log"; return 1; }
  real_timed "$mode" sysbench "$lua" --db-driver=mysql "${db[@]}" \
    --threads=$THREADS --events=$TX --time=0 run > "$T/bench" ||
    { echo "FAIL: sysbench failed"; cat "$T/bench"; tail "$T/server.log"; return 1; }
  grep -E '^ *(transactions|ignored errors|reconnects):' "$T/bench"
  local t checks=
  for t in $(seq $TABLES); do
    checks="$checks CHECK TABLE sbtest$t;
      SELECT 'rows', count(*), count(DISTINCT id), min(id), max(id) FROM sbtest$t;"
  done
  real_run "$mode" mariadb --socket="$T/sock" -uroot -N -B -D sbtest \
    -e "$checks" > "$T/checks" || { echo "FAIL: the checks failed"; return 1; }
  real_stop "$mode" "$pid" || { tail -20 "$T/server.log"; return 1; }
  grep -Eq "^ *transactions: +$TX " "$T/bench" ||
    { echo "FAIL: not all $TX transactions were done"; cat "$T/bench"; return 1; }
  grep -Eq '^ *reconnects: +0 ' "$T/bench" ||
    { echo "FAIL: connections were lost"; cat "$T/bench"; return 1; }
  local tab=$'\t'
  if [ "$(grep -c "${tab}check${tab}status${tab}OK$" "$T/checks")" != $TABLES ] ||
     [ "$(grep -c "^rows$tab$ROWS$tab$ROWS${tab}1$tab$ROWS$" "$T/checks")" != $TABLES ]; then
    echo "FAIL: a table is damaged or lost rows:"; cat "$T/checks"; return 1
  fi
  if grep -E '\[ERROR\]|Assertion|signal [0-9]+' "$T/server.log"; then
    echo "FAIL: the server logged errors"; return 1
  fi
  echo "$TX transactions, $TABLES tables OK with $ROWS rows each" > "$T/$mode.result"
}

real_main
