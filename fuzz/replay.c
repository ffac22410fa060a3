/*
 * replay.c - a plain main for a fuzz target (no libFuzzer): feeds every file named on the
 * command line, or every file of a named directory, to LLVMFuzzerTestOneInput once.  A crash,
 * a sanitizer report or an abort() from a target's checks fails the run.  `make test` replays
 * tests/fuzz-regressions/<name>/ and fuzz/corpus/<name>/ this way with gcc or clang.
 */
#include "fuzz.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

static int feed(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *grown = realloc(buf, cap * 2);
            if (!grown) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "replay: out of memory reading %s\n", path);
        return 1;
    }
    /* the exact size, so that ASan sees reads past the input as libFuzzer would */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return 1;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int compare(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of `dir`, in name order (the runs are then reproducible). */
static int feed_dir(const char *dir, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* a target without reproducers or seeds yet */
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char **grown = realloc(names, (n + 1) * sizeof *names);
        if (!grown)
            break;
        names = grown;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        names[n] = malloc(len);
        if (!names[n])
            break;
        snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, compare);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            rc |= feed(names[i]);
            ++*count;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    size_t count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            rc |= feed_dir(argv[i], &count);
        } else if (stat(argv[i], &st) == 0) {
            rc |= feed(argv[i]);
            count++;
        }
    }
    printf("%s: %zu inputs replayed\n", argc > 0 ? argv[0] : "replay", count);
    return rc;
}
