/*
 * common.c - pieces every command shares: model resolution, number formatting, exit handling.
 */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int cli_print_json(json_t *doc, int digits)
{
    size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER | (digits ? JSON_REAL_PRECISION(digits) : 0);
    char *s = doc ? json_dumps(doc, flags) : NULL;
    json_decref(doc);
    if (!s) {
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    puts(s);
    free(s);
    return EXIT_OK;
}

int cli_finish(int code)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error("could not write the output");
        return EXIT_USAGE;
    }
    return code;
}

int cli_begin(int argc, char **argv, unsigned cmd, struct cli_args *a, void (*help)(void))
{
    int rc = cli_parse(argc, argv, cmd, a);
    if (rc != EXIT_OK)
        return rc;
    if (a->help) {
        help();
        return cli_finish(EXIT_OK);
    }
    return -1;
}

int cli_begin_run(int argc, char **argv, unsigned cmd, struct cli_args *a, void (*help)(void),
                  struct run *r)
{
    int rc = cli_begin(argc, argv, cmd, a, help);
    if (rc >= 0)
        return rc;
    memset(r, 0, sizeof *r);
    rc = cli_resolve_run(a, r);
    return rc == EXIT_OK ? -1 : rc;
}

int cli_begin_listing(int argc, char **argv, unsigned cmd, struct cli_args *a,
                      void (*help)(void), const char *name)
{
    int rc = cli_begin(argc, argv, cmd, a, help);
    if (rc < 0 && a->model) {
        cli_error("`trainplan %s` takes no argument (got \"%s\")", name, a->model);
        return EXIT_USAGE;
    }
    return rc;
}

/* MODEL names a file or directory when it exists or looks like a path; else a preset. */
static bool looks_like_path(const char *s)
{
    struct stat sb;
    if (stat(s, &sb) == 0)
        return true;
    size_t n = strlen(s);
    return strchr(s, '/') != NULL || (n > 5 && strcmp(s + n - 5, ".json") == 0);
}

int cli_resolve_model(const struct cli_args *a, struct tp_model *m, char *notes, size_t len)
{
    struct tp_error err = {{0}};
    enum tp_status st = TP_OK;
    notes[0] = '\0';
    if (a->model) {
        st = looks_like_path(a->model) ? tp_model_from_hf_config(a->model, m, &err)
                                       : tp_model_from_preset(a->model, m, &err);
    } else if (tp_shape_any(&a->shape)) {
        tp_model_init(m);
    } else {
        cli_error("no model: give a preset name, a config.json path, or shape flags "
                  "(--layers --hidden --heads --vocab ...)");
        return EXIT_USAGE;
    }
    if (st == TP_OK && tp_shape_any(&a->shape))
        st = tp_model_apply_shape(m, &a->shape, notes, len, &err);
    if (st != TP_OK) {
        cli_error("%s", err.msg);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

void fmt_count(char *buf, size_t len, uint64_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
    size_t o = 0;
    for (int i = 0; i < n && o + 2 < len; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

void fmt_si(char *buf, size_t len, double v)
{
    static const char *const suffix[] = {"", "K", "M", "B", "T", "P"};
    int i = 0;
    double x = fabs(v);
    while (x >= 999.995 && i < 5) {
        x /= 1000;
        i++;
    }
    snprintf(buf, len, "%s%.*f%s", v < 0 ? "-" : "", i == 0 ? 0 : 2, x, suffix[i]);
}

/* "q,k,v" -> TP_LORA_* mask; 0 on an unknown name. */
static uint32_t lora_mask(const char *list)
{
    static const struct {
        const char *name;
        uint32_t bit;
    } names[] = {{"q", TP_LORA_Q},       {"k", TP_LORA_K},   {"v", TP_LORA_V},
                 {"o", TP_LORA_O},       {"gate", TP_LORA_GATE}, {"up", TP_LORA_UP},
                 {"down", TP_LORA_DOWN}, {"all", TP_LORA_ALL}, {"attention", 0xf},
                 {"mlp", 0x70}};
    uint32_t mask = 0;
    while (*list) {
        size_t n = strcspn(list, ",");
        uint32_t bit = 0;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == n && strncmp(names[i].name, list, n) == 0)
                bit = names[i].bit;
        if (!bit)
            return 0;
        mask |= bit;
        list += n + (list[n] == ',');
    }
    return mask;
}

static int resolve_job(const struct cli_args *a, struct run *r)
{
    struct tp_job *j = &r->j;
    tp_job_init(j);
    j->task = (enum tp_task)a->task;
    j->optimizer = (enum tp_optimizer)a->optimizer;
    j->precision = (enum tp_precision)a->precision;
    j->framework = a->framework ? (enum tp_framework)(a->framework - 1) : TP_FW_DEEPSPEED;
    j->moe_impl = (enum tp_moe_impl)a->moe_impl;
    j->z3_leaf = a->z3_leaf != 0;
    j->attn_impl = (enum tp_attn_impl)a->attn_impl;
    j->dropout = a->dropout != 0;
    j->fused_loss = a->fused_loss != 0;
    j->tp_comm_overlap = a->tp_comm_overlap != 0;
    j->seq = a->seq != TP_UNSET ? (uint64_t)a->seq : r->m.default_seq ? r->m.default_seq : 4096;
    if (a->lora_rank != TP_UNSET)
        j->lora_rank = (uint32_t)a->lora_rank;
    if (a->lora_targets) {
        j->lora_targets = lora_mask(a->lora_targets);
        if (!j->lora_targets) {
            cli_error("--lora-targets %s: expected all, attention, mlp or a comma list of "
                      "q,k,v,o,gate,up,down", a->lora_targets);
            return EXIT_USAGE;
        }
    }
    if (a->moe_capacity >= 0)
        j->moe_capacity = a->moe_capacity;
    if (a->moe_imbalance >= 0)
        j->moe_imbalance = a->moe_imbalance;
    if (a->overhead_gb >= 0)
        j->overhead_base_bytes = a->overhead_gb * 1e9;
    if (a->nccl_gb >= 0)
        j->overhead_comm_bytes = a->nccl_gb * 1e9;
    if (a->frag >= 0)
        j->overhead_frag = a->frag;
    return EXIT_OK;
}

/* --pp-layout: "embedding", "loss" or "embedding,loss" (Megatron-Core's
   --account-for-...-in-pipeline-split), else a --pipeline-model-parallel-layout string. */
static int set_pp_layout(const char *text, uint32_t n_layers, struct tp_layout *l)
{
    struct tp_error err;
    bool e = strcmp(text, "embedding") == 0 || strcmp(text, "embedding,loss") == 0;
    bool s = strcmp(text, "loss") == 0 || strcmp(text, "embedding,loss") == 0;
    enum tp_status st = e || s ? tp_layout_pp_account(n_layers, e, s, l, &err)
                               : tp_layout_pp_parse(text, n_layers, l, &err);
    if (st != TP_OK) {
        cli_error("%s", err.msg);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static int resolve_zero(const struct cli_args *a, struct tp_layout *l)
{
    static const uint32_t FSDP_ZERO[] = {0, 0, 2, 3, 3};
    int given = (a->zero != TP_UNSET) + (a->fsdp != 0) + (a->distopt != 0);
    if (given > 1) {
        cli_error("give only one of --zero, --fsdp and --distributed-optimizer");
        return EXIT_USAGE;
    }
    if (a->zero != TP_UNSET)
        l->zero = (uint32_t)a->zero;
    else if (a->fsdp)
        l->zero = FSDP_ZERO[a->fsdp];
    else if (a->distopt)
        l->zero = 1;
    return EXIT_OK;
}

int cli_resolve_run(const struct cli_args *a, struct run *r)
{
    int rc = cli_resolve_model(a, &r->m, r->notes, sizeof r->notes);
    if (rc != EXIT_OK)
        return rc;
    return cli_resolve_cluster_job(a, r);
}

int cli_resolve_cluster_job(const struct cli_args *a, struct run *r)
{
    int rc;
    struct tp_error err = {{0}};
    if (tp_cluster_init(&r->c, a->gpu ? a->gpu : "h100-sxm", 0, &err) != TP_OK) {
        cli_error("%s", err.msg);
        return EXIT_USAGE;
    }
    if (a->hbm_gb > 0)
        r->c.gpu.hbm_bytes = a->hbm_gb * 1073741824.0; /* a vendor "GB" of DRAM is a GiB */
    if (a->gpus_per_node != TP_UNSET)
        r->c.gpus_per_node = (uint32_t)a->gpus_per_node;
    if ((rc = resolve_job(a, r)) != EXIT_OK)
        return rc;
    if (a->peak_tflops > 0) {
        enum tp_dtype d = tp_prec_gemm_dtype(r->j.precision);
        r->c.gpu.peak_flops[d] = a->peak_tflops * 1e12;
        if (d == TP_TF32)
            r->c.gpu.peak_flops[TP_FP32] = a->peak_tflops * 1e12;
    }
    if (a->hbm_tbps > 0)
        r->c.gpu.hbm_bw = a->hbm_tbps * 1e12;
    if (a->intra_gbps > 0)
        r->c.gpu.intra_bw = a->intra_gbps * 1e9;
    if (a->inter_gbps > 0)
        r->c.gpu.inter_bw = a->inter_gbps * 1e9;
    if (a->host_gbps > 0)
        r->c.gpu.host_bw = a->host_gbps * 1e9;

    struct tp_layout *l = &r->l;
    tp_layout_init(l);
    const struct {
        int64_t v;
        uint32_t *dst;
    } dims[] = {{a->dp, &l->dp},   {a->tp, &l->tp},   {a->pp, &l->pp},           {a->vpp, &l->vpp},
                {a->ep, &l->ep},   {a->etp, &l->etp}, {a->cp, &l->cp},           {a->mbs, &l->mbs},
                {a->gas, &l->gas}, {a->shard_group, &l->shard_group},
                {a->recompute_layers, &l->recompute_layers},
                {a->pp_first, &l->pp_first}, {a->pp_last, &l->pp_last}};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (dims[i].v != TP_UNSET)
            *dims[i].dst = (uint32_t)dims[i].v;
    if (a->pp_layout && r->m.n_layers && set_pp_layout(a->pp_layout, r->m.n_layers, l) != EXIT_OK)
        return EXIT_USAGE;
    l->sp = a->sp != 0;
    l->recompute = (enum tp_recompute)a->recompute;
    if (a->recompute_modules) {
        struct tp_error rerr;
        if (l->recompute == TP_RECOMPUTE_FULL) {
            cli_error("--recompute-modules needs --recompute selective (or none given)");
            return EXIT_USAGE;
        }
        if (tp_recompute_modules_parse(a->recompute_modules, &l->recompute_modules, &rerr) !=
            TP_OK) {
            cli_error("%s", rerr.msg);
            return EXIT_USAGE;
        }
        l->recompute = TP_RECOMPUTE_SELECTIVE;
    }
    l->offload = (enum tp_offload)a->offload;
    l->schedule = (enum tp_schedule)a->schedule;
    if ((rc = resolve_zero(a, l)) != EXIT_OK)
        return rc;
    if (a->fsdp == 4 && l->shard_group == 0)
        l->shard_group = r->c.gpus_per_node; /* HYBRID_SHARD: shard within a node */
    if (a->recompute_layers != TP_UNSET && l->recompute != TP_RECOMPUTE_FULL) {
        cli_error("--recompute-layers needs --recompute full");
        return EXIT_USAGE;
    }
    if (a->gpus != TP_UNSET)
        r->c.n_gpus = (uint32_t)a->gpus;
    else if (a->dp != TP_UNSET)
        r->c.n_gpus = l->dp * l->tp * l->pp * l->cp;
    else
        r->c.n_gpus = r->c.gpus_per_node;
    if (!a->framework && (l->tp > 1 || l->pp > 1 || l->cp > 1 || l->vpp > 1 || l->sp))
        r->j.framework = TP_FW_MEGATRON; /* the stack that runs every layout */
    /* size has no model yet: each shape's layouts come from the search */
    if (r->m.n_layers &&
        (tp_layout_check(&r->m, &r->c, &r->j, l, &err) != TP_OK ||
         (a->cmd != CMD_LOGS && tp_stack_check(&r->m, &r->j, l, &err) != TP_OK))) {
        cli_error("%s", err.msg);
        return EXIT_USAGE;
    }
    if (a->gbs != TP_UNSET && a->cmd != CMD_SEARCH && a->cmd != CMD_SIZE) {
        uint64_t per = (uint64_t)l->mbs * l->dp;
        if ((uint64_t)a->gbs % per != 0) {
            cli_error("--gbs %lld is not a multiple of mbs*dp = %u*%u = %llu", (long long)a->gbs,
                      l->mbs, l->dp, (unsigned long long)per);
            return EXIT_USAGE;
        }
        uint32_t gas = (uint32_t)((uint64_t)a->gbs / per);
        if (a->gas != TP_UNSET && gas != l->gas) {
            cli_error("--gbs %lld = mbs*dp*gas needs --gas %u, not %u", (long long)a->gbs, gas,
                      l->gas);
            return EXIT_USAGE;
        }
        l->gas = gas;
    }
    return EXIT_OK;
}

void fmt_duration(char *buf, size_t len, double s)
{
    if (s < 120)
        snprintf(buf, len, "%.1f s", s);
    else if (s < 7200)
        snprintf(buf, len, "%.1f min", s / 60);
    else if (s < 3 * 86400)
        snprintf(buf, len, "%.1f h", s / 3600);
    else
        snprintf(buf, len, "%.1f days", s / 86400);
}
