/*
 * runs_graphs.c - a runs-file row's CUDA graphs (docs/runs-file.md): the cuda_graphs column,
 * else what the notes quote of the run's configuration.
 *
 * The names the notes carry (Megatron-Core and the recipes around it):
 *   - full iteration: MLPerf's FULL_CUDA_GRAPH=1 / True (NVIDIA's NeMo submissions,
 *     config_common_cg.sh), Megatron-Core --cuda-graph-impl full_iteration (since PR #4292,
 *     2026-05) or the older --cuda-graph-scope full_iteration, "full-iteration CUDA graphs",
 *     Megatron-Bridge's "Full-Iter CUDA Graphs";
 *   - per layer: --enable-cuda-graph / enable_cuda_graph True (Megatron-Core's local
 *     CudaGraphManager), --external-cuda-graph and cuda_graph_impl transformer_engine (TE
 *     make_graphed_callables), --cuda-graph-impl local, MLPerf's MCORE_CUDA_GRAPH=1, NeMo /
 *     Megatron-Bridge "cuda_graphs true";
 *   - none: "no CUDA graphs", "CUDA graphs off", "cuda_graphs false".
 * A per-layer capture scoped to the MoE router alone (cuda_graph_scope [moe_router,
 * moe_preprocess], no attn) leaves the block's attention and MLP eager: host.c prices layer
 * graphs as the whole dense part of the block captured, so such rows keep none.  A full
 * iteration over a dropless MoE does not capture (src/plan/stack.c): such a row keeps its
 * per-layer graphs.  Only Megatron-Core rows (framework_key nemo / megatron) read the notes.
 */
#include "runs_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool has(const char *notes, const char *s)
{
    return strstr(notes, s) != NULL;
}

static enum tp_cuda_graphs from_notes(const char *n)
{
    if (has(n, "no CUDA graphs") || has(n, "CUDA graphs off") || has(n, "cuda_graphs false"))
        return TP_CUDA_GRAPHS_NONE;
    bool full_off = has(n, "FULL_CUDA_GRAPH=0");
    if (!full_off && (has(n, "FULL_CUDA_GRAPH=1") || has(n, "FULL_CUDA_GRAPH=True") ||
                      has(n, "full_iteration") || has(n, "full-iteration CUDA graph") ||
                      has(n, "Full-Iter CUDA Graph")))
        return TP_CUDA_GRAPHS_FULL;
    bool layer = has(n, "enable-cuda-graph") || has(n, "enable_cuda_graph") ||
                 has(n, "external-cuda-graph") || has(n, "cuda-graph-impl local") ||
                 has(n, "cuda-graph-impl transformer_engine") ||
                 has(n, "cuda_graph_impl transformer_engine") ||
                 has(n, "cuda_graph_impl local") || has(n, "MCORE_CUDA_GRAPH=1") ||
                 has(n, "cuda_graphs true");
    if (layer && has(n, "moe_router") && !has(n, "attn"))
        return TP_CUDA_GRAPHS_NONE; /* the router alone in the graph: see the header */
    return layer ? TP_CUDA_GRAPHS_LAYER : TP_CUDA_GRAPHS_NONE;
}

enum tp_status tp_row_cuda_graphs(const struct row *r, struct tp_job *j)
{
    static const char *const names[] = {"none", "layer", "full", "local", "transformer_engine",
                                        "full_iteration"};
    static const enum tp_cuda_graphs value[] = {TP_CUDA_GRAPHS_NONE,  TP_CUDA_GRAPHS_LAYER,
                                                TP_CUDA_GRAPHS_FULL,  TP_CUDA_GRAPHS_LAYER,
                                                TP_CUDA_GRAPHS_LAYER, TP_CUDA_GRAPHS_FULL};
    int i;
    TRY(tp_row_enum(r, "cuda_graphs", names, sizeof names / sizeof names[0], &i));
    if (i >= 0) {
        j->cuda_graphs = value[i];
        return TP_OK;
    }
    if (j->framework != TP_FW_MEGATRON)
        return TP_OK;
    enum tp_cuda_graphs g = from_notes(tp_row_cell(r, "notes"));
    bool dropless = strtol(tp_row_cell(r, "moe_num_experts"), NULL, 10) > 1 &&
                    !j->moe_pad_capacity;
    if (g == TP_CUDA_GRAPHS_FULL && dropless) {
        g = TP_CUDA_GRAPHS_LAYER;
        tp_row_assume(r->run, "per-layer CUDA graphs: a full iteration does not capture a "
                              "dropless MoE");
    } else if (g != TP_CUDA_GRAPHS_NONE) {
        tp_row_assume(r->run, g == TP_CUDA_GRAPHS_FULL ? "full-iteration CUDA graphs (notes)"
                                                       : "per-layer CUDA graphs (notes)");
    }
    j->cuda_graphs = g;
    return TP_OK;
}
