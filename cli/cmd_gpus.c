/*
 * cmd_gpus.c - `trainplan gpus`: the accelerator catalog with its datasheet figures.
 */
#include "cli.h"

#include <jansson.h>
#include <stdlib.h>

static void help(void)
{
    printf("usage: trainplan gpus [--format table|json|csv]\n\n"
           "Lists the accelerator catalog: dense peak TFLOP/s per precision, memory, memory\n"
           "bandwidth, scale-up and scale-out bandwidth per GPU per direction, host link, and\n"
           "the datasheet each row comes from.  Keys work with --gpu.\n\noptions:\n");
    cli_print_options(stdout, CMD_GPUS);
}

int cmd_gpus(int argc, char **argv)
{
    struct cli_args a;
    int rc = cli_begin_listing(argc, argv, CMD_GPUS, &a, help, "gpus");
    if (rc >= 0)
        return rc;
    json_t *list = json_array();
    if (a.format == FMT_TABLE)
        printf("%-13s %7s %7s %7s %7s %7s %7s %7s %7s %5s %5s  %s\n", "key", "fp32", "tf32",
               "bf16", "fp8", "HBM GiB", "HBM TB/s", "intra", "inter", "/node", "MAMF", "label");
    for (size_t i = 0; i < tp_gpu_count(); i++) {
        const struct tp_gpu *g = tp_gpu_get(i);
        const double *f = g->peak_flops;
        if (a.format == FMT_TABLE) {
            char mamf[8] = "-";
            if (g->mamf_bf16 > 0)
                snprintf(mamf, sizeof mamf, "%.3f", g->mamf_bf16);
            printf("%-13s %7.1f %7.1f %7.1f %7.1f %7.0f %8.2f %7.0f %7.0f %5u %5s  %s\n", g->key,
                   f[TP_FP32] / 1e12, f[TP_TF32] / 1e12, f[TP_BF16] / 1e12, f[TP_FP8] / 1e12,
                   g->hbm_bytes / 1073741824.0, g->hbm_bw / 1e12, g->intra_bw / 1e9, g->inter_bw / 1e9,
                   g->gpus_per_node, mamf, g->label);
        } else { /* JSON, and the CSV rows (format.c) */
            json_array_append_new(
                list, json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:f,"
                                " s:f, s:I, s:f, s:f, s:s}",
                                "key", g->key, "label", g->label, "fp32_flops", f[TP_FP32],
                                "tf32_flops", f[TP_TF32], "bf16_flops", f[TP_BF16], "fp8_flops",
                                f[TP_FP8], "fp4_flops", f[TP_FP4], "hbm_bytes", g->hbm_bytes,
                                "hbm_bw", g->hbm_bw, "intra_bw", g->intra_bw, "gpus_per_node",
                                (json_int_t)g->gpus_per_node, "inter_bw", g->inter_bw, "host_bw",
                                g->host_bw, "sms", (json_int_t)g->sms, "mamf_bf16", g->mamf_bf16,
                                "mamf_fp8", g->mamf_fp8, "source", g->source));
        }
    }
    if (a.format == FMT_TABLE)
        printf("\nTFLOP/s dense; HBM GiB = 2^30 bytes (an \"80GB\" part holds 80 GiB, 85.9 GB; JSON "
               "hbm_bytes in bytes);\nbandwidths in GB/s (10^9 bytes) per GPU per direction; MAMF = "
               "best measured bf16\n"
               "GEMM fraction of the peak ([MLE]; - = not measured, the calibration's default).\n");
    if (a.format == FMT_CSV)
        return (rc = out_csv_rows(list)) == EXIT_OK ? cli_finish(EXIT_OK) : rc;
    if (a.format != FMT_JSON) {
        json_decref(list);
        return cli_finish(EXIT_OK);
    }
    rc = cli_print_json(json_pack("{s:i, s:o}", "schema_version", TP_SCHEMA_VERSION, "gpus", list), 0);
    return rc == EXIT_OK ? cli_finish(EXIT_OK) : rc;
}
