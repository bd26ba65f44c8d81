#!/bin/bash
# The spin policy reads the cgroup's CPU quota at start-up: under a quota
# of one CPU's time, directly or through a parent cgroup, nobody spins
# (a spinner spends the time its lock's owner needs); under a quota of
# two CPUs on a machine of two or more, spinning stays on.  Needs root
# and a cgroup hierarchy with the cpu controller (v2 or v1): skipped
# without.
top=
if [ "$(id -u)" = 0 ] && [ -w /sys/fs/cgroup/cpu ] &&
   [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
  top=/sys/fs/cgroup/cpu version=1
elif [ "$(id -u)" = 0 ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers \
       2>/dev/null; then
  top=/sys/fs/cgroup version=2
  echo +cpu > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
fi
if [ -z "$top" ]; then
  echo "SKIP: no writable cgroup with the cpu controller"; exit 77
fi
group=$top/xpthread-quota-$$
trap 'rmdir "$group/child" "$group" 2>/dev/null' EXIT
mkdir "$group" "$group/child" || exit 77
[ $version = 2 ] && echo +cpu > "$group/cgroup.subtree_control"

set_quota ()  # CPUS
{
  if [ $version = 1 ]; then
    echo 100000 > "$group/cpu.cfs_period_us" &&
      echo $(($1 * 100000)) > "$group/cpu.cfs_quota_us"
  else
    echo "$(($1 * 100000)) 100000" > "$group/cpu.max"
  fi
}

# The spinners per lock that the policy chose in cgroup DIR.
spinners ()  # DIR
{
  bash -c 'echo $$ > "$1/cgroup.procs" && exec env XPTHREAD_SHOW_MODE=1 \
    LD_PRELOAD="$2" /bin/true' _ "$1" "$XP_LIB" 2>&1 |
    sed -n 's/.*spin policy: \([0-9]*\) per lock.*/\1/p'
}

fail=0
expect ()  # WHAT DIR WANT
{
  got=$(spinners "$2")
  if [ "$got" != "$3" ]; then
    echo "FAIL: $1: $got spinners per lock, not $3"; fail=1
  else
    echo "$1: $got per lock"
  fi
}
set_quota 1 || exit 77
expect "quota of 1 CPU" "$group" 0
expect "quota of 1 CPU on the parent" "$group/child" 0
if [ "$(nproc)" -ge 2 ]; then
  set_quota 2
  expect "quota of 2 CPUs" "$group" 1
fi
exit $fail
