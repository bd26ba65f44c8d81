/* A file server in miniature.  Worker threads take requests ("create
   this file for that user") from a queue and serve each one under the
   user's identity: xpthread_identity_switch_np before the work,
   xpthread_identity_restore_np after it.  The kernel then checks the
   user's permissions and makes the user the owner of the file, while the
   rest of the process, other workers included, keeps its own identity.

   usage: fileserver [-f] [-w WORKERS] DIR [REQUESTS]

   Run as root.  Creates DIR/file-N for N < REQUESTS (default 16), owned
   in turn by the users 1001 to 1004, each with its own group and the
   group 100, and prints "PATH UID GID" for every file it created.  DIR
   must be writable by those users.  -f switches the effective ids
   instead of only the file-system ids.  Build: cc fileserver.c
   $(pkg-config --cflags --libs xpthread).  */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xpthread.h>

enum { USERS = 4, MAX_WORKERS = 64 };

struct request
{
  int number;                   /* -1: the worker stops */
  struct xpthread_identity_np user;
};

/* The queue: a ring the main thread fills and the workers drain.  */
static struct request queue[16];
static unsigned head, tail;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;

static const char *dir;
static int switch_flags = XPTHREAD_IDENTITY_FS_ONLY;
static int failures;

static void
submit (struct request r)
{
  pthread_mutex_lock (&lock);
  while (tail - head == sizeof queue / sizeof queue[0])
    pthread_cond_wait (&not_full, &lock);
  queue[tail++ % (sizeof queue / sizeof queue[0])] = r;
  pthread_cond_signal (&not_empty);
  pthread_mutex_unlock (&lock);
}

static struct request
take (void)
{
  pthread_mutex_lock (&lock);
  while (head == tail)
    pthread_cond_wait (&not_empty, &lock);
  struct request r = queue[head++ % (sizeof queue / sizeof queue[0])];
  pthread_cond_signal (&not_full);
  pthread_mutex_unlock (&lock);
  return r;
}

static void
fail (const char *what, int err)
{
  pthread_mutex_lock (&lock);
  fprintf (stderr, "fileserver: %s: %s\n", what, strerror (err));
  failures++;
  pthread_mutex_unlock (&lock);
}

/* The work itself, under the user's identity.  */
static void
create_file (const struct request *r)
{
  char path[PATH_MAX];
  snprintf (path, sizeof path, "%s/file-%d", dir, r->number);
  int fd = open (path, O_CREAT | O_EXCL | O_WRONLY, 0640);
  if (fd < 0)
    {
      fail (path, errno);
      return;
    }
  dprintf (fd, "request %d\n", r->number);
  close (fd);
  pthread_mutex_lock (&lock);
  printf ("%s %u %u\n", path, (unsigned) r->user.uid,
          (unsigned) r->user.gid);
  pthread_mutex_unlock (&lock);
}

static void *
worker (void *arg)
{
  for (;;)
    {
      struct request r = take ();
      if (r.number < 0)
        return arg;
      struct xpthread_identity_saved_np saved;
      int err = xpthread_identity_switch_np (&r.user, switch_flags, &saved);
      if (err != 0)
        {
          fail ("switching identity", err);
          continue;
        }
      create_file (&r);
      /* Aborts rather than fail: the worker must not go on as the
         user.  */
      xpthread_identity_restore_np (&saved);
    }
}

static long
number (const char *arg, long max)
{
  char *end;
  long n = strtol (arg, &end, 10);
  if (*arg == '\0' || *end != '\0' || n < 1 || n > max)
    {
      fprintf (stderr, "fileserver: bad number '%s'\n", arg);
      exit (2);
    }
  return n;
}

int
main (int argc, char **argv)
{
  long workers = 4, requests = 16;
  int opt;
  while ((opt = getopt (argc, argv, "fw:")) != -1)
    switch (opt)
      {
      case 'f': switch_flags = 0; break;
      case 'w': workers = number (optarg, MAX_WORKERS); break;
      default: goto usage;
      }
  if (optind == argc || argc - optind > 2)
    goto usage;
  dir = argv[optind];
  if (argc - optind == 2)
    requests = number (argv[optind + 1], 1000000);

  static gid_t groups[USERS][2];
  for (int u = 0; u < USERS; u++)
    {
      groups[u][0] = 100;
      groups[u][1] = 1001 + u;
    }
  pthread_t threads[MAX_WORKERS];
  for (long i = 0; i < workers; i++)
    {
      int err = pthread_create (&threads[i], NULL, worker, NULL);
      if (err != 0)
        {
          fail ("pthread_create", err);
          return 1;
        }
    }
  for (int n = 0; n < requests; n++)
    {
      int u = n % USERS;
      submit ((struct request) { n, { 1001 + u, 1001 + u, 2, groups[u] } });
    }
  for (long i = 0; i < workers; i++)
    submit ((struct request) { .number = -1 });
  for (long i = 0; i < workers; i++)
    pthread_join (threads[i], NULL);
  return failures == 0 ? 0 : 1;

usage:
  fprintf (stderr, "usage: fileserver [-f] [-w WORKERS] DIR [REQUESTS]\n");
  return 2;
}
