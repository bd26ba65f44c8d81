/* The CPU quota of the process's cgroup (cpu-quota.h).  /proc/self/cgroup
   names the process's cgroup in each hierarchy: "0::PATH" for cgroup v2,
   "N:CONTROLLERS:PATH" for a v1 hierarchy, whose controllers include
   "cpu" for the one that holds the quota.  A quota limits the cgroup and
   everything under it, so every ancestor's counts too.  */
#define _GNU_SOURCE
#include "cpu-quota.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#define PATH_SIZE 4096

/* The text of the small file PATH into BUF (SIZE bytes, NUL-terminated);
   false when it cannot be read.  */
static bool
read_file (const char *path, char *buf, size_t size)
{
  int fd = (int) xp_syscall4 (SYS_openat, AT_FDCWD, path,
                              O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0)
    return false;
  long n = xp_syscall3 (SYS_read, fd, buf, size - 1);
  xp_syscall1 (SYS_close, fd);
  if (n < 0)
    return false;
  buf[n] = '\0';
  return true;
}

/* CPUs' worth of QUOTA over PERIOD, rounded down, at least 1; 0 when
   QUOTA is none (negative).  */
static long
cpus_of (long quota, long period)
{
  if (quota < 0 || period <= 0)
    return 0;
  return quota / period > 0 ? quota / period : 1;
}

/* The quota of the cgroup directory DIR: cgroup v2's cpu.max ("max
   PERIOD" or "QUOTA PERIOD"), else v1's pair of files.  */
static long
quota_of (const char *dir)
{
  char path[PATH_SIZE + 32], text[64];
  snprintf (path, sizeof path, "%s/cpu.max", dir);
  if (read_file (path, text, sizeof text))
    {
      long quota = -1, period = 0;
      if (strncmp (text, "max", 3) != 0)
        sscanf (text, "%ld %ld", &quota, &period);
      return cpus_of (quota, period);
    }
  snprintf (path, sizeof path, "%s/cpu.cfs_quota_us", dir);
  if (!read_file (path, text, sizeof text))
    return 0;
  long quota = strtol (text, NULL, 10);
  snprintf (path, sizeof path, "%s/cpu.cfs_period_us", dir);
  if (!read_file (path, text, sizeof text))
    return 0;
  return cpus_of (quota, strtol (text, NULL, 10));
}

/* The tightest quota of MOUNT/PATH and its ancestors up to MOUNT.  */
static long
tightest_quota (const char *mount, const char *path)
{
  char dir[PATH_SIZE];
  if ((size_t) snprintf (dir, sizeof dir, "%s%s", mount, path) >= sizeof dir)
    return 0;
  size_t root = strlen (mount);
  long tightest = 0;
  for (;;)
    {
      long cpus = quota_of (dir);
      if (cpus > 0 && (tightest == 0 || cpus < tightest))
        tightest = cpus;
      char *slash = strrchr (dir, '/');
      if (slash == NULL || (size_t) (slash - dir) < root)
        return tightest;
      *slash = '\0';
    }
}

/* Whether the v1 controller list LIST (comma-separated) holds "cpu".  */
static bool
lists_cpu (const char *list, size_t n)
{
  for (const char *p = list; p < list + n;)
    {
      const char *comma = memchr (p, ',', (size_t) (list + n - p));
      size_t len = (size_t) ((comma != NULL ? comma : list + n) - p);
      if (len == 3 && strncmp (p, "cpu", 3) == 0)
        return true;
      p += len + 1;
    }
  return false;
}

/* The quota the cgroup line LINE ("ID:CONTROLLERS:PATH") points to.  */
static long
line_quota (const char *line)
{
  const char *first = strchr (line, ':');
  const char *second = first != NULL ? strchr (first + 1, ':') : NULL;
  if (second == NULL)
    return 0;
  const char *path = second + 1;
  if (second == first + 1)
    {
      long cpus = tightest_quota ("/sys/fs/cgroup", path);
      return cpus != 0 ? cpus : tightest_quota ("/sys/fs/cgroup/unified",
                                                path);
    }
  if (!lists_cpu (first + 1, (size_t) (second - first - 1)))
    return 0;
  long cpus = tightest_quota ("/sys/fs/cgroup/cpu", path);
  return cpus != 0 ? cpus : tightest_quota ("/sys/fs/cgroup/cpu,cpuacct",
                                            path);
}

long
xp_cpu_quota_cpus (void)
{
  char text[PATH_SIZE];
  if (!read_file ("/proc/self/cgroup", text, sizeof text))
    return 0;
  long tightest = 0;
  for (char *line = text, *end; *line != '\0'; line = end + 1)
    {
      end = strchr (line, '\n');
      if (end == NULL)
        end = line + strlen (line) - 1;
      else
        *end = '\0';
      long cpus = line_quota (line);
      if (cpus > 0 && (tightest == 0 || cpus < tightest))
        tightest = cpus;
    }
  return tightest;
}
