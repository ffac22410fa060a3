/*
 * outfile.c - how the CLI writes files (--svg, --row-out, calibrate -o, export -o DIR).
 *
 * Three rules (issue 41): an output never replaces one of the command's inputs (the same
 * device and inode, so a hard link or a symbolic link to the input is caught too); export
 * writes only inside its folder (the folder is opened once and every file is created relative
 * to it with openat, the temporary file with O_NOFOLLOW | O_CREAT | O_EXCL, so neither a link
 * planted in the folder nor a name with "/" or ".." leads out of it); and a file is written
 * whole or not at all (a temporary file in the same folder, renamed into place: POSIX
 * rename(2) replaces the name atomically within one file system).
 */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_INPUTS = CLI_MAX_FILES + 8 };

static const char *inputs[MAX_INPUTS];
static size_t n_inputs;

static void add_input(const char *path)
{
    if (path && path[0] && n_inputs < MAX_INPUTS)
        inputs[n_inputs++] = path;
}

void out_inputs(const struct cli_args *a)
{
    n_inputs = 0;
    for (size_t i = 0; i < a->n_files; i++)
        add_input(a->files[i]);
    add_input(a->model);
    add_input(a->calibration);
    add_input(a->base);
    add_input(a->config);
}

/* The input that `st` is (same device and inode), or NULL.  A folder given as MODEL is read
   as FOLDER/config.json: that file is an input too. */
static const char *input_at(const struct stat *st)
{
    for (size_t i = 0; i < n_inputs; i++) {
        struct stat in;
        if (stat(inputs[i], &in) != 0)
            continue; /* a preset name, not a file */
        if (S_ISDIR(in.st_mode)) {
            char cfg[4096];
            int k = snprintf(cfg, sizeof cfg, "%s/config.json", inputs[i]);
            if (k < 0 || (size_t)k >= sizeof cfg || stat(cfg, &in) != 0)
                continue;
        }
        if (in.st_dev == st->st_dev && in.st_ino == st->st_ino)
            return inputs[i];
    }
    return NULL;
}

static bool write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t k = write(fd, p, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        len -= (size_t)k;
    }
    return true;
}

/* Writes `data` under a fresh temporary name in folder `dirfd`, then renames it to `name`.
   0 when done, else an errno value (the temporary file removed). */
static int replace_at(int dirfd, const char *name, const void *data, size_t len, bool exec)
{
    static unsigned serial;
    char tmp[64];
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        snprintf(tmp, sizeof tmp, ".trainplan-%ld-%u.tmp", (long)getpid(), serial++);
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            return errno;
    }
    if (fd < 0)
        return EEXIST;
    bool ok = write_all(fd, data, len) && (!exec || fchmod(fd, 0755) == 0);
    int e = ok ? 0 : errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (ok && renameat(dirfd, tmp, dirfd, name) != 0) {
        ok = false;
        e = errno;
    }
    if (!ok)
        unlinkat(dirfd, tmp, 0);
    return ok ? 0 : (e ? e : EIO);
}

/* A device or FIFO named as the output: written in place (renaming over /dev/null would
   replace the device node). */
static int write_device(const char *what, const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    bool ok = fd >= 0 && write_all(fd, data, len);
    int e = errno;
    if (fd >= 0 && close(fd) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        cli_error("%s: %s", what, strerror(e));
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* The checks out_check and out_write share; *device true when the path is a device or FIFO. */
static int check_path(const char *what, const char *path, bool *device)
{
    struct stat st;
    *device = false;
    if (stat(path, &st) != 0)
        return EXIT_OK;
    const char *in = input_at(&st);
    if (in) {
        cli_error("%s: the output is the input %s; refusing to overwrite it", what, in);
        return EXIT_USAGE;
    }
    if (S_ISDIR(st.st_mode)) {
        cli_error("%s: is a folder (give a file name)", what);
        return EXIT_USAGE;
    }
    *device = !S_ISREG(st.st_mode);
    return EXIT_OK;
}

int out_check(const char *what, const char *path)
{
    bool device;
    return check_path(what, path, &device);
}

int out_write(const char *what, const char *path, const void *data, size_t len)
{
    bool device;
    if (check_path(what, path, &device) != EXIT_OK)
        return EXIT_USAGE;
    if (device)
        return write_device(what, path, data, len);
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (!name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        cli_error("%s: is a folder (give a file name)", what);
        return EXIT_USAGE;
    }
    char dir[4096];
    size_t dlen = slash ? (size_t)(slash - path) : 1;
    if (dlen >= sizeof dir) {
        cli_error("%s: %s", what, strerror(ENAMETOOLONG));
        return EXIT_USAGE;
    }
    if (!slash)
        memcpy(dir, ".", 2);
    else if (dlen == 0)
        memcpy(dir, "/", 2);
    else
        snprintf(dir, sizeof dir, "%.*s", (int)dlen, path);
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int e = dirfd < 0 ? errno : replace_at(dirfd, name, data, len, false);
    if (dirfd >= 0)
        close(dirfd);
    if (e) {
        cli_error("%s: %s", what, strerror(e));
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* mkdir -p: `path` and its missing parents. */
static int make_dirs(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        cli_error("-o %s: path too long", path);
        return EXIT_USAGE;
    }
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        struct stat sb;
        if (mkdir(buf, 0777) != 0 &&
            (errno != EEXIST || stat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
            cli_error("cannot create directory %s: %s", buf,
                      errno == EEXIST ? "a file is in the way" : strerror(errno));
            return EXIT_USAGE;
        }
        *p = c;
        if (c == '\0')
            return EXIT_OK;
    }
}

int out_dir_open(struct out_dir *d, const char *path, bool force)
{
    d->fd = -1;
    d->path = path;
    d->force = force;
    int rc = make_dirs(path);
    if (rc != EXIT_OK)
        return rc;
    d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d->fd < 0) {
        cli_error("-o %s: %s", path, strerror(errno));
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

int out_dir_check(const struct out_dir *d, const char *name, char *shown, size_t shown_len)
{
    int k = snprintf(shown, shown_len, "%s/%s", d->path, name);
    if (k < 0 || (size_t)k >= shown_len) {
        cli_error("-o %.64s...: the path of %s would be longer than %zu bytes", d->path, name,
                  shown_len - 1);
        return EXIT_USAGE;
    }
    if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        cli_error("-o %s: \"%s\" is not a plain file name", d->path, name);
        return EXIT_USAGE;
    }
    struct stat st;
    if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT)
            return EXIT_OK;
        cli_error("%s: %s", shown, strerror(errno));
        return EXIT_USAGE;
    }
    const char *in = input_at(&st);
    if (S_ISLNK(st.st_mode))
        cli_error("%s is a symbolic link; export never writes through one (remove it)", shown);
    else if (!S_ISREG(st.st_mode))
        cli_error("%s exists and is not a regular file", shown);
    else if (in)
        cli_error("%s is the input %s; refusing to overwrite it", shown, in);
    else if (!d->force)
        cli_error("%s exists; --force replaces it", shown);
    else
        return EXIT_OK;
    return EXIT_USAGE;
}

int out_dir_write(const struct out_dir *d, const char *name, const void *data, size_t len,
                  bool exec)
{
    int e = replace_at(d->fd, name, data, len, exec);
    if (e) {
        cli_error("cannot write %s/%s: %s", d->path, name, strerror(e));
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

void out_dir_close(struct out_dir *d)
{
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
}
