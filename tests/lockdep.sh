#!/bin/bash
# Lockdep (XPTHREAD_LOCKDEP) on tests/lockdep-cases: each lock-order bug
# (or a join or a condition wait that can deadlock) gets the report
# below (addresses, thread ids, offsets and the program's name left out;
# of each stack its first frame), although no run hangs; each correct
# pattern gets none.  Under the preload in raw and hosted mode, and
# linked with -lxpthread.  A site's line, lockdep-cases.c:@NAME@ below,
# is that of the comment "line:NAME" in the source, read from there.
set -u
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
# The programs that run () runs: C's, and C++'s.
programs ()
{
  plain=$XP_BUILDDIR/tests/$1 linked=$XP_BUILDDIR/tests/$1-linked
}
programs lockdep-cases
fail=0

# s/@NAME@/LINE/g for each "line:NAME" comment of the sources.
for source in lockdep-cases.c lockdep-cxx.cc; do
  grep -n -E -o '/\* line:[a-z-]+ \*/' "${srcdir:-.}/tests/$source"
done | sed -E 's|^([0-9]+):/\* line:([a-z-]+) \*/$|s/@\2@/\1/g|' > "$tmp/lines.sed"
if [ ! -s "$tmp/lines.sed" ]; then
  echo "FAIL: no line markers in the sources"; exit 1
fi

# Lines need libdw at run time; without it they are left out of the
# expected reports too.
: > "$tmp/no-lines.sed"
if ! { ldconfig -p 2>/dev/null || /sbin/ldconfig -p; } | grep -q 'libdw\.so\.1 '; then
  echo "lockdep: libdw.so.1 is not installed; source lines not checked"
  echo 's/, lockdep-[a-z]+\.cc?:@[a-z-]+@//g' > "$tmp/no-lines.sed"
fi

normalise ()
{
  sed -E -e 's/0x[0-9a-f]{6,}/ADDR/g' -e 's/thread [0-9]+( "[^"]*")?/thread TID/g' \
      -e 's/\+0x[0-9a-f]+/+OFF/g' \
      -e 's/\(lockdep-(cases|cxx)(-linked)?([,)])/(PROG\3/g' |
    awk '/^        at /{ if (frames++ == 0) print; next } { frames = 0; print }'
}

# run NAME CASE ENV...: the report of CASE, normalised, in $tmp/NAME.
run ()
{
  local name=$1 case=$2; shift 2
  for how in raw hosted linked; do
    local prog=$plain pre=$XP_LIB mode=$how
    if [ $how = linked ]; then prog=$linked pre= mode=auto; fi
    env LD_PRELOAD="$pre" XPTHREAD_MODE=$mode XPTHREAD_LOCKDEP=1 "$@" \
      "$prog" "$case" > "$tmp/$name.$how.out" 2> "$tmp/$name.$how.err"
    echo $? > "$tmp/$name.$how.status"
    normalise < "$tmp/$name.$how.err" > "$tmp/$name.$how.report"
  done
}

# without_summary NAME: its summary line dropped.
without_summary ()
{
  for how in raw hosted linked; do
    sed -i -E '/^xpthread lockdep: [0-9]+ lock class/d' "$tmp/$1.$how.report"
  done
}

# expect NAME: the report of every way of running equals standard input.
expect ()
{
  sed -E -f "$tmp/no-lines.sed" -f "$tmp/lines.sed" > "$tmp/$1.want"
  for how in raw hosted linked; do
    if ! diff -u "$tmp/$1.want" "$tmp/$1.$how.report" > "$tmp/$1.diff"; then
      echo "FAIL: $1 ($how): the report differs:"; cat "$tmp/$1.diff"; fail=1
    elif [ "$(cat "$tmp/$1.$how.status")" != 0 ]; then
      echo "FAIL: $1 ($how): exit status $(cat "$tmp/$1.$how.status")"; fail=1
    fi
  done
}

no_report ()
{
  run "$1" "$1"
  expect "$1" <<< "xpthread lockdep: $2"
}

run ab-ba ab-ba
expect ab-ba <<'END'
xpthread lockdep: possible deadlock: a cycle of 2 lock orders
thread TID is taking ADDR, lock_a (PROG)
  it holds 1 lock:
    #0 ADDR, lock_b (PROG), taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)
  the orders, each seen in a run of the program:
    1. lock_a (PROG)
       before lock_b (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)
    2. lock_b (PROG)
       before lock_a (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)

xpthread lockdep: 3 lock classes, 4 lock orders, 1 report
END

# Orders always taken inside one gate lock: no report, the summary names
# the gate; one of them taken outside it later: reported then.
no_report gated-inversion "4 lock classes, 7 lock orders, 0 reports; 1 cycle inside a gate, not reported: lock_g (PROG)"

run gate-dropped gate-dropped
expect gate-dropped <<'END'
xpthread lockdep: possible deadlock: a cycle of 2 lock orders
thread TID is taking ADDR, lock_b (PROG)
  it holds 1 lock:
    #0 ADDR, lock_a (PROG), taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)
  the orders, each seen in a run of the program:
    1. lock_b (PROG)
       before lock_a (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)
    2. lock_a (PROG)
       before lock_b (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)

xpthread lockdep: 5 lock classes, 9 lock orders, 1 report
END

# Both orders in one thread, which cannot deadlock with itself: still
# reported, and said so.
run one-thread one-thread
expect one-thread <<'END'
xpthread lockdep: possible deadlock: a cycle of 2 lock orders
thread TID is taking ADDR, lock_a (PROG)
  it holds 1 lock:
    #0 ADDR, lock_b (PROG), taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)
  the orders, each seen in a run of the program:
    1. lock_a (PROG)
       before lock_b (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)
    2. lock_b (PROG)
       before lock_a (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)
  all these orders were seen in one thread, thread TID; another run can take them in two threads at once

xpthread lockdep: 2 lock classes, 2 lock orders, 1 report
END

run three-cycle three-cycle
expect three-cycle <<'END'
xpthread lockdep: possible deadlock: a cycle of 3 lock orders
thread TID is taking ADDR, lock_a (PROG)
  it holds 1 lock:
    #0 ADDR, lock_c (PROG), taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)
  the orders, each seen in a run of the program:
    1. lock_a (PROG)
       before lock_b (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)
    2. lock_b (PROG)
       before lock_c (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)
    3. lock_c (PROG)
       before lock_a (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)

xpthread lockdep: 4 lock classes, 6 lock orders, 1 report
END

run philosophers philosophers
expect philosophers <<'END'
xpthread lockdep: possible deadlock: a cycle of 5 lock orders
thread TID is taking ADDR, forks (PROG)
  it holds 1 lock:
    #0 ADDR, forks+OFF (PROG), taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)
  the orders, each seen in a run of the program:
    1. forks (PROG)
       before forks+OFF (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)
    2. forks+OFF (PROG)
       before forks+OFF (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)
    3. forks+OFF (PROG)
       before forks+OFF (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)
    4. forks+OFF (PROG)
       before forks+OFF (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)
    5. forks+OFF (PROG)
       before forks (PROG)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)

xpthread lockdep: 6 lock classes, 10 lock orders, 1 report
END

run self-deadlock self-deadlock
expect self-deadlock <<'END'
xpthread lockdep: deadlock: a thread takes a lock it holds
thread TID is taking ADDR, lock_a (PROG), at self_deadlock+OFF (PROG, lockdep-cases.c:@self-again@), and will wait for itself forever
  it holds 1 lock:
    #0 ADDR, lock_a (PROG), taken at self_deadlock+OFF (PROG, lockdep-cases.c:@self-first@)

xpthread lockdep: 1 lock class, 0 lock orders, 1 report
END

# Every kind of lock, each named by its variable (a class per lock).
run every-kind every-kind XPTHREAD_LOCKDEP_CLASSES=instance
expect every-kind <<'END'
xpthread lockdep: possible deadlock: a cycle of 5 lock orders
thread TID is taking ADDR, pi_mutex (PROG)
  it holds 1 lock:
    #0 ADDR, shared_mutex (PROG), taken at every_kind+OFF (PROG, lockdep-cases.c:@kinds-first@)
  the orders, each seen in a run of the program:
    1. pi_mutex (PROG)
       before robust_mutex (PROG)
       in thread TID, which held the first (taken at every_kind+OFF (PROG, lockdep-cases.c:@kinds-first@)) and took the second
        at every_kind+OFF (PROG, lockdep-cases.c:@kinds-second@)
    2. robust_mutex (PROG)
       before spin (PROG)
       in thread TID, which held the first (taken at every_kind+OFF (PROG, lockdep-cases.c:@kinds-first@)) and took the second
        at every_kind+OFF (PROG, lockdep-cases.c:@kinds-second@)
    3. spin (PROG)
       before c11_mutex (PROG)
       in thread TID, which held the first (taken at every_kind+OFF (PROG, lockdep-cases.c:@kinds-first@)) and took the second
        at every_kind+OFF (PROG, lockdep-cases.c:@kinds-second@)
    4. c11_mutex (PROG)
       before shared_mutex (PROG)
       in thread TID, which held the first (taken at every_kind+OFF (PROG, lockdep-cases.c:@kinds-first@)) and took the second
        at every_kind+OFF (PROG, lockdep-cases.c:@kinds-second@)
    5. shared_mutex (PROG)
       before pi_mutex (PROG)
       in thread TID, which held the first (taken at every_kind+OFF (PROG, lockdep-cases.c:@kinds-first@)) and took the second
        at every_kind+OFF (PROG, lockdep-cases.c:@kinds-second@)
  all these orders were seen in one thread, thread TID; another run can take them in two threads at once

xpthread lockdep: 5 lock classes, 5 lock orders, 1 report
END

run double-unlock double-unlock
expect double-unlock <<'END'
xpthread lockdep: bad unlock: a thread releases a lock it does not hold
thread TID releases ADDR, lock_a (PROG)
        at double_unlock+OFF (PROG, lockdep-cases.c:@unlock-again@)
  it holds 0 locks

xpthread lockdep: 2 lock classes, 0 lock orders, 1 report
END

run destroy-held destroy-held
expect destroy-held <<'END'
xpthread lockdep: a thread destroys a lock it holds
thread TID destroys ADDR, the locks initialised at destroy_held+OFF (PROG, lockdep-cases.c:@destroy-init@)
        at destroy_held+OFF (PROG, lockdep-cases.c:@destroy-held@)
  it holds 1 lock:
    #0 ADDR, the locks initialised at destroy_held+OFF (PROG, lockdep-cases.c:@destroy-init@), taken at destroy_held+OFF (PROG, lockdep-cases.c:@destroy-lock@)

xpthread lockdep: 1 lock class, 0 lock orders, 1 report
END

run exit-holding exit-holding
expect exit-holding <<'END'
xpthread lockdep: a thread ends holding locks, which nobody can release
thread TID ends
  it holds 1 lock:
    #0 ADDR, lock_b (PROG), taken at leave_locked+OFF (PROG, lockdep-cases.c:@exit-lock-b@)

xpthread lockdep: 2 lock classes, 1 lock order, 1 report
END

run writer-against-reader writer-against-reader
expect writer-against-reader <<'END'
xpthread lockdep: possible deadlock: a cycle of 2 lock orders
thread TID is taking ADDR, table (PROG)
  it holds 1 lock:
    #0 ADDR, lock_a (PROG), taken at writer_against_reader+OFF (PROG, lockdep-cases.c:@writer-lock-a@)
  the orders, each seen in a run of the program:
    1. table (PROG)
       before lock_a (PROG)
       in thread TID, which held the first for reading (taken at read_then_lock+OFF (PROG, lockdep-cases.c:@reader-table@)) and took the second
        at read_then_lock+OFF (PROG, lockdep-cases.c:@reader-lock-a@)
    2. lock_a (PROG)
       before table (PROG)
       in thread TID, which held the first (taken at writer_against_reader+OFF (PROG, lockdep-cases.c:@writer-lock-a@)) and took the second
        at writer_against_reader+OFF (PROG, lockdep-cases.c:@writer-table@)

xpthread lockdep: 3 lock classes, 4 lock orders, 1 report
END

# A reader of the default rwlock shares it with readers but waits for a
# writer that holds it.
run reader-against-writer reader-against-writer
expect reader-against-writer <<'END'
xpthread lockdep: possible deadlock: a cycle of 2 lock orders
thread TID is taking ADDR, table (PROG)
  it holds 1 lock:
    #0 ADDR, lock_a (PROG), taken at lock_then_read+OFF (PROG, lockdep-cases.c:@lock-a-then-read@)
  the orders, each seen in a run of the program:
    1. table (PROG)
       before lock_a (PROG)
       in thread TID, which held the first (taken at write_then_lock+OFF (PROG, lockdep-cases.c:@writer-first@)) and took the second
        at write_then_lock+OFF (PROG, lockdep-cases.c:@writer-then-lock-a@)
    2. lock_a (PROG)
       before table (PROG)
       in thread TID, which held the first (taken at lock_then_read+OFF (PROG, lockdep-cases.c:@lock-a-then-read@)) and took the second for reading
        at lock_then_read+OFF (PROG, lockdep-cases.c:@read-after-lock-a@)

xpthread lockdep: 3 lock classes, 4 lock orders, 1 report
END

# The read-read orders that readers-share (below) takes on the default
# rwlock, on a writer-preferring one: a writer that waits for the first
# reader holds back the second.
run writer-preferring-readers writer-preferring-readers
expect writer-preferring-readers <<'END'
xpthread lockdep: possible deadlock: a cycle of 2 lock orders
thread TID is taking ADDR, wp_table (PROG)
  it holds 1 lock:
    #0 ADDR, lock_a (PROG), taken at lock_then_read+OFF (PROG, lockdep-cases.c:@lock-a-then-read@)
  the orders, each seen in a run of the program:
    1. wp_table (PROG)
       before lock_a (PROG)
       in thread TID, which held the first for reading (taken at read_then_lock+OFF (PROG, lockdep-cases.c:@reader-table@)) and took the second
        at read_then_lock+OFF (PROG, lockdep-cases.c:@reader-lock-a@)
    2. lock_a (PROG)
       before wp_table (PROG)
       in thread TID, which held the first (taken at lock_then_read+OFF (PROG, lockdep-cases.c:@lock-a-then-read@)) and took the second for reading
        at lock_then_read+OFF (PROG, lockdep-cases.c:@read-after-lock-a@)

xpthread lockdep: 3 lock classes, 4 lock orders, 1 report
END

run objects-of-a-kind objects-of-a-kind
expect objects-of-a-kind <<'END'
xpthread lockdep: possible deadlock: a cycle of 2 lock orders
thread TID is taking ADDR, the locks initialised at new_account+OFF (PROG, lockdep-cases.c:@account-init@)
  it holds 1 lock:
    #0 ADDR, the locks initialised at new_ledger+OFF (PROG, lockdep-cases.c:@ledger-init@), taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)
  the orders, each seen in a run of the program:
    1. the locks initialised at new_account+OFF (PROG, lockdep-cases.c:@account-init@)
       before the locks initialised at new_ledger+OFF (PROG, lockdep-cases.c:@ledger-init@)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)
    2. the locks initialised at new_ledger+OFF (PROG, lockdep-cases.c:@ledger-init@)
       before the locks initialised at new_account+OFF (PROG, lockdep-cases.c:@account-init@)
       in thread TID, which held the first (taken at take_in_order+OFF (PROG, lockdep-cases.c:@take-first@)) and took the second
        at take_in_order+OFF (PROG, lockdep-cases.c:@take-second@)

xpthread lockdep: 3 lock classes, 4 lock orders, 1 report
END

run writer-preferring-read-twice writer-preferring-read-twice
expect writer-preferring-read-twice <<'END'
xpthread lockdep: deadlock: a thread takes a lock it holds
thread TID is taking ADDR, the locks initialised at writer_preferring_read_twice+OFF (PROG, lockdep-cases.c:@wp-init@), at writer_preferring_read_twice+OFF (PROG, lockdep-cases.c:@wp-again@), and will wait for itself once a writer waits
  it holds 1 lock:
    #0 ADDR, the locks initialised at writer_preferring_read_twice+OFF (PROG, lockdep-cases.c:@wp-init@), taken for reading at writer_preferring_read_twice+OFF (PROG, lockdep-cases.c:@wp-first@)

xpthread lockdep: 1 lock class, 0 lock orders, 1 report
END

run join-while-holding join-while-holding
expect join-while-holding <<'END'
xpthread lockdep: possible deadlock: a cycle of 2 lock orders
thread TID is taking ADDR, the end of the threads running worker (PROG)
  it holds 1 lock:
    #0 ADDR, lock_a (PROG), taken at join_while_holding+OFF (PROG, lockdep-cases.c:@joiner-lock-a@)
  the orders, each seen in a run of the program:
    1. the end of the threads running worker (PROG)
       before lock_a (PROG)
       in thread TID, one of those threads, which took the second
        at worker+OFF (PROG, lockdep-cases.c:@worker-lock-a@)
    2. lock_a (PROG)
       before the end of the threads running worker (PROG)
       in thread TID, which held the first (taken at join_while_holding+OFF (PROG, lockdep-cases.c:@joiner-lock-a@)) and joined one of them
        at join_while_holding+OFF (PROG, lockdep-cases.c:@joiner-join@)

xpthread lockdep: 2 lock classes, 2 lock orders, 1 report
END

run cond-wait-keeps-lock cond-wait-keeps-lock
expect cond-wait-keeps-lock <<'END'
xpthread lockdep: warning: a condition wait keeps another lock
thread TID waits on condition variable ADDR at cond_wait_keeps_lock+OFF (PROG, lockdep-cases.c:@waiter-wait@), releasing mutex ADDR, but keeps:
    #0 ADDR, lock_b (PROG), taken at cond_wait_keeps_lock+OFF (PROG, lockdep-cases.c:@waiter-lock-b@)
  a thread that needs it before it signals will never signal

xpthread lockdep: 2 lock classes, 1 lock order, 1 report
END

# Per-object classes see the same objects only, which never deadlock.
run objects-as-instances objects-of-a-kind XPTHREAD_LOCKDEP_CLASSES=instance
expect objects-as-instances <<< "xpthread lockdep: 5 lock classes, 6 lock orders, 0 reports"

no_report errorcheck-recursive "2 lock classes, 0 lock orders, 0 reports"
no_report trylock-inversion "2 lock classes, 1 lock order, 0 reports"
no_report readers-share "3 lock classes, 4 lock orders, 0 reports"
no_report readers-share-reversed "3 lock classes, 4 lock orders, 0 reports"
no_report reused-memory "3 lock classes, 2 lock orders, 0 reports"
if grep -q 'not reused' "$tmp/reused-memory.raw.out"; then
  echo "FAIL: reused-memory: malloc gave other memory; the case proves nothing"
  fail=1
fi
no_report reinit-opposite-order "4 lock classes, 2 lock orders, 0 reports"
# An object loaded, used and unloaded once or 1000 times: each time its
# two classes are made, and retired with it; none stay in use.
no_report dlclose-once "0 lock classes, 0 lock orders, 0 reports; 2 classes retired with their unloaded objects"
no_report dlclose-1000 "0 lock classes, 0 lock orders, 0 reports; 2000 classes retired with their unloaded objects"

# C++: names demangled; std::mutex members of one kind of object that
# were first taken at one site share a class; std::shared_mutex.  The
# summary is left out: libdw 0.188, loaded for the report, loads
# libdebuginfod and its TLS libraries, whose locks at thread exit count.
programs lockdep-cxx
run account-members account-members
without_summary account-members
expect account-members <<'END'
xpthread lockdep: possible deadlock: a cycle of 2 lock orders
thread TID is taking ADDR, g_mu (PROG)
  it holds 1 lock:
    #0 ADDR, the locks first taken at open_account(account&)+OFF (PROG, lockdep-cxx.cc:@cxx-open@), taken at pay(account&)+OFF (PROG, lockdep-cxx.cc:@cxx-pay-mu@)
  the orders, each seen in a run of the program:
    1. g_mu (PROG)
       before the locks first taken at open_account(account&)+OFF (PROG, lockdep-cxx.cc:@cxx-open@)
       in thread TID, which held the first (taken at audit(account&)+OFF (PROG, lockdep-cxx.cc:@cxx-audit-g@)) and took the second
        at audit(account&)+OFF (PROG, lockdep-cxx.cc:@cxx-audit-mu@)
    2. the locks first taken at open_account(account&)+OFF (PROG, lockdep-cxx.cc:@cxx-open@)
       before g_mu (PROG)
       in thread TID, which held the first (taken at pay(account&)+OFF (PROG, lockdep-cxx.cc:@cxx-pay-mu@)) and took the second
        at pay(account&)+OFF (PROG, lockdep-cxx.cc:@cxx-pay-g@)

END

run static-member static-member
without_summary static-member
expect static-member <<'END'
xpthread lockdep: possible deadlock: a cycle of 2 lock orders
thread TID is taking ADDR, table (PROG)
  it holds 1 lock:
    #0 ADDR, account::registry (PROG), taken at enrol()+OFF (PROG, lockdep-cxx.cc:@cxx-en-reg@)
  the orders, each seen in a run of the program:
    1. table (PROG)
       before account::registry (PROG)
       in thread TID, which held the first (taken at reindex()+OFF (PROG, lockdep-cxx.cc:@cxx-re-table@)) and took the second
        at reindex()+OFF (PROG, lockdep-cxx.cc:@cxx-re-reg@)
    2. account::registry (PROG)
       before table (PROG)
       in thread TID, which held the first (taken at enrol()+OFF (PROG, lockdep-cxx.cc:@cxx-en-reg@)) and took the second
        at enrol()+OFF (PROG, lockdep-cxx.cc:@cxx-en-table@)

END

# The same with a std::shared_lock: a reader waits for the writer.
run shared-reader shared-reader
without_summary shared-reader
expect shared-reader <<'END'
xpthread lockdep: possible deadlock: a cycle of 2 lock orders
thread TID is taking ADDR, table (PROG)
  it holds 1 lock:
    #0 ADDR, account::registry (PROG), taken at look_up()+OFF (PROG, lockdep-cxx.cc:@cxx-lu-reg@)
  the orders, each seen in a run of the program:
    1. table (PROG)
       before account::registry (PROG)
       in thread TID, which held the first (taken at reindex()+OFF (PROG, lockdep-cxx.cc:@cxx-re-table@)) and took the second
        at reindex()+OFF (PROG, lockdep-cxx.cc:@cxx-re-reg@)
    2. account::registry (PROG)
       before table (PROG)
       in thread TID, which held the first (taken at look_up()+OFF (PROG, lockdep-cxx.cc:@cxx-lu-reg@)) and took the second for reading
        at look_up()+OFF (PROG, lockdep-cxx.cc:@cxx-lu-table@)

END
programs lockdep-cases

# XPTHREAD_LOCKDEP_FILE takes the reports; =abort stops the program after
# the first one; unset, lockdep says nothing.
env LD_PRELOAD="$XP_LIB" XPTHREAD_LOCKDEP=1 XPTHREAD_LOCKDEP_FILE="$tmp/file" \
  "$plain" ab-ba > /dev/null 2> "$tmp/file.err"
if ! grep -q '^xpthread lockdep: possible deadlock' "$tmp/file" || [ -s "$tmp/file.err" ]; then
  echo "FAIL: XPTHREAD_LOCKDEP_FILE: the report did not go to the file alone"; fail=1
fi
# In the file, each report is followed by its JSON line; each order has
# its kind in the kernel's notation (EN for -(EN)->), which agrees with
# first_for_reading.
for case in join-while-holding reader-against-writer; do
  env LD_PRELOAD="$XP_LIB" XPTHREAD_LOCKDEP=1 XPTHREAD_LOCKDEP_FILE="$tmp/file" \
    "$plain" $case > /dev/null 2>&1
done
json=$(python3 - "$tmp/file" <<'PYTHON'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
def order(e):
    if e["first_for_reading"] != (e["dependency"][0] == "S"):
        return "first_for_reading against the dependency"
    read = " for reading" if e["second_for_reading"] else ""
    return e["first"] + " -(" + e["dependency"] + ")-> " + e["second"] + read
for o in lines:
    if o["report"] == "cycle":
        print("cycle", " | ".join(order(e) for e in o["orders"]),
              "| held", " ".join(h["class"] for h in o["held"]))
    elif o["report"] == "summary":
        print("summary", o["classes"], o["orders"], o["reports"])
PYTHON
)
want="cycle lock_a (lockdep-cases) -(EN)-> lock_b (lockdep-cases) | lock_b (lockdep-cases) -(EN)-> lock_a (lockdep-cases) | held lock_b (lockdep-cases)
summary 3 4 1
cycle the end of the threads running worker (lockdep-cases) -(EN)-> lock_a (lockdep-cases) | lock_a (lockdep-cases) -(EN)-> the end of the threads running worker (lockdep-cases) | held lock_a (lockdep-cases)
summary 2 2 1
cycle table (lockdep-cases) -(EN)-> lock_a (lockdep-cases) | lock_a (lockdep-cases) -(ER)-> table (lockdep-cases) for reading | held lock_a (lockdep-cases)
summary 3 4 1"
if [ "$json" != "$want" ]; then
  echo "FAIL: the JSON lines of the file:"; echo "$json"; fail=1
fi
# A report written by a thread with a cancel pending is whole, and the
# program ends as without lockdep.
for how in raw hosted linked; do
  prog=$plain pre=$XP_LIB mode=$how
  if [ $how = linked ]; then prog=$linked pre= mode=auto; fi
  env LD_PRELOAD="$pre" XPTHREAD_MODE=$mode XPTHREAD_LOCKDEP=1 \
    timeout 20 "$prog" cancel-pending > /dev/null 2> "$tmp/cancel.err"
  status=$?
  if [ $status != 0 ] ||
     ! grep -q '^    2\. lock_b (lockdep-cases' "$tmp/cancel.err" ||
     ! grep -q '^xpthread lockdep: .*, 1 report$' \
       "$tmp/cancel.err"; then
    echo "FAIL: cancel-pending ($how): status $status"; cat "$tmp/cancel.err"; fail=1
  fi
done
# Eight reports written while a signal handler that locks keeps landing
# in the reporting thread, while another thread forks children that
# lock, and while another loads objects whose constructors lock (inside
# dlopen, which holds the dynamic linker's lock that naming waits for):
# all eight whole, every lock working, in the children too.  The
# reports go to a pipe of one page that is read only after a second, so
# that the reporting thread is blocked inside a report meanwhile.
slow_reader ()
{
  rm -f "$tmp/reader-ready"
  python3 - "$1" "$2" "$tmp/reader-ready" <<'PYTHON' &
import fcntl, os, sys, time
# Open without waiting for the writer, and make the pipe one page before
# the writer can put anything in it.
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
fcntl.fcntl(fd, 1031, 4096)  # F_SETPIPE_SZ
os.set_blocking(fd, True)
open(sys.argv[3], "w").close()
time.sleep(1)
with open(sys.argv[2], "wb") as out:
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        out.write(chunk)
PYTHON
  reader=$!
  while [ ! -e "$tmp/reader-ready" ]; do sleep 0.05; done
}
mkfifo "$tmp/reports"
for storm in signal fork dlopen; do
  for how in raw hosted linked; do
    prog=$plain pre=$XP_LIB mode=$how
    if [ $how = linked ]; then prog=$linked pre= mode=auto; fi
    slow_reader "$tmp/reports" "$tmp/storm.err"
    env LD_PRELOAD="$pre" XPTHREAD_MODE=$mode XPTHREAD_LOCKDEP=1 \
      XPTHREAD_LOCKDEP_FILE="$tmp/reports" \
      timeout 30 "$prog" $storm-during-report > "$tmp/storm.out" 2>&1
    status=$?
    wait $reader
    if [ $status != 0 ] ||
       [ "$(grep -c '^    2\. paired' "$tmp/storm.err")" != 8 ] ||
       ! grep -q '^xpthread lockdep: .*, 8 reports\($\|;\)' "$tmp/storm.err" ||
       ! grep -q \
         '^[1-9][0-9]* \(signals handled\|children locked\|objects loaded\)$' \
         "$tmp/storm.out"; then
      echo "FAIL: $storm-during-report ($how): status $status"
      cat "$tmp/storm.out" "$tmp/storm.err"; fail=1
    else
      echo "$storm-during-report ($how): $(head -1 "$tmp/storm.out")"
    fi
  done
done
# A program that closed standard error and opened a data file on its
# number keeps its data: the reports go nowhere.
for how in raw hosted linked; do
  prog=$plain pre=$XP_LIB mode=$how
  if [ $how = linked ]; then prog=$linked pre= mode=auto; fi
  env LD_PRELOAD="$pre" XPTHREAD_MODE=$mode XPTHREAD_LOCKDEP=1 \
    LOCKDEP_DATA="$tmp/data" "$prog" stderr-reused > /dev/null 2>&1
  if [ "$(cat "$tmp/data")" != data ]; then
    echo "FAIL: stderr-reused ($how): the data file holds:"; cat "$tmp/data"; fail=1
  fi
done
env LD_PRELOAD="$XP_LIB" XPTHREAD_LOCKDEP=abort "$plain" self-deadlock \
  > "$tmp/abort.out" 2> "$tmp/abort.err"
status=$?
if [ $status != 134 ] || ! grep -q '^xpthread lockdep: aborting' "$tmp/abort.err" ||
   grep -q 'timedlock' "$tmp/abort.out"; then
  echo "FAIL: XPTHREAD_LOCKDEP=abort: status $status"; cat "$tmp/abort.err"; fail=1
fi
# Without libdw (here a library of its name that lacks its functions:
# libc), sites are named without their lines.
libc=$(ldd "$plain" | awk '$1 == "libc.so.6" { print $3 }')
mkdir "$tmp/no-libdw" && ln -s "$libc" "$tmp/no-libdw/libdw.so.1"
env LD_PRELOAD="$XP_LIB" LD_LIBRARY_PATH="$tmp/no-libdw" XPTHREAD_LOCKDEP=1 \
  "$plain" ab-ba > /dev/null 2> "$tmp/no-libdw.err"
if ! grep -q 'taken at take_in_order+0x[0-9a-f]* (lockdep-cases))' "$tmp/no-libdw.err" ||
   grep -q 'lockdep-cases\.c:' "$tmp/no-libdw.err"; then
  echo "FAIL: without libdw:"; cat "$tmp/no-libdw.err"; fail=1
fi
env LD_PRELOAD="$XP_LIB" "$plain" ab-ba > /dev/null 2> "$tmp/off.err"
if [ -s "$tmp/off.err" ]; then
  echo "FAIL: without XPTHREAD_LOCKDEP the program printed:"; cat "$tmp/off.err"; fail=1
fi
[ $fail = 0 ] && echo "lockdep: every report as expected, raw, hosted and linked"
exit $fail
