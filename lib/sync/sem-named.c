/* Named semaphores, where glibc keeps them: the file /dev/shm/sem.NAME
   holds one sem_t (process-shared, glibc's layout), mapped shared, so
   glibc and xpthread processes open the same semaphores.

   A new semaphore is written whole into a file of a temporary name and
   then linked to its name, so that no process can map a file that is
   not yet a semaphore.  A process maps each file once: opening the same
   semaphore again returns the same address, counted, until as many
   sem_close calls have unmapped it.  Names follow glibc 2.36: leading
   slashes are skipped, and an empty name, a name with a slash inside or
   one longer than NAME_MAX is EINVAL for sem_open and ENOENT for
   sem_unlink.  */
#define _GNU_SOURCE
#include "export.h"
#include "fork-locks.h"
#include "sync-layout.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEM_DIR "/dev/shm/sem."
#define TEMP_ATTEMPTS 100

typedef char sem_path[sizeof SEM_DIR + NAME_MAX];

struct mapping
{
  dev_t dev;
  ino_t ino;
  int refs;
  sem_t *sem;
  struct mapping *next;
};

static struct mapping *mappings;
static XP_FORK_LOCK (named_sems, mappings_lock);

static bool
path_of (const char *name, sem_path path)
{
  while (*name == '/')
    name++;
  size_t len = strlen (name);
  if (len == 0 || len > NAME_MAX || memchr (name, '/', len) != NULL)
    return false;
  memcpy (path, SEM_DIR, sizeof SEM_DIR - 1);
  memcpy (path + sizeof SEM_DIR - 1, name, len + 1);
  return true;
}

static void
close_keeping_errno (int fd)
{
  int saved = errno;
  close (fd);
  errno = saved;
}

static struct mapping *
find_file (dev_t dev, ino_t ino)
{
  for (struct mapping *m = mappings; m != NULL; m = m->next)
    if (m->dev == dev && m->ino == ino)
      return m;
  return NULL;
}

static sem_t *
map_new (const struct stat *st, int fd)
{
  struct mapping *m = malloc (sizeof *m);
  if (m == NULL)
    return SEM_FAILED;
  void *addr = mmap (NULL, sizeof (sem_t), PROT_READ | PROT_WRITE,
                     MAP_SHARED, fd, 0);
  if (addr == MAP_FAILED)
    {
      free (m);
      return SEM_FAILED;
    }
  *m = (struct mapping) { .dev = st->st_dev, .ino = st->st_ino, .refs = 1,
                          .sem = addr, .next = mappings };
  mappings = m;
  return addr;
}

/* The process's mapping of the semaphore file fd, made if needed; fd is
   closed.  */
static sem_t *
map_file (int fd)
{
  struct stat st;
  sem_t *sem = SEM_FAILED;
  if (fstat (fd, &st) != 0)
    ;
  else if (st.st_size < (off_t) sizeof (sem_t))
    errno = EINVAL;
  else
    {
      xp_lock (&mappings_lock);
      struct mapping *m = find_file (st.st_dev, st.st_ino);
      if (m != NULL)
        {
          m->refs++;
          sem = m->sem;
        }
      else
        sem = map_new (&st, fd);
      xp_unlock (&mappings_lock);
    }
  close_keeping_errno (fd);
  return sem;
}

/* Open a file of a fresh temporary name next to the semaphores.  */
static int
open_temp (char *temp, size_t size, mode_t mode)
{
  static unsigned counter;
  for (int attempt = 0; attempt < TEMP_ATTEMPTS; attempt++)
    {
      snprintf (temp, size, SEM_DIR "xp-%d-%u", (int) getpid (),
                xp_fetch_add (&counter, 1));
      int fd = open (temp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
      if (fd >= 0 || errno != EEXIST)
        return fd;
    }
  errno = EAGAIN;
  return -1;
}

/* Create the semaphore path with value; EEXIST if the name is taken.  */
static sem_t *
create (const char *path, mode_t mode, unsigned value)
{
  sem_t initial = { 0 };
  struct xp_sem *s = (struct xp_sem *) &initial;
  s->data.whole = value;
  s->private_ = XP_SEM_SHARED;

  sem_path temp;
  int fd = open_temp (temp, sizeof temp, mode);
  if (fd < 0)
    return SEM_FAILED;
  bool linked = write (fd, &initial, sizeof initial) == sizeof initial
                && link (temp, path) == 0;
  int saved = errno;
  unlink (temp);
  errno = saved;
  if (linked)
    return map_file (fd);
  close_keeping_errno (fd);
  return SEM_FAILED;
}

static sem_t *
open_or_create (const char *path, int oflag, mode_t mode, unsigned value)
{
  bool exclusive = (oflag & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
  for (;;)
    {
      if (!exclusive)
        {
          int fd = open (path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
          if (fd >= 0)
            return map_file (fd);
          if (errno != ENOENT || !(oflag & O_CREAT))
            return SEM_FAILED;
        }
      if (value > SEM_VALUE_MAX)
        {
          errno = EINVAL;
          return SEM_FAILED;
        }
      sem_t *sem = create (path, mode, value);
      /* Without O_EXCL, losing the race to create means opening.  */
      if (sem != SEM_FAILED || errno != EEXIST || exclusive)
        return sem;
    }
}

sem_t *
sem_open (const char *name, int oflag, ...)
{
  sem_path path;
  if (!path_of (name, path))
    {
      errno = EINVAL;
      return SEM_FAILED;
    }
  mode_t mode = 0;
  unsigned value = 0;
  if (oflag & O_CREAT)
    {
      va_list ap;
      va_start (ap, oflag);
      mode = va_arg (ap, mode_t);
      value = va_arg (ap, unsigned);
      va_end (ap);
    }
  /* Not a cancellation point, as in glibc, although open, write and close
     are (lib/cancel/points-*.c): a cancel between them would leave a
     temporary file or a mapping behind.  */
  int state;
  pthread_setcancelstate (PTHREAD_CANCEL_DISABLE, &state);
  sem_t *sem = open_or_create (path, oflag, mode, value);
  pthread_setcancelstate (state, NULL);
  return sem;
}
XP_EXPORT (sem_open)

int
sem_close (sem_t *sem)
{
  xp_lock (&mappings_lock);
  struct mapping **link = &mappings;
  while (*link != NULL && (*link)->sem != sem)
    link = &(*link)->next;
  struct mapping *m = *link;
  bool found = m != NULL;
  if (found && --m->refs == 0)
    {
      *link = m->next;
      munmap (m->sem, sizeof (sem_t));
      free (m);
    }
  xp_unlock (&mappings_lock);
  if (found)
    return 0;
  errno = EINVAL;
  return -1;
}
XP_EXPORT (sem_close)

int
sem_unlink (const char *name)
{
  sem_path path;
  if (!path_of (name, path))
    {
      errno = ENOENT;
      return -1;
    }
  if (unlink (path) == 0)
    return 0;
  if (errno == EPERM)
    errno = EACCES;
  return -1;
}
XP_EXPORT (sem_unlink)
