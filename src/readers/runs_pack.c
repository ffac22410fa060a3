/*
 * runs_pack.c - how full a packed row's sequences are (the runs file's `pack_fill` column,
 * docs/runs-file.md).
 *
 * A row of a packing stack states the sequence's capacity (`seq_len` = ms-swift's max_length),
 * but its packer fills each sequence with whole samples only: ms-swift bins the samples by
 * best-fit decreasing, 128 at a time, and concatenates each bin without padding it to
 * max_length ([SWIFT-PACK] swift/llm/dataset/utils.py PackingDataset, swift/llm/template/
 * base.py packing_row and the packing-mode data collator; Megatron-SWIFT pads the
 * concatenation to a multiple of 128 only).  With samples that are long next to max_length a
 * sequence holds far fewer tokens than its capacity, and a step fewer than global_batch x
 * max_length: LongAlpaca-12k's samples of 9,942 +- 3,417 tokens fill 16,384-token packs to
 * about 0.86 ([SWIFT-DATA]; data/runs/pack_fill.py).  `pack_fill` is the mean tokens per packed
 * sequence over seq_len; the job's sequence becomes that mean, so that the step's tokens, its
 * GEMMs and its measured tokens/s all count the tokens the step held.  The memory is then
 * priced at the mean pack too, while the peak comes with the fullest pack (up to seq_len): a
 * few percent of activation memory that a packed row's memory comparison does not see.
 */
#include "runs_internal.h"

#include <math.h>
#include <stdio.h>

/* Megatron-SWIFT pads each packed sequence to a multiple of 128 tokens (the data collator's
   padding_to = ceil(len / 128) * 128, [SWIFT-PACK] swift/llm/template/base.py); rounding the
   mean to it also keeps the sequence divisible by TP x CP under sequence parallelism. */
#define TP_PACK_ROUND 128u

enum tp_status tp_row_pack_fill(const struct row *r, struct tp_job *j)
{
    double fill;
    TRY(tp_row_real(r, "pack_fill", &fill));
    if (!isfinite(fill))
        return TP_OK;
    if (!(fill > 0 && fill <= 1))
        return tp_fail(r->err, TP_EINVAL,
                       "pack_fill \"%s\" is out of range (0 < f <= 1: the mean tokens per "
                       "packed sequence over seq_len)",
                       tp_row_cell(r, "pack_fill"));
    uint64_t cap = j->seq;
    double mean = fill * (double)cap;
    uint64_t seq = (uint64_t)llround(mean / TP_PACK_ROUND) * TP_PACK_ROUND;
    seq = seq < TP_PACK_ROUND ? TP_PACK_ROUND : seq;
    seq = seq > cap ? cap : seq;
    if (j->doc_len > seq)
        return tp_fail(r->err, TP_EINVAL,
                       "doc_len %u exceeds the mean packed sequence pack_fill x seq_len = %llu "
                       "tokens (a packed document is at most one sequence)",
                       j->doc_len, (unsigned long long)seq);
    j->seq = seq;
    char text[160];
    snprintf(text, sizeof text,
             "packed sequences of %llu tokens on average (pack_fill %.3g of seq_len %llu)",
             (unsigned long long)seq, fill, (unsigned long long)cap);
    tp_row_assume(r->run, text);
    return TP_OK;
}
