/* Where the lock debugging tools read and write files: raw system calls,
   which no other library interposes and which are no cancellation points,
   so that writing a report never acts on a pending cancel nor runs the
   program's code.  Standard error is written only while it is still the
   file it was when the program started, so that a report never lands in
   a file the program opened on a descriptor number it had closed.  */
#ifndef XP_DEBUG_REPORT_FD_H
#define XP_DEBUG_REPORT_FD_H

#include "common.h"
#include <sys/types.h>

/* Remember what standard error is; from the library's constructor.  */
void xp_report_fd_init (void) XP_HIDDEN;

/* open(2) and the rest, without errno: a negative result is -errno.  */
int xp_report_open (const char *path, int flags, int mode) XP_HIDDEN;
ssize_t xp_report_read (int fd, void *buf, size_t n) XP_HIDDEN;
void xp_report_close (int fd) XP_HIDDEN;
/* The size of the file open on FD; -1 when unknown.  */
off_t xp_report_file_size (int fd) XP_HIDDEN;
/* Clear O_NONBLOCK.  */
void xp_report_set_blocking (int fd) XP_HIDDEN;
/* PATH exists and is no regular file (not followed if a link).  */
bool xp_report_is_special (const char *path) XP_HIDDEN;
bool xp_report_rename (const char *from, const char *to) XP_HIDDEN;
void xp_report_unlink (const char *path) XP_HIDDEN;

/* Write all of TEXT to FD (STDERR_FILENO: only while it is the standard
   error of the start); false when not all of it was written.  */
bool xp_report_write (int fd, const char *text, size_t n) XP_HIDDEN;

#endif
