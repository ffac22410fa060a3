/*
 * outfile.h - every file the CLI writes goes through cli/outfile.c: never onto one of the
 * command's inputs, never through a symbolic link out of export's folder, never half written.
 */
#ifndef TP_OUTFILE_H
#define TP_OUTFILE_H

#include "cli.h"

#include <stdbool.h>
#include <stddef.h>

/* Remembers the input paths of this invocation (positional files, MODEL, --calibration,
   --base, --config): no output may be one of them.  cli_begin calls it. */
void out_inputs(const struct cli_args *a);

/* Writes `len` bytes to `path` as a whole: refused (one error line "<what>: <why>", EXIT_USAGE)
   when the path names a folder or the same file (device and inode) as an input; otherwise
   written to a temporary file in the same folder and renamed into place, so that a failed
   write leaves the old file as it was.  A device or FIFO (/dev/null, /dev/stdout) is written
   in place.  EXIT_OK when written. */
int out_write(const char *what, const char *path, const void *data, size_t len);

/* out_write's refusals alone, before a long computation whose result goes to `path`. */
int out_check(const char *what, const char *path);

/* A folder that receives several files (export -o DIR), opened once: every file is created
   relative to it (openat), so no name is ever resolved through a link out of it. */
struct out_dir {
    int fd;
    const char *path;
    bool force; /* replace files that exist */
};

/* Creates `path` with its parents when missing, and opens it. */
int out_dir_open(struct out_dir *d, const char *path, bool force);
/* Whether `name` (a plain file name) may be written into d: refused when the name is not
   plain, the joined path would not fit in `shown_len` (it would be printed cut short), a file
   exists there without force, or it is a link, a folder or an input.  Call it for every file
   before writing any.  `shown` receives "DIR/NAME". */
int out_dir_check(const struct out_dir *d, const char *name, char *shown, size_t shown_len);
/* Writes one file into d (temporary name + renameat); `exec` makes it executable. */
int out_dir_write(const struct out_dir *d, const char *name, const void *data, size_t len,
                  bool exec);
void out_dir_close(struct out_dir *d);

#endif
