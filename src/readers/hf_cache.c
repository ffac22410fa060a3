/*
 * hf_cache.c - a model by name: a path, a Hugging Face id found in the local hub cache, or a
 * preset (by key, alias or the Hugging Face id its shape comes from).
 *
 * The cache is huggingface_hub's layout (huggingface_hub/constants.py: HF_HUB_CACHE, else
 * $HF_HOME/hub, else ~/.cache/huggingface/hub; file_download.py: repo folder
 * "models--ORG--NAME" with refs/<branch> holding a commit hash and snapshots/<commit>/ the files
 * of that revision).  Nothing is downloaded: an id missing from the cache falls back to the
 * preset with that id, else fails naming where it looked.
 */
#include "logs_internal.h"
#include "hf_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { PATH_CAP = 4096 };

/* ORG/NAME as the Hub spells repository ids: two non-empty parts of letters, digits, '-', '_'
   and '.', neither starting with '.' (so "./x" and "../x" stay paths), no ".json" ending. */
static bool is_hub_id(const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/') || s[0] == '.' ||
        slash[1] == '.')
        return false;
    for (const char *p = s; *p; p++) {
        char ch = *p;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '/';
        if (!ok)
            return false;
    }
    size_t n = strlen(s);
    return !(n > 5 && strcmp(s + n - 5, ".json") == 0);
}

/* The hub cache folder: $HF_HUB_CACHE, else $HF_HOME/hub, else $HOME/.cache/huggingface/hub
   (huggingface_hub/constants.py; XDG_CACHE_HOME stands for ~/.cache there too). */
static void cache_dir(char *out, size_t len)
{
    const char *v = getenv("HF_HUB_CACHE");
    if (v && *v) {
        tp_snprintf(out, len, "%s", v);
        return;
    }
    if ((v = getenv("HF_HOME")) && *v) {
        tp_snprintf(out, len, "%s/hub", v);
        return;
    }
    if ((v = getenv("XDG_CACHE_HOME")) && *v) {
        tp_snprintf(out, len, "%s/huggingface/hub", v);
        return;
    }
    v = getenv("HOME");
    tp_snprintf(out, len, "%s/.cache/huggingface/hub", v && *v ? v : ".");
}

static bool is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The revision refs/main names, when it is a snapshot holding config.json. */
static bool from_ref(const char *repo, char *out, size_t len)
{
    char ref[PATH_CAP], rev[128] = "";
    tp_snprintf(ref, sizeof ref, "%s/refs/main", repo);
    FILE *f = fopen(ref, "r");
    if (!f)
        return false;
    bool got = fgets(rev, sizeof rev, f) != NULL;
    fclose(f);
    rev[strcspn(rev, " \r\n")] = '\0';
    if (!got || !rev[0] || strchr(rev, '/') || strcmp(rev, "..") == 0 || strcmp(rev, ".") == 0)
        return false;
    int n = tp_snprintf(out, len, "%s/snapshots/%s/config.json", repo, rev);
    return n > 0 && (size_t)n < len && is_file(out);
}

/* The newest snapshot (latest modification time, ties to the greater name) holding
   config.json. */
static bool newest(const char *repo, char *out, size_t len)
{
    char dir[PATH_CAP], cand[PATH_CAP];
    tp_snprintf(dir, sizeof dir, "%s/snapshots", repo);
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    struct timespec best = {0, 0};
    char best_name[256] = "";
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        int n = tp_snprintf(cand, sizeof cand, "%s/%s/config.json", dir, e->d_name);
        struct stat sb, sd;
        if (n < 0 || (size_t)n >= sizeof cand || stat(cand, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        char snap[PATH_CAP];
        tp_snprintf(snap, sizeof snap, "%s/%s", dir, e->d_name);
        if (stat(snap, &sd) != 0)
            continue;
        struct timespec t = sd.st_mtim;
        bool later = !found || t.tv_sec > best.tv_sec ||
                     (t.tv_sec == best.tv_sec && t.tv_nsec > best.tv_nsec) ||
                     (t.tv_sec == best.tv_sec && t.tv_nsec == best.tv_nsec &&
                      strcmp(e->d_name, best_name) > 0);
        if (later && strlen(e->d_name) < sizeof best_name) {
            found = true;
            best = t;
            tp_snprintf(best_name, sizeof best_name, "%s", e->d_name);
            tp_snprintf(out, len, "%s", cand);
        }
    }
    closedir(d);
    return found;
}

bool tp_hf_cache_config(const char *id, char *out, size_t len, char *looked, size_t looked_len)
{
    char cache[PATH_CAP], repo[PATH_CAP];
    cache_dir(cache, sizeof cache);
    const char *slash = strchr(id, '/');
    int n = tp_snprintf(repo, sizeof repo, "%s/models--%.*s--%s", cache, (int)(slash - id), id,
                        slash + 1);
    if (looked)
        tp_snprintf(looked, looked_len, "%s/snapshots/*/config.json", repo);
    if (n < 0 || (size_t)n >= sizeof repo)
        return false;
    return from_ref(repo, out, len) || newest(repo, out, len);
}

/* MODEL names a file or directory when it exists or looks like a path. */
static bool looks_like_path(const char *s)
{
    struct stat sb;
    if (stat(s, &sb) == 0)
        return true;
    size_t n = strlen(s);
    return strchr(s, '/') != NULL || (n > 5 && strcmp(s + n - 5, ".json") == 0);
}

/* The order: an existing path; a Hugging Face id's config.json in the hub cache (the copy the
   user trains from); the preset with that key, alias or id; else the error of the path or the
   preset (an id's error names the cache folder looked in). */
enum tp_status tp_model_from_name(const char *name, struct tp_model *m, struct tp_error *err)
{
    struct stat sb;
    if (stat(name, &sb) == 0 || !is_hub_id(name))
        return looks_like_path(name) ? tp_model_from_hf_config(name, m, err)
                                     : tp_model_from_preset(name, m, err);
    char file[PATH_CAP], looked[PATH_CAP];
    if (tp_hf_cache_config(name, file, sizeof file, looked, sizeof looked)) {
        TRY(tp_model_from_hf_config(file, m, err));
        tp_snprintf(m->name, sizeof m->name, "%s", name); /* the id, as the user typed it */
        return TP_OK;
    }
    struct tp_error inner = {{0}, {0}};
    if (tp_model_from_preset(name, m, &inner) == TP_OK)
        return TP_OK;
    const char *close = strstr(inner.msg, " (did you mean");
    char hint[256] = "";
    if (close)
        tp_snprintf(hint, sizeof hint, "%.*s", (int)strcspn(close + 1, ")") + 2, close);
    return tp_fail(err, TP_ENOTFOUND,
                   "%s: not in the Hugging Face cache (no %s; set HF_HUB_CACHE or HF_HOME, or "
                   "download its config.json: nothing is fetched here) and no preset has that "
                   "id%s",
                   name, looked, hint);
}
