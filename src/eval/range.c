/*
 * range.c - an honest 80% range on every throughput estimate: the prediction times the 10th and
 * 90th percentiles of a predictive distribution of log(measured / predicted), not a band fitted
 * to the rows we have.
 *
 * The distribution is normal in log space (docs/calibration.md "Ranges"):
 *
 *   centre   mu                      the class's held-out bias (each source weighing one)
 *   variance within^2                the class's spread of runs inside one source
 *          + tau^2                   the spread BETWEEN sources: a user's cluster is a new source
 *          + sum of distance terms   one per way the run lies away from the calibration data
 *
 * and the range is exp(mu -+ q sd): q = 1.2816, the standard normal's 90th percentile, or
 * Student's t at 0.9 where the within-source spread was estimated from a handful of runs.
 * mu, within and tau per class (stack kind, GPU vendor, dense or MoE) come from the
 * leave-one-source-out errors of the calibration rows (each source predicted by a fit that never
 * saw it; tp_range_spread, src/fit/crossval.c: a one-way random-effects model); a class measured
 * by fewer than three sources takes the between-source spread of all of them (one or two sources
 * cannot show how far the next one lies).  Each distance term is the inflation that the
 * leave-one-regime-out split of that dimension needs: the extra spread of the rows a fold had
 * never seen the like of (GPU family, stack, model-size decade), from `bench_calibrate`'s
 * "range model" block, which prints every number of this file.  Cheap: a table look-up, a
 * parameter count and one square root per evaluation.
 */
#include "eval_internal.h"

#include <math.h>
#include <string.h>

/* the standard normal's 90th percentile: a central 80% interval is mu -+ Z80 sd */
#define Z80 1.2816

/* Distance terms (sd in log space), each the inflation that brings the rows its
   leave-one-regime-out split flags (the fold never saw their GPU family, their stack's kernel
   style, or their model size within 4x) to 80% inside their range, both with each source and
   with each held-out group weighing one (the larger of the two needs; bench_calibrate's
   "distance term" lines, data/runs/calibration.txt, 2026-11-28).  Since the spread between
   sources is measured over every held-out source (below), each split's flagged rows are inside
   at over 80% without a term (GPU family 98%, stack 99%, size decade 99% group-balanced): all
   three are 0, and stay as the place a future split that needs one puts it.  (With the
   calibration sources' spread alone they were GPU 0.072, stack 0.086.) */
#define D_GPU 0.000   /* GPU family not measured (or no measured GEMM rate, or an MFU past the
                         highest measured): the GPU-family split */
#define D_STACK 0.000 /* no stack with these kernels measured: the stack split */
#define D_SHAPE 0.000 /* model size, sequence or scale outside the calibration, or model size or
                         tokens per micro-batch per GPU outside what the class covers: the
                         model-size-decade split */

/* Per class: log(measured / predicted) of held-out predictions.  The centre mu is the
   calibration's: the mean of its sources' means of their leave-one-source-out errors
   (bench_calibrate "range model", the same file and date).  The spread is measured over EVERY
   held-out source of the class (bench_calibrate "range spread over every held-out source"):
   the calibration sources' leave-one-source-out rows and the rows of the public files no fit
   uses (data/runs/public_*.csv under the built-in calibration), each source weighing one:
   within, the pooled sd inside the sources; tau, the root-mean-square of the sources' mean
   offsets from the centre, less the share the within-source spread carries (the class's own
   for 3 or more sources, else 0.130, all classes').  A user's cluster is one more source: the
   calibration's own sources agree within 0.02 in log held out, the public ones (other stacks,
   releases and clusters) scatter by 0.17-0.19, and a range from the first alone held 51% of the
   public sources' runs.  The public files set the width only, never the centre or the
   physics; each is judged by the spread of the others (the bench's last line: 86% of them
   inside, source-balanced).  q is the 80% quantile (Student's t at 0.9 for the degrees of
   freedom of the within-source spread: 1.2837 for 403, 1.2904 for 96, 1.4759 for 5); then
   the model sizes and tokens per micro-batch per GPU the class's calibration rows cover.  A
   class without runs borrows the components of `from` and adds the distance terms `adds`
   (another vendor's kernels: the GPU-family term).

   The Hugging Face classes have a handful of runs each, all from one source (the users' notes):
   their within-source spread is pooled over the three classes, each about its own centre:
   bench_calibrate's "Hugging Face classes' rows" (hf/other/dense's 4 held-out rows and
   hf/nvidia/moe's 2: sum of squares 0.2150 over 4 degrees of freedom) and hf/other/moe's two
   runs below (0.0054, 1 degree of freedom): 5 degrees of freedom, sd 0.210, Student's t 1.4759.
   hf/other/moe's runs are the users' two Qwen3-30B-A3B SFT runs on MI300X (users000:2-3: ZeRO-3
   700 and ZeRO-2 + ep 2 1,759 tokens/s per GPU; not calibration rows, so the built-in
   calibration's predictions of them are held out: with the flags of tests/test_moe.c's
   test_users_hf_moe, 938 and 2,125, logs -0.293 and -0.189, centre -0.241).  Until the ROCm
   attention kernels were priced per stack the pool carried Ring-mini-2.0's residual too (sd
   0.445 for hf/other/dense and hf/nvidia/moe).  Their third MoE
   run, Ring-mini-2.0 (users000:1, 2,600), is left out: its notes leave its MoE kernels and ZeRO
   stage open, and no configuration the flags can name ran it.  Ring-mini-2.0's remote code
   (modeling_bailing_moe_v2.py) under stock Axolotl caps it below the measurement (its MoE blocks'
   measured training loop alone, 19 x 2.0 s per 16 x 8k micro-batch on an H200, is 2,100
   trainable tokens/s per GPU at most), and grouped kernels give 17,700-17,900 (docs/moe.md "What the
   Ring-mini-2.0 run executed"); it tells how far an unknown configuration lies, not how well
   this class is predicted. */
static const struct range_row {
    const char *cls;
    double mu, within, tau, q;
    double min_params, max_params, min_tokens, max_tokens;
    uint32_t rows;
    const char *basis;
    const char *from;
    unsigned adds;
} RANGES[] = {
    {"fused/nvidia/dense", 0.023, 0.119, 0.155, 1.2837, 1.24e8, 1.01e12, 2048, 1.311e5, 342,
     "centre: 342 held-out runs of 7 sources, each weighing one; spread: 24 sources with the "
     "public files", NULL, 0},
    {"fused/nvidia/moe", -0.180, 0.236, 0.119, 1.2904, 3.05e10, 1.17e11, 4096, 3.277e4, 65,
     "centre: 65 held-out runs of one source; spread: 9 sources with the public files", NULL,
     0},
    {"hf/other/dense", -0.039, 0.210, 0.130, 1.4759, 3.21e9, 1.47e10, 3.277e4, 1.311e5, 4,
     "4 held-out runs of one source (users000, MI300X, Axolotl), the Hugging Face runs' pooled "
     "spread and the spread between sources", NULL, 0},
    {"hf/nvidia/moe", -0.254, 0.210, 0.130, 1.4759, 1.08e11, 1.08e11, 4096, 4096, 2,
     "2 held-out runs of one source (users000 Llama-4-Scout QLoRA, H100), the Hugging Face "
     "runs' pooled spread and the spread between sources", NULL, 0},
    {"hf/other/moe", -0.241, 0.210, 0.130, 1.4759, 0, 0, 0, 0, 2,
     "2 runs (users000 Qwen3-30B-A3B, MI300X, Axolotl ZeRO-3 / ZeRO-2 + ep 2), the Hugging Face "
     "runs' pooled spread and the spread between sources", NULL, 0},
    {"fused/other/dense", 0, 0, 0, 0, 0, 0, 0, 0, 0,
     "no held-out run: fused/nvidia/dense with another vendor's kernels (the GPU-family term)",
     "fused/nvidia/dense", TP_DOMAIN_GPU},
    {"fused/other/moe", 0, 0, 0, 0, 0, 0, 0, 0, 0,
     "no held-out run: fused/nvidia/moe with another vendor's kernels (the GPU-family term)",
     "fused/nvidia/moe", TP_DOMAIN_GPU},
    {"hf/nvidia/dense", 0, 0, 0, 0, 0, 0, 0, 0, 0,
     "no held-out run: hf/other/dense on another vendor (the GPU-family term)", "hf/other/dense",
     TP_DOMAIN_GPU},
};
#define N_RANGES (sizeof RANGES / sizeof RANGES[0])

static const char *vendor(const struct tp_gpu *g)
{
    return strncmp(g->label, "NVIDIA ", 7) == 0 ? "nvidia" : "other";
}

static const struct range_row *find(const char *cls)
{
    for (size_t i = 0; i < N_RANGES; i++)
        if (strcmp(RANGES[i].cls, cls) == 0)
            return &RANGES[i];
    return NULL;
}

/* How far x lies outside [lo, hi], in decades, at most 1 (0 inside, or no span known). */
static double decades_out(double x, double lo, double hi)
{
    if (!(lo > 0) || !(hi >= lo) || !(x > 0))
        return 0;
    double d = x < lo ? log10(lo / x) : x > hi ? log10(x / hi) : 0;
    return d < 1 ? d : 1;
}

double tp_range_relative(const struct tp_range *rg)
{
    return exp(rg->q * sqrt(rg->within * rg->within + rg->distance * rg->distance));
}

void tp_time_range(const struct tp_model *m, const struct tp_cluster *c, const struct tp_job *j,
                   const struct tp_layout *l, unsigned domain, struct tp_range *out)
{
    memset(out, 0, sizeof *out);
    const struct tp_stack *s = tp_stack_get(j->framework);
    /* the Hugging Face class: its modules op by op, or an expert loop (HF's, DeepSpeed-MoE's) */
    bool hf = s->eager_modules ||
              (m->n_experts > 0 && tp_job_moe_impl(m, j, l) != TP_MOE_GROUPED);
    tp_snprintf(out->cls, sizeof out->cls, "%s/%s/%s", hf ? "hf" : "fused",
             vendor(&c->gpu), m->n_experts > 0 ? "moe" : "dense");
    const struct range_row *r = find(out->cls), *own = r;
    if (r && r->from)
        r = find(r->from);
    if (!r || !own) { /* every class is in the table; a factor of two either way otherwise */
        out->lo = 0.5;
        out->hi = 2.0;
        out->q = Z80;
        out->sd = out->within = log(2.0) / Z80;
        out->basis = "no class: a factor of two either way";
        return;
    }
    out->rows = own->rows;
    out->basis = own->basis;
    unsigned far = domain | own->adds;
    double var = r->within * r->within + r->tau * r->tau;
    if (far & (TP_DOMAIN_GPU | TP_DOMAIN_MAMF | TP_DOMAIN_MFU))
        var += D_GPU * D_GPU;
    if (far & TP_DOMAIN_STACK)
        var += D_STACK * D_STACK;
    /* the shape: flagged outside the calibration, or outside what the class's own rows cover
       (graded up to one decade out); counted only while its term has a weight (a parameter
       count per evaluation otherwise spent on nothing) */
    double shape = 0;
    if (D_SHAPE > 0) {
        shape = far & (TP_DOMAIN_SIZE | TP_DOMAIN_SEQ | TP_DOMAIN_SCALE) ? 1 : 0;
        if (r == own) {
            struct tp_params p;
            tp_count_params(m, &p);
            double tokens = (double)l->mbs * (double)j->seq / (double)(l->cp ? l->cp : 1);
            shape = fmax(shape, decades_out((double)p.total, r->min_params, r->max_params));
            shape = fmax(shape, decades_out(tokens, r->min_tokens, r->max_tokens));
        }
    }
    var += shape * D_SHAPE * D_SHAPE;
    out->within = r->within;
    out->tau = r->tau;
    out->distance = sqrt(fmax(0, var - r->within * r->within - r->tau * r->tau));
    out->sd = sqrt(var);
    out->q = r->q;
    out->lo = exp(r->mu - r->q * out->sd);
    out->hi = exp(r->mu + r->q * out->sd);
    out->widened = domain != 0 || shape * D_SHAPE > 0; /* the domain's flags, or a wider shape term */
}
