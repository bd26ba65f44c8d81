#!/bin/bash
# SQLite: four python3 threads write one WAL database through their own
# connections while two threads read it (SQLite's own mutexes and the
# file locks between connections), then the sqlite3 shell builds indexes
# with PRAGMA threads=2 (its sorter starts worker threads) and queries.
# The counts and sums must be the ones computed here by other means.
. "$XP_SRCDIR/tests/real/lib.sh"
real_need python3 sqlite3
python3 -c 'import sqlite3' 2> /dev/null || real_skip "python3 has no sqlite3 module"

ROWS=400000
cat > "$T/writers.py" <<'PYTHON'
import sqlite3, sys, threading

path, WRITERS, PER = sys.argv[1], 4, 4000
db = sqlite3.connect(path, timeout=60)
db.execute("PRAGMA journal_mode=WAL")
db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, w INTEGER, who INTEGER)")
db.commit()
done = threading.Event()
errors, reads = [], [0]

def writer(n):
    try:
        c = sqlite3.connect(path, timeout=60)
        # No fsync per commit: time the locking, not the disk.
        c.execute("PRAGMA synchronous=OFF")
        for lo in range(0, PER, 100):
            with c:
                c.executemany("INSERT INTO t VALUES (?, ?, ?)",
                              [(n * PER + i, (n * PER + i) * 7919 % 10007, n)
                               for i in range(lo, lo + 100)])
        c.close()
    except Exception as e:
        errors.append(repr(e))

def reader():
    c = sqlite3.connect(path, timeout=60)
    last = 0
    while not done.is_set():
        (n,) = c.execute("SELECT count(*) FROM t").fetchone()
        if n < last or n % 100:
            errors.append("reader saw %d rows after %d" % (n, last))
        last = n
        reads[0] += 1
    c.close()

ws = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
rs = [threading.Thread(target=reader) for _ in range(2)]
for t in ws + rs: t.start()
for t in ws: t.join()
done.set()
for t in rs: t.join()
if errors:
    sys.exit("errors: %s" % errors[:3])
got = db.execute("SELECT count(*), sum(w), count(DISTINCT who) FROM t").fetchone()
want = (WRITERS * PER, sum(k * 7919 % 10007 for k in range(WRITERS * PER)), WRITERS)
if got != want:
    sys.exit("table t holds %s, expected %s" % (got, want))
print("writers: rows %d sum %d by %d threads" % got)
PYTHON

cat > "$T/index.sql" <<SQL
PRAGMA threads=2;
PRAGMA cache_size=200;
CREATE TABLE big AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<$ROWS)
  SELECT x, (x*7919)%1000003 AS y, printf('%08x-%d', (x*31337)%999983, x) AS s FROM c;
CREATE INDEX big_s ON big(s);
CREATE INDEX big_y ON big(y);
PRAGMA integrity_check;
SELECT count(*), sum(y) FROM big;
SELECT group_concat(x) FROM (SELECT x FROM big ORDER BY s LIMIT 5);
SQL
# What the shell must answer (PRAGMA threads echoes the limit), computed
# by awk instead.
awk -v n=$ROWS 'BEGIN {
  for (x = 1; x <= n; x++) { y = (x * 7919) % 1000003; sum += y
    s[x] = sprintf("%08x-%d", (x * 31337) % 999983, x) }
  printf "2\nok\n%d|%.0f\n", n, sum
  for (x in s) print s[x] | "sort | head -5 | sed s/.*-// | paste -sd, -"
}' > "$T/expected"

workload ()
{
  rm -f "$T"/db*
  real_timed "$1" python3 "$T/writers.py" "$T/db" > "$T/$1.result" ||
    { echo "FAIL: the python3 writer threads failed"; return 1; }
  real_timed "$1" sqlite3 "$T/db" < "$T/index.sql" > "$T/out" ||
    { echo "FAIL: sqlite3 failed"; return 1; }
  if ! cmp -s "$T/out" "$T/expected"; then
    echo "FAIL: sqlite3 answered"; cat "$T/out"; echo "expected"; cat "$T/expected"
    return 1
  fi
  cat "$T/out" >> "$T/$1.result"
}

real_main
