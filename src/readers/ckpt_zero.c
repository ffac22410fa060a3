/*
 * ckpt_zero.c - DeepSpeed ZeRO checkpoint folders (the size of the checkpoints a run saves is
 * eval's tp_ckpt_plan, eval/ckpt_plan.c).
 *
 * DeepSpeed's engine (deepspeed/runtime/engine.py: save_checkpoint, _get_ckpt_name,
 * _get_zero_ckpt_name; checkpoint/constants.py) writes, per save, a folder named by the tag
 * (default "global_step{N}") and a `latest` file holding that tag:
 *   mp_rank_{mp:02d}_model_states.pt                      stage 0-2: the 16-bit module, one per
 *                                                          model-parallel rank
 *   zero_pp_rank_{dp}_mp_rank_{mp:02d}_model_states.pt    stage 3: one per rank (parameters are
 *                                                          partitioned: shapes, no weights)
 *   [bf16_]zero_pp_rank_{dp}_mp_rank_{mp:02d}_optim_states.pt   one per rank: its partition of
 *                                                          the fp32 master weights and the
 *                                                          optimizer states
 * The .pt files are pickled zip archives: only names and sizes are used here.
 *
 * zero_to_fp32.py (deepspeed/utils) loads every rank's optim file whole (torch.load, then drops
 * the moments and keeps the fp32 partitions: 4 B/parameter over all ranks), then builds the
 * consolidated fp32 state dict beside them ("XXX: memory usage doubles here"): host RAM peaks
 * at 8 B per parameter plus the one file being loaded, and the output is 4 B per parameter.
 */
#include "ckpt_internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Parses "<digits>" at *s into v; advances. */
static bool number(const char **s, uint32_t *v)
{
    char *end;
    if (**s < '0' || **s > '9')
        return false;
    unsigned long x = strtoul(*s, &end, 10);
    if (x > 1000000)
        return false;
    *v = (uint32_t)x;
    *s = end;
    return true;
}

static bool eat(const char **s, const char *lit)
{
    size_t n = strlen(lit);
    if (strncmp(*s, lit, n) != 0)
        return false;
    *s += n;
    return true;
}

/* Recognises DeepSpeed's rank file names; false for any other file. */
static bool parse_rank_name(const char *name, struct tp_zero_file *f)
{
    const char *s = name;
    memset(f, 0, sizeof *f);
    size_t len = strlen(name);
    if (len >= sizeof f->name)
        return false; /* DeepSpeed's names are far shorter */
    memcpy(f->name, name, len + 1);
    if (!eat(&s, "bf16_"))
        eat(&s, "fp16_");
    bool ranked = true;
    if (eat(&s, "zero_pp_rank_")) {
        f->zero_rank = true;
        ranked = number(&s, &f->dp_rank) && eat(&s, "_");
    }
    if (ranked && eat(&s, "mp_rank_") && number(&s, &f->mp_rank)) {
        if (strcmp(s, "_optim_states.pt") == 0 && f->zero_rank)
            return (f->optim = true);
        if (strcmp(s, "_model_states.pt") == 0)
            return true;
    }
    /* pipeline layer files, MoE expert files: kept, not rank-checked */
    size_t n = len;
    f->zero_rank = false;
    f->mp_rank = UINT32_MAX;
    f->optim = n > 16 && strcmp(name + n - 16, "_optim_states.pt") == 0;
    return f->optim || (n > 16 && strcmp(name + n - 16, "_model_states.pt") == 0);
}

static int by_file_name(const void *a, const void *b)
{
    return strcmp(((const struct tp_zero_file *)a)->name, ((const struct tp_zero_file *)b)->name);
}

/* The rank files of folder `dir` into z. */
static enum tp_status list_rank_files(struct tp_ckpt *c, struct tp_ckpt_zero *z, const char *dir,
                                      struct tp_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return TP_OK; /* reported as a missing tag by the caller */
    struct dirent *e;
    char path[1024];
    enum tp_status st = TP_OK;
    while (st == TP_OK && (e = readdir(d)) != NULL) {
        struct tp_zero_file f;
        if (!parse_rank_name(e->d_name, &f))
            continue;
        tp_snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            continue;
        f.bytes = (uint64_t)sb.st_size;
        struct tp_zero_file *v = tp_grow(z->files, z->n_files, sizeof *v);
        if (!v) {
            st = tp_fail(err, TP_ENOMEM, "out of memory");
            break;
        }
        z->files = v;
        z->files[z->n_files++] = f;
        if (f.bytes == 0 && !tp_ck_problem(c, TP_CK_STUB, path, "", "zero-length rank file"))
            st = tp_fail(err, TP_ENOMEM, "out of memory");
    }
    closedir(d);
    if (z->n_files)
        qsort(z->files, z->n_files, sizeof *z->files, by_file_name);
    return st;
}

static uint64_t step_of(const char *tag)
{
    return strtoull(tag + strlen("global_step"), NULL, 10);
}

static int by_step(const void *a, const void *b)
{
    uint64_t x = step_of(a), y = step_of(b);
    return x != y ? (x > y) - (x < y) : strcmp(a, b);
}

/* `latest` and the global_step* folders of dir. */
static void find_tags(struct tp_ckpt_zero *z, const char *dir)
{
    char path[1024];
    tp_snprintf(path, sizeof path, "%s/latest", dir);
    struct stat sb;
    FILE *f = stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? fopen(path, "rb") : NULL;
    if (f) {
        size_t n = fread(z->latest, 1, sizeof z->latest - 1, f);
        fclose(f);
        z->latest[n] = '\0';
        z->latest[strcspn(z->latest, "\r\n \t")] = '\0';
        z->present = true;
    }
    DIR *d = opendir(dir);
    struct dirent *e;
    char all[64][64];
    size_t n = 0;
    while (d && (e = readdir(d)) != NULL)
        if (strncmp(e->d_name, "global_step", 11) == 0 && strlen(e->d_name) < 64) {
            z->n_tags++;
            if (n < 64)
                memcpy(all[n++], e->d_name, strlen(e->d_name) + 1);
        }
    if (d)
        closedir(d);
    qsort(all, n, 64, by_step);
    for (size_t i = 0; i < n && i < 8; i++)
        tp_snprintf(z->tags[i], 64, "%s", all[n > 8 ? n - 8 + i : i]);
    z->present = z->present || z->n_tags > 0;
}

static const struct tp_zero_file *rank_file(const struct tp_ckpt_zero *z, bool optim,
                                            uint32_t dp, uint32_t mp, bool zero_rank)
{
    for (size_t i = 0; i < z->n_files; i++) {
        const struct tp_zero_file *f = &z->files[i];
        if (f->optim == optim && f->mp_rank == mp && f->zero_rank == zero_rank &&
            (!zero_rank || f->dp_rank == dp))
            return f;
    }
    return NULL;
}

/* Missing ranks: every (dp, mp) pair up to the ranks expected. */
static bool check_ranks(struct tp_ckpt *c, const struct tp_ckpt_zero *z, uint32_t dp_want)
{
    const char *prefix = "";
    for (size_t i = 0; i < z->n_files; i++)
        if (z->files[i].optim && z->files[i].zero_rank)
            prefix = strncmp(z->files[i].name, "bf16_", 5) == 0   ? "bf16_"
                     : strncmp(z->files[i].name, "fp16_", 5) == 0 ? "fp16_"
                                                                  : "";
    bool any_optim = rank_file(z, true, 0, 0, true) || z->dp_ranks > 0;
    char name[1200];
    bool ok = true;
    for (uint32_t mp = 0; ok && mp < z->mp_ranks; mp++) {
        if (z->stage_hint < 3 && !rank_file(z, false, 0, mp, false)) {
            tp_snprintf(name, sizeof name, "%s/mp_rank_%02u_model_states.pt", z->tag_dir, mp);
            ok = tp_ck_problem(c, TP_CK_MISSING_RANK, name, "", "model-parallel rank %u's module "
                               "file is not there", mp);
        }
        for (uint32_t dp = 0; ok && any_optim && dp < dp_want; dp++) {
            if (!rank_file(z, true, dp, mp, true)) {
                tp_snprintf(name, sizeof name, "%s/%szero_pp_rank_%u_mp_rank_%02u_optim_states.pt",
                         z->tag_dir, prefix, dp, mp);
                ok = tp_ck_problem(c, TP_CK_MISSING_RANK, name, "", "rank %u of %u: its optimizer "
                                   "partition is not there (zero_to_fp32 refuses the folder)",
                                   dp, dp_want);
            }
            if (ok && z->stage_hint == 3 && !rank_file(z, false, dp, mp, true)) {
                tp_snprintf(name, sizeof name, "%s/zero_pp_rank_%u_mp_rank_%02u_model_states.pt",
                         z->tag_dir, dp, mp);
                ok = tp_ck_problem(c, TP_CK_MISSING_RANK, name, "", "rank %u of %u: its module "
                                   "file is not there", dp, dp_want);
            }
        }
    }
    return ok;
}

/* Planned sizes per file and the files under half of theirs. */
static bool check_sizes(struct tp_ckpt *c, struct tp_ckpt_zero *z, const struct tp_model *m,
                        const struct tp_job *j, uint32_t dp)
{
    struct tp_job dj;
    if (!j) {
        tp_job_init(&dj);
        j = &dj;
    }
    struct tp_ckpt_plan p;
    tp_ckpt_plan_core(m, j, dp * z->mp_ranks, z->mp_ranks, z->stage_hint, 0, &p);
    bool ok = true;
    for (size_t i = 0; ok && i < z->n_files; i++) {
        struct tp_zero_file *f = &z->files[i];
        if (f->mp_rank == UINT32_MAX)
            continue;
        f->planned_bytes = f->optim ? p.optim_file_bytes : p.model_file_bytes;
        if (f->bytes > 0 && (double)f->bytes < 0.5 * f->planned_bytes) {
            char path[1200];
            tp_snprintf(path, sizeof path, "%s/%s", z->tag_dir, f->name);
            ok = tp_ck_problem(c, TP_CK_SMALL_RANK, path, "",
                               "%llu bytes; the plan gives %.0f (%s, %u ranks): cut short?",
                               (unsigned long long)f->bytes, f->planned_bytes,
                               f->optim ? "fp32 master + optimizer states" : "16-bit weights",
                               dp * z->mp_ranks);
        }
    }
    return ok;
}

static void tally(struct tp_ckpt_zero *z)
{
    for (size_t i = 0; i < z->n_files; i++) {
        const struct tp_zero_file *f = &z->files[i];
        /* checked: a sum past 2^64 - 1 stays UINT64_MAX (printed as unknown), never wraps */
        (void)tp_add_u64(f->optim ? &z->optim_bytes : &z->model_bytes, f->bytes);
        if (f->mp_rank == UINT32_MAX)
            continue;
        if (f->mp_rank + 1 > z->mp_ranks)
            z->mp_ranks = f->mp_rank + 1;
        if (f->zero_rank && f->dp_rank + 1 > z->dp_ranks)
            z->dp_ranks = f->dp_rank + 1;
        if (f->zero_rank && !f->optim)
            z->stage_hint = 3;
    }
}

enum tp_status tp_ck_zero_scan(struct tp_ckpt *c, const char *dir, const struct tp_model *m,
                               const struct tp_job *j, uint32_t n_gpus, struct tp_error *err)
{
    struct tp_ckpt_zero *z = &c->zero;
    find_tags(z, dir);
    size_t last = z->n_tags > 8 ? 7 : z->n_tags ? z->n_tags - 1 : 0; /* the highest 8 kept */
    const char *tag = z->latest[0] ? z->latest : z->n_tags ? z->tags[last] : "";
    /* a tag is a folder name here, never a path elsewhere */
    bool plain = !strchr(tag, '/') && strcmp(tag, "..") != 0 && strcmp(tag, ".") != 0;
    tp_snprintf(z->tag_dir, sizeof z->tag_dir, "%s%s%s", dir, tag[0] ? "/" : "", tag);
    struct stat sb;
    if (z->latest[0] && (!plain || stat(z->tag_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        char path[1024];
        tp_snprintf(path, sizeof path, "%s/latest", dir);
        if (!tp_ck_problem(c, TP_CK_MISSING_TAG, path, "", "names \"%s\", which is not a folder "
                           "here", z->latest))
            return tp_fail(err, TP_ENOMEM, "out of memory");
        return TP_OK;
    }
    TRY(list_rank_files(c, z, z->tag_dir, err));
    z->present = z->present || z->n_files > 0;
    if (!z->present)
        return TP_OK;
    if (z->n_files == 0 && !tp_ck_problem(c, TP_CK_MISSING_RANK, z->tag_dir, "",
                                          "no *_model_states.pt or *_optim_states.pt here"))
        return tp_fail(err, TP_ENOMEM, "out of memory");
    z->stage_hint = 2;
    tally(z);
    uint32_t dp_want = z->dp_ranks;
    if (n_gpus > 0 && z->mp_ranks > 0 && n_gpus % z->mp_ranks == 0)
        dp_want = n_gpus / z->mp_ranks;
    bool ok = check_ranks(c, z, dp_want);
    if (ok && m && z->mp_ranks > 0)
        ok = check_sizes(c, z, m, j, dp_want ? dp_want : 1);
    return ok ? TP_OK : tp_fail(err, TP_ENOMEM, "out of memory");
}
