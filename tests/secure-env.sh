#!/bin/sh
# A set-group-ID program linked with -lxpthread ignores the XPTHREAD_
# variables (secure_getenv): whoever runs it cannot choose its mode or
# its spinning.  The same program without the privilege honours them.
set -u
[ "$(id -u)" = 0 ] || { echo "SKIP: making a set-group-ID copy needs root"; exit 77; }
probe=$XP_BUILDDIR/tests/env-probe
[ -x "$probe" ] || { echo "FAIL: $probe is missing"; exit 1; }
dir=$(mktemp -d "$XP_BUILDDIR/tests/secure-env.XXXXXX") || exit 99
trap 'rm -rf "$dir"' EXIT
# Root runs it with real group 0: a copy whose group is another one starts
# with AT_SECURE set, as for any user running a set-group-ID program.
group=$(getent group daemon | cut -d: -f3)
[ -n "$group" ] || { echo "SKIP: no daemon group"; exit 77; }
cp "$probe" "$dir/plain" && cp "$probe" "$dir/privileged" || exit 99
chgrp "$group" "$dir/privileged" && chmod 2755 "$dir/privileged" || exit 99

# The mode chosen when nothing asks (make check may run with XPTHREAD_MODE
# set for the whole suite).
default_mode=$(env -u XPTHREAD_MODE "$dir/plain") ||
  { echo "FAIL: the probe did not run"; exit 1; }
for prog in plain privileged; do
  env XPTHREAD_MODE=hosted XPTHREAD_SHOW_MODE=1 XPTHREAD_SPIN_MAX=x \
    "$dir/$prog" > "$dir/$prog.out" 2> "$dir/$prog.err"
done
fail=0
check () {
  if [ "$1" != "$2" ]; then echo "FAIL: $3: '$1', expected '$2'"; fail=1; fi
}
check "$(cat "$dir/plain.out")" hosted "mode of the plain program"
check "$(grep -c '^xpthread: mode hosted' "$dir/plain.err")" 1 \
  "mode lines of the plain program"
check "$(grep -c 'XPTHREAD_SPIN_MAX=x is not a whole number' "$dir/plain.err")" 1 \
  "warnings of the plain program"
check "$(cat "$dir/privileged.out")" "$default_mode" "mode of the privileged program"
check "$(cat "$dir/privileged.err")" "" "what the privileged program printed"
[ $fail = 0 ] && echo "secure-env: the set-group-ID copy ignored XPTHREAD_MODE, XPTHREAD_SHOW_MODE and XPTHREAD_SPIN_MAX (mode $default_mode)"
exit $fail
