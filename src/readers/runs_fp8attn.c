/*
 * runs_fp8attn.c - whether a runs-file row ran its attention in FP8 (tp_job.fp8_attention):
 * the fp8_attention column, else what the notes quote of the recipe (docs/runs-file.md).
 *
 * The spellings: Megatron-LM / Megatron-Core's flag `--fp8-dot-product-attention`
 * (megatron/training/arguments.py, "Use FP8 for dot product attention"), NeMo's and
 * Megatron-Bridge's config field `fp8_dot_product_attention` (True / False), and the MLPerf
 * NeMo implementations' `FP8_DPA` (NVIDIA config_common_fp8attn.sh `FP8_DPA=True`; AMD's
 * Llama 2 70B LoRA configs `FP8_DPA=0`).
 *
 * A row silent on it keeps 16-bit attention, except where the recipe it ran is known to set it
 * (recorded as an assumption): Megatron-Bridge's Qwen3 MoE MXFP8 recipes for GB200, GB300 and
 * B300 from the 26.06 container on (commit bac3ffeb, "Enable Qwen3 GB200/GB300 MXFP8 CuTeDSL
 * Fusion and Full-Iter CUDA Graphs for 26.06", PR #4249, 2026-06-10:
 * scripts/performance/configs/qwen/qwen3_workload_base_configs.py sets
 * fp8_dot_product_attention=True in QWEN3_30B_A3B_PRETRAIN_CONFIG_{GB200,GB300,B300}_FP8_MX_V1
 * and the Qwen3-235B-A22B GB200/GB300 FP8_MX_V2 configs; later releases keep it in
 * src/megatron/bridge/perf_recipes/qwen/common.py).
 */
#include "runs_internal.h"

#include <string.h>

/* the notes' word on FP8 attention: 1 on, 0 off, -1 silent (an "off" spelling wins) */
static int notes_fp8_attention(const char *notes)
{
    static const char *const OFF[] = {"FP8_DPA=0", "FP8_DPA=False", "FP8_DPA=false",
                                      "fp8_dot_product_attention False",
                                      "fp8_dot_product_attention=False",
                                      "fp8_dot_product_attention: False"};
    static const char *const ON[] = {"FP8_DPA=1", "FP8_DPA=True", "FP8_DPA=true",
                                     "--fp8-dot-product-attention",
                                     "fp8_dot_product_attention True",
                                     "fp8_dot_product_attention=True",
                                     "fp8_dot_product_attention: True"};
    for (size_t i = 0; i < sizeof OFF / sizeof OFF[0]; i++)
        if (strstr(notes, OFF[i]))
            return 0;
    for (size_t i = 0; i < sizeof ON / sizeof ON[0]; i++)
        if (strstr(notes, ON[i]))
            return 1;
    return -1;
}

enum tp_status tp_row_fp8_attention(const struct row *r, struct tp_job *j)
{
    if (*tp_row_cell(r, "fp8_attention"))
        return tp_row_bool(r, "fp8_attention", false, &j->fp8_attention);
    /* from the notes only under an FP8 or FP4 recipe (TE's fp8_dpa is a field of it) */
    enum tp_dtype gd = tp_prec_gemm_dtype(j->precision);
    if (gd != TP_FP8 && gd != TP_FP4)
        return TP_OK;
    int said = notes_fp8_attention(tp_row_cell(r, "notes"));
    if (said == 1) {
        j->fp8_attention = true;
        tp_row_assume(r->run, "FP8 attention (the notes quote FP8_DPA / "
                              "--fp8-dot-product-attention)");
    } else if (said < 0 && tp_row_bridge_qwen3_mxfp8(r, true)) {
        j->fp8_attention = true;
        tp_row_assume(r->run, "FP8 attention (Megatron-Bridge's Qwen3 MXFP8 recipe, "
                              "fp8_dot_product_attention)");
    }
    return TP_OK;
}
