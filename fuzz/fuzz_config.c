/* fuzz_config.c - config.json reader (tp_model_from_hf_json), then the counts and FLOPs of
   every model it accepts: they must be finite, non-negative and add up. */
#include "fuzz.h"
#include "trainplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tp_model m;
    struct tp_error err;
    if (tp_model_from_hf_json((const char *)data, size, "fuzz", &m, &err) != TP_OK)
        return 0;
    struct tp_params p;
    tp_count_params(&m, &p);
    uint64_t sum = 0;
    for (int i = 0; i < TP_COMP_COUNT; i++)
        sum += p.by_comp[i];
    /* a count above 2^63 prints negative wherever it is formatted as signed */
    if (p.total == 0 || p.total >= (UINT64_C(1) << 63) || sum != p.total || p.active > p.total ||
        p.nonembedding > p.total) {
        fprintf(stderr, "fuzz: inconsistent counts (total %llu, components %llu, active %llu)\n",
                (unsigned long long)p.total, (unsigned long long)sum,
                (unsigned long long)p.active);
        abort();
    }
    struct tp_flops f;
    uint64_t seq = m.default_seq ? m.default_seq : 2048;
    if (tp_flops_per_token(&m, seq, TP_ATTN_CAUSAL, TP_RECOMPUTE_FULL, m.mtp_layers, &f, &err) ==
        TP_OK) {
        fuzz_sane(f.model, 0, "model FLOPs");
        fuzz_sane(f.hardware, 0, "hardware FLOPs");
        fuzz_sane(f.narayanan_2021, 0, "Narayanan FLOPs");
        fuzz_sane(f.torchtitan, 0, "torchtitan FLOPs");
    }
    return 0;
}
