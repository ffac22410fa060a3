/*
 * common.c - pieces every command shares: model resolution, number formatting, exit handling.
 */
#include "cli.h"
#include "outfile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cli_print_json(json_t *doc, int digits)
{
    char *s = tp_json_dumps(doc, digits);
    if (!s) {
        cli_error("out of memory");
        return EXIT_USAGE;
    }
    puts(s);
    tp_free(s);
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
    out_inputs(a); /* no output may overwrite one of them (cli/outfile.c) */
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

int cli_resolve_model(const struct cli_args *a, struct tp_model *m, char *notes, size_t len)
{
    struct tp_error err = {{0}, {0}};
    enum tp_status st = TP_OK;
    notes[0] = '\0';
    if (a->model) {
        st = tp_model_from_name(a->model, m, &err);
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
        cli_error_field(&err);
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

/* --zero, --fsdp and --distributed-optimizer all say the ZeRO stage; one of them at most. */
static int resolve_zero(const struct cli_args *a, struct tp_request *q)
{
    static const int64_t FSDP_ZERO[] = {0, 0, 2, 3, 3};
    int given = (a->zero != TP_UNSET) + (a->fsdp != 0) + (a->distopt != 0);
    if (given > 1) {
        cli_error("give only one of --zero, --fsdp and --distributed-optimizer");
        return EXIT_USAGE;
    }
    if (a->zero != TP_UNSET)
        q->zero = a->zero;
    else if (a->fsdp)
        q->zero = FSDP_ZERO[a->fsdp];
    else if (a->distopt)
        q->zero = 1;
    q->hybrid_shard = a->fsdp == 4;
    return EXIT_OK;
}

/* The arguments as the library's request (src/io/request.c), which resolves them. */
static int to_request(const struct cli_args *a, struct tp_request *q)
{
    tp_request_init(q);
    q->gpu = a->gpu;
    q->gpus = a->gpus;
    q->gpus_per_node = a->gpus_per_node;
    q->hbm_gb = a->hbm_gb;
    q->peak_tflops = a->peak_tflops;
    q->hbm_tbps = a->hbm_tbps;
    q->intra_gbps = a->intra_gbps;
    q->inter_gbps = a->inter_gbps;
    q->host_gbps = a->host_gbps;
    q->task = a->task;
    q->optimizer = a->optimizer;
    q->precision = a->precision;
    q->framework = a->framework;
    /* --fsdp names PyTorch FSDP: with no --framework it is the fsdp stack (torchtitan when the
       layout pipelines, which plain FSDP2 does not), not DeepSpeed's ZeRO.  search with no
       --framework still tries every stack. */
    bool pipelined = (a->pp != TP_UNSET && a->pp > 1) || (a->vpp != TP_UNSET && a->vpp > 1) ||
                     a->pp_layout;
    if (a->fsdp && !a->framework && a->cmd != CMD_SEARCH)
        q->framework = 1 + (pipelined ? TP_FW_TORCHTITAN : TP_FW_FSDP);
    q->attn_impl = a->attn_impl;
    q->fp8_recipe = a->fp8_recipe;
    q->moe_dispatcher = a->moe_dispatcher;
    q->moe_impl = a->moe_impl;
    q->z3_leaf = a->z3_leaf != 0;
    /* --fsdp under the Hugging Face / Axolotl stack: its FSDP2 backend, not DeepSpeed */
    q->fsdp_backend = a->fsdp != 0 && a->framework == TP_FW_AXOLOTL + 1;
    q->zero_quant_weights = a->zero_quant_weights != 0;
    q->zero_quant_grads = a->zero_quant_grads != 0;
    q->moe_a2a_overlap = a->moe_a2a_overlap != 0;
    q->dropout = a->dropout != 0;
    q->fused_loss = a->fused_loss != 0;
    q->kbit_fp32 = a->kbit_fp32 != 0;
    q->expandable_segments = a->expandable_segments != 0;
    q->tp_comm_overlap = a->tp_comm_overlap != 0;
    q->fp8_param_gather = a->fp8_param_gather != 0;
    q->seq = a->seq;
    q->doc_len = a->doc_len;
    q->lora_rank = a->lora_rank;
    if (a->lora_targets && !(q->lora_targets = tp_lora_targets_parse(a->lora_targets))) {
        cli_error("--lora-targets %s: expected all, attention, mlp or a comma list of "
                  "q,k,v,o,gate,up,down", a->lora_targets);
        return EXIT_USAGE;
    }
    q->moe_capacity = a->moe_capacity;
    q->moe_imbalance = a->moe_imbalance;
    q->trainable_frac = a->trainable_frac;
    q->overhead_gb = a->overhead_gb;
    q->nccl_gb = a->nccl_gb;
    q->frag = a->frag;
    const int64_t src[] = {a->dp,  a->tp,  a->pp,  a->vpp, a->ep, a->etp, a->cp, a->shard_group,
                           a->hpz, a->mbs, a->gas, a->gbs, a->recompute_layers, a->pp_first,
                           a->pp_last};
    int64_t *dst[] = {&q->dp,  &q->tp,  &q->pp,  &q->vpp, &q->ep,  &q->etp, &q->cp,
                      &q->shard_group, &q->hpz, &q->mbs, &q->gas, &q->gbs,
                      &q->recompute_layers, &q->pp_first, &q->pp_last};
    for (size_t i = 0; i < sizeof src / sizeof src[0]; i++)
        *dst[i] = src[i];
    q->sp = a->sp != 0;
    q->recompute = a->recompute;
    q->offload = a->offload;
    q->offload_activations = a->offload_activations != 0;
    q->offload_layers = a->offload_layers;
    q->schedule = a->schedule;
    q->pp_layout = a->pp_layout;
    q->recompute_modules = a->recompute_modules;
    /* search with no --framework tries every stack on each layout (tp_stack_check there), so
       the placeholder layout is not held to the default stack */
    q->no_stack_check = a->cmd == CMD_LOGS || (a->cmd == CMD_SEARCH && !a->framework);
    q->gbs_is_target = a->cmd == CMD_SEARCH || a->cmd == CMD_SIZE;
    return resolve_zero(a, q);
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
    struct tp_request q;
    int rc = to_request(a, &q);
    if (rc != EXIT_OK)
        return rc;
    struct tp_error err = {{0}, {0}};
    if (tp_request_resolve(&q, &r->m, &r->c, &r->j, &r->l, &err) != TP_OK) {
        cli_error_field(&err);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* One line about the model's GEMM widths off the tensor cores' 128-byte grid at TP size `tp`:
   the first such dimension, its nearest aligned value and how many more there are. */
void cli_warn_misaligned(const struct tp_model *m, uint32_t tp, enum tp_precision p)
{
    struct tp_misalign mis[8];
    size_t n = tp_model_misaligned(m, tp, p, mis, 8);
    if (n == 0)
        return;
    const struct tp_misalign *a = &mis[0];
    printf("warning: %s %.0f", a->what, a->dim);
    if (a->width != a->dim)
        printf(" / tp %u = %.0f", tp, a->width);
    printf(" is off the tensor cores' 128-byte grid: its GEMMs run at %.0f%% of the rate; nearest "
           "aligned %s: %.0f", 100 * a->eff, a->what, a->nearest);
    if (n > 1)
        printf(" (%zu more widths off the grid)", n - 1);
    printf("\n");
}

static bool ident_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_';
}

/* At text[i], a setting whose key is an option: key=value, or a bare key with an underscore
   standing as a word of the sentence (pp_last: no English word has one; not an item of a list
   such as the recompute modules "mlp, moe, shared_experts").  Its length (key, and '=' when
   given), the flag ("pp-last") in `flag`, *value whether a value follows; else 0. */
static size_t setting_at(const char *text, size_t i, char *flag, size_t len, bool *value)
{
    if (i > 0 && (ident_char(text[i - 1]) || text[i - 1] == '-' || text[i - 1] == '.'))
        return 0;
    size_t n = 0;
    bool underscore = false;
    while (ident_char(text[i + n]) && n + 1 < len) {
        underscore = underscore || text[i + n] == '_';
        flag[n] = text[i + n] == '_' ? '-' : text[i + n];
        n++;
    }
    flag[n] = '\0';
    *value = text[i + n] == '=' && text[i + n + 1] && text[i + n + 1] != ' ';
    bool word = underscore && (i == 0 || strchr(" (/", text[i - 1])) &&
                strchr(" )/:;.", text[i + n]); /* strchr finds the final NUL too */
    if (n == 0 || ident_char(text[i + n]) || (!*value && !word) || !cli_is_option(flag))
        return 0;
    return n + *value;
}

void cli_render_settings(const char *text, char *out, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; text[i] && o + 1 < len;) {
        char flag[40];
        bool value;
        size_t n = setting_at(text, i, flag, sizeof flag, &value);
        if (n == 0) {
            out[o++] = text[i++];
            continue;
        }
        i += n;
        bool on = value && strncmp(text + i, "true", 4) == 0 && !ident_char(text[i + 4]);
        int k = snprintf(out + o, len - o, value && !on ? "--%s " : "--%s", flag);
        o += k > 0 ? (size_t)k : 0;
        if (on)
            i += 4;
        if (o >= len)
            o = len - 1;
    }
    out[o] = '\0';
}

const char *cli_lib_msg(const struct tp_error *err)
{
    static char msg[2 * sizeof err->msg];
    cli_render_settings(err->msg, msg, sizeof msg);
    return msg;
}

/* A library error that names its field ("gbs 12 is not ..."): the field as the flag, and the
   settings it names (zero=3) as flags (--zero 3). */
void cli_error_field(const struct tp_error *err)
{
    char msg[2 * sizeof err->msg];
    cli_render_settings(err->msg, msg, sizeof msg);
    size_t n = strlen(err->field);
    if (!n || strncmp(msg, err->field, n) != 0) {
        cli_error("%s", msg);
        return;
    }
    char flag[sizeof err->field];
    for (size_t i = 0; i <= n; i++)
        flag[i] = err->field[i] == '_' ? '-' : err->field[i];
    cli_error("--%s%s", flag, msg + n);
}

const char *cli_escape(const char *text)
{
    static char buf[4][4096]; /* a few per printf call; each up to 4 KiB escaped */
    static unsigned next;
    char *out = buf[next++ % 4];
    tp_text_escape(text, out, sizeof buf[0]);
    return out;
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
