/* fuzz_outfile.c - export's folder writes (cli/outfile.c): the first byte's low bit is --force,
   the rest up to the first newline is a file name, what follows its content.  The export
   folder holds a symbolic link to a file beside the folder; whatever the name, the file is
   written inside the folder as a regular file or refused, and the file outside never changes
   (issue 41: no output leaves its folder or writes through a link). */
#include "fuzz.h"
#include "../cli/outfile.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/tp-fuzz-outfile-XXXXXX";
static char dir[64], outside[64];
static const char SECRET[] = "not to be overwritten\n";

/* The folders are removed at exit (the replays run in `make test`). */
static void cleanup(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
    rmdir(dir);
    unlink(outside);
    rmdir(root);
}

static void setup(void)
{
    if (!mkdtemp(root))
        abort();
    atexit(cleanup);
    snprintf(dir, sizeof dir, "%s/dir", root);
    snprintf(outside, sizeof outside, "%s/outside", root);
    char link[96];
    snprintf(link, sizeof link, "%s/link", dir);
    FILE *f = fopen(outside, "w");
    if (mkdir(dir, 0777) != 0 || !f || fputs(SECRET, f) < 0 || fclose(f) != 0 ||
        symlink("../outside", link) != 0)
        abort();
}

/* The folder beside the export folder still holds exactly "dir" and "outside", the latter
   unchanged. */
static void check_outside(void)
{
    char buf[64] = "";
    FILE *f = fopen(outside, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    if (strcmp(buf, SECRET) != 0) {
        fprintf(stderr, "fuzz: the file outside the export folder changed\n");
        abort();
    }
    DIR *d = opendir(root);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "dir") &&
            strcmp(e->d_name, "outside")) {
            fprintf(stderr, "fuzz: %s written beside the export folder\n", e->d_name);
            abort();
        }
    if (d)
        closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        setup();
        ready = 1;
    }
    if (size < 1 || size > 4096)
        return 0;
    char name[600];
    size_t k = 0;
    while (1 + k < size && data[1 + k] != '\n' && k + 1 < sizeof name)
        k++;
    memcpy(name, data + 1, k);
    name[k] = '\0';
    const char *text = (const char *)data + 1 + k;
    size_t len = size - 1 - k;
    char msg[512];
    cli_error_capture(msg, sizeof msg); /* refusals are expected: keep stderr quiet */
    struct out_dir d;
    char shown[4096];
    if (out_dir_open(&d, dir, data[0] & 1) == EXIT_OK &&
        out_dir_check(&d, name, shown, sizeof shown) == EXIT_OK &&
        out_dir_write(&d, name, text, len, false) == EXIT_OK) {
        struct stat st;
        if (strchr(name, '/') || fstatat(d.fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !S_ISREG(st.st_mode) || (size_t)st.st_size != len) {
            fprintf(stderr, "fuzz: \"%s\" was not written as a %zu-byte file in the folder\n",
                    name, len);
            abort();
        }
        unlinkat(d.fd, name, 0); /* the folder keeps only the link */
    }
    out_dir_close(&d);
    cli_error_capture(NULL, 0);
    check_outside();
    return 0;
}
