/*
 * moe_skew.c - the busiest expert-parallel rank's load under a learned router: the per-expert
 * skew a router leaves on the tokens one micro-batch routes, summed over the experts a rank
 * holds, and the largest of the ep ranks' sums (docs/moe.md, "Routing skew").  Closed form,
 * pure and allocation-free: the search calls it for every layout.
 *
 * Sources:
 *   [TRTLLM-EP] NVIDIA/TensorRT-LLM docs/source/blogs/tech_blog/
 *            blog4_Scaling_Expert_Parallelism_in_TensorRT-LLM.md, Table 1 (DeepSeek-R1, 256
 *            routed experts, top-8, EP 32 on GB200, one machine-translation dataset, average of
 *            the per-layer and per-iteration figures): by expert slot mean 128, std. dev. 164.1,
 *            imbalance ratio (max / mean - 1) 10.948; by rank (8 experts) mean 1024, std. dev.
 *            491.6, imbalance ratio 1.564.  The same post: the hot experts are "relatively
 *            stable across multiple iterations" and the imbalance "is dataset sensitive".
 *   [MOEZOO-MIX] yanring/Megatron-MoE-ModelZoo best_practice/mixtral/run_mixtral_8x22B.sh
 *            (HEAD e8650517d): Mixtral 8x22B on 16 H100 nodes, dropless "around 445TFLOPS",
 *            the same with --moe-router-force-load-balancing "around 465 TFLOPS" (layout from
 *            runtime_configs/benchmarking/runtime.conf: TP 2, PP 8, VPP 7, EP 8, MBS 1).
 *   [MCORE-CAP] Megatron-Core's capacity factor (moe_utils.py get_capacity,
 *            topk_softmax_with_capacity) and padding (token_dispatcher.py drop_and_pad).
 *   G. Blom, "Statistical Estimates and Transformed Beta-Variables" (Wiley, 1958): the expected
 *            largest of n standard normals ~ Phi^-1((n - 0.375) / (n + 0.25)); Phi^-1 by
 *            M. Abramowitz, I. A. Stegun, "Handbook of Mathematical Functions" (1964), 26.2.23.
 *   L. F. Fenton, "The Sum of Log-Normal Probability Distributions in Scatter Transmission
 *            Systems", IRE Trans. Commun. Syst. 8(1), 1960: a sum of log-normal loads matched by
 *            a log-normal of the same mean and variance.
 */
#include "time_internal.h"

#include <math.h>

/* A domain's routing concentration: a data domain's tokens fall into groups that each pick
   the same k of the E experts, so an expert's load over the mean has variance
   (E/k - 1) * sum of the groups' squared shares (each expert is picked by a group with
   probability k/E).  [TRTLLM-EP] measures, on one dataset through DeepSeek-R1 (E/k = 32), a
   per-expert std/mean of 164.1 / 128 = 1.282; less the sampling noise of 128 tokens per expert
   (1/128), the concentration is (1.282^2 - 1/128) / 31. */
#define SKEW_CONCENTRATION (((164.1 / 128.0) * (164.1 / 128.0) - 1.0 / 128.0) / 31.0)

/* The concentration a router leaves on its own pretraining corpus (CORPUS), from the one
   published A/B of real against forced routing in pretraining, [MOEZOO-MIX]: "Dropless
   training, stable performance should be around 445TFLOPS for H100" and "Dropless training
   with forced balancing, performance should be around 465 TFLOPS for H100", the same launch
   line but --moe-router-force-load-balancing (Mixtral 8x22B, 128 H100, TP 2 + SP, PP 8,
   VPP 7, EP 8, etp 1, mbs 1, seq 4096).  Real routing costs 1 - 445/465 = 4.3% of the step.
   Solved in four steps:
   - the model's forced prediction at that layout: 1,833 tokens/s per GPU (load 1);
   - the load at which the model's dropless prediction is 445/465 of it: 1.065 (the ratio
     reaches 0.955 at 1.0625, where the expert GEMM's 4096 x load rows cross a 128-row tile,
     and holds 0.950-0.955 up to 1.094; the figures are rounded to 5 TFLOPS, so the measured
     ratio lies in 442.5/467.5 to 447.5/462.5 = 0.947-0.968);
   - the spread that load is the largest of 8 ranks for: exp(s z - s^2/2) = 1.065 with
     z = 1.4345 (Blom, n = 8) gives s = z - sqrt(z^2 - 2 ln 1.065) = 0.04459, a rank CV^2
     of exp(s^2) - 1 = 0.001991;
   - one expert per rank (E/ep = 1: the rank's CV is the expert's), E/k - 1 = 3 and
     ep * mbs * etp / (tp * cp) = 4 sequences averaged, less the sampling noise of 4096
     copies per expert: c = (0.001991 - 1/4096) * 4 / 3 = 0.00233.
   That is 1/23 of one dataset's: a router trained on the corpus it routes has spread its
   hot experts over that corpus, where one dataset, a narrow slice of any corpus, concentrates
   them. */
#define SKEW_CONCENTRATION_CORPUS 0.00233

/* Expected largest of n standard normals (Blom): Phi^-1((n - 0.375) / (n + 0.25)), p in
   [0.72, 1) for n >= 2, by Hastings' rational approximation of the upper tail (Abramowitz &
   Stegun, Handbook of Mathematical Functions, 26.2.23: |error| < 4.5e-4), one logarithm: the
   search evaluates it for every layout. */
double tp_moe_expected_max_z(double n)
{
    if (n <= 1)
        return 0;
    double q = 1 - (n - 0.375) / (n + 0.25); /* upper-tail probability */
    double t = sqrt(-2 * log(q));
    return t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                   (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
}

/* The largest of `n` log-normal loads of mean 1 and coefficient of variation `cv`: the
   per-expert loads are log-normal-like (a few hot experts far above the mean, [TRTLLM-EP]'s
   busiest expert at 11.9 times it), and a rank's sum of them is matched by a log-normal of the
   same two moments (Fenton). */
double tp_moe_lognormal_max(double cv, double n)
{
    if (!(cv > 0) || n <= 1)
        return 1;
    double s2 = log1p(cv * cv), s = sqrt(s2);
    return exp(s * tp_moe_expected_max_z(n) - s2 / 2);
}

/* The routing a job assumes: its own, else by the task (pretraining meets the mixed corpus its
   router is trained on; fine-tuning and continued pretraining feed a trained router one
   dataset). */
static enum tp_moe_routing effective_routing(const struct tp_job *j)
{
    if (j->moe_routing != TP_MOE_ROUTING_AUTO)
        return j->moe_routing;
    return j->task == TP_TASK_PRETRAIN ? TP_MOE_ROUTING_CORPUS : TP_MOE_ROUTING_DATASET;
}

/* The busiest EP rank's load over the mean under a learned router (aux-loss or aux-loss-free:
   neither balances a micro-batch, only the long-run mean over the training data); 1 under
   forced balance.
   - Per expert, the squared coefficient of variation is (E/k - 1) * c / n_dom: the
     concentration c averaged over n_dom independent draws.  A router trained on the mixed
     corpus it routes (CORPUS: pretraining; c from [MOEZOO-MIX]) meets each sequence as a draw
     from that corpus, so the sequences the group routes together (below) average
     (n_dom = that); a trained router fed one dataset (DATASET: c from [TRTLLM-EP];
     fine-tuning, continued pretraining of a released model) keeps its hot experts from step
     to step ([TRTLLM-EP]: stable over iterations, dataset sensitive), so nothing averages
     (n_dom = 1).  Plus the sampling noise of the copies each expert receives (Poisson:
     1 / mean).
   - A rank holds E/ep experts: its load is their mean, whose variance is the per-expert one
     over E/ep with the finite-population factor (E - E/ep) / (E - 1) (the ranks' loads sum to
     the total); one rank holding every expert carries exactly the mean.
   - The busiest of the ep ranks: the largest of ep log-normals of that spread. */
double tp_moe_skew(const struct tp_job *j, const struct tp_model *m, const struct tp_layout *l)
{
    double E = m->n_experts, k = m->top_k, ep = l->ep;
    if (E <= 1 || k <= 0 || ep <= 1 || k >= E || j->moe_routing == TP_MOE_ROUTING_FORCED)
        return 1;
    enum tp_moe_routing routing = effective_routing(j);
    double local = E / ep; /* experts per rank */
    double mbs = l->mbs > 0 ? l->mbs : 1, cp = l->cp > 0 ? l->cp : 1;
    /* the sequences the group routes together: Megatron-Core lays the expert ranks out as
       etp-ep-dp-pp over the dense layout's tp-cp-dp-pp (parallel_state.py), so the ep ranks of
       a group span ep * etp ranks of the dense layout, tp * cp of which share a sequence (etp
       below tp puts TP peers, each routing its share, in one group) */
    double etp = l->etp > 0 ? l->etp : l->tp, tp = l->tp > 0 ? l->tp : 1;
    double seqs = ep * mbs * etp / (tp * cp);
    double n_dom = routing == TP_MOE_ROUTING_CORPUS && seqs > 1 ? seqs : 1;
    /* copies a rank routes per micro-batch: its T/tp share under sequence parallelism
       (moe_comm.c tp_moe_routed_tokens), times k; each expert gets ep/E of the group's */
    double routed = mbs * (double)j->seq / cp;
    if (l->sp && l->tp > 1)
        routed /= l->tp;
    double per_expert = routed * k * ep / E;
    double c = routing == TP_MOE_ROUTING_CORPUS ? SKEW_CONCENTRATION_CORPUS : SKEW_CONCENTRATION;
    double cv2 = (E / k - 1) * c / n_dom + (per_expert > 0 ? 1 / per_expert : 0);
    double rank_cv2 = cv2 / local * (E - local) / (E - 1);
    return tp_moe_lognormal_max(sqrt(rank_cv2), ep);
}

/* The load the step and the memory price: an explicit `moe_imbalance` (the CLI's
   --moe-imbalance) or the router's skew (tp_moe_skew); a capacity factor
   drops what lies above it.  Megatron-Core's capacity is per source rank: the router keeps at
   most ceil(cf * T_local * k / E) of its own tokens for each expert ([MCORE-CAP]
   topk_softmax_with_capacity with get_capacity over the rank's num_tokens * topk), so no
   expert receives more than cf times the mean from the group.  Padded
   (--moe-pad-expert-input-to-capacity: MoEAlltoAllTokenDispatcher.preprocess under drop_and_pad
   sets num_out_tokens = capacity * num_experts and every local expert's count to capacity * tp
   * ep), every expert runs and every rank sends exactly that capacity, whatever the routing:
   the load is the factor itself, below or above the skew. */
double tp_moe_load(const struct tp_job *j, const struct tp_model *m, const struct tp_layout *l)
{
    double cf = j->moe_capacity;
    if (cf > 0 && j->moe_pad_capacity)
        return cf;
    double imb = j->moe_imbalance >= 1 ? j->moe_imbalance : tp_moe_skew(j, m, l);
    return cf > 0 && cf < imb ? cf : imb;
}

double tp_moe_busiest_load(const struct tp_model *m, const struct tp_job *j,
                           const struct tp_layout *l, enum tp_moe_routing *routing)
{
    if (routing)
        *routing = effective_routing(j);
    return tp_moe_load(j, m, l);
}
