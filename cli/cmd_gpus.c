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
    if (a.format != FMT_TABLE) { /* the library's document (tp_json_gpus), as the bindings get */
        json_t *doc = tp_json_gpus();
        if (!doc) {
            cli_error("out of memory");
            return EXIT_USAGE;
        }
        if (a.format == FMT_CSV) {
            json_t *list = json_incref(json_object_get(doc, "gpus"));
            json_decref(doc);
            rc = out_csv_rows(list);
        } else {
            rc = cli_print_json(doc, 0);
        }
        return rc == EXIT_OK ? cli_finish(EXIT_OK) : rc;
    }
    printf("%-13s %7s %7s %7s %7s %7s %7s %7s %7s %5s %5s  %s\n", "key", "fp32", "tf32", "bf16",
           "fp8", "HBM GiB", "HBM TB/s", "intra", "inter", "/node", "MAMF", "label");
    for (size_t i = 0; i < tp_gpu_count(); i++) {
        const struct tp_gpu *g = tp_gpu_get(i);
        const double *f = g->peak_flops;
        char mamf[8] = "-";
        if (g->mamf_bf16 > 0)
            snprintf(mamf, sizeof mamf, "%.3f", g->mamf_bf16);
        printf("%-13s %7.1f %7.1f %7.1f %7.1f %7.0f %8.2f %7.0f %7.0f %5u %5s  %s\n", g->key,
               f[TP_FP32] / 1e12, f[TP_TF32] / 1e12, f[TP_BF16] / 1e12, f[TP_FP8] / 1e12,
               g->hbm_bytes / 1073741824.0, g->hbm_bw / 1e12, g->intra_bw / 1e9, g->inter_bw / 1e9,
               g->gpus_per_node, mamf, g->label);
    }
    printf("\nTFLOP/s dense; HBM GiB = 2^30 bytes (an \"80GB\" part holds 80 GiB, 85.9 GB; JSON "
           "hbm_bytes in bytes);\nbandwidths in GB/s (10^9 bytes) per GPU per direction; MAMF = "
           "best measured bf16\n"
           "GEMM fraction of the peak ([MLE]; - = not measured, the calibration's default).\n");
    return cli_finish(EXIT_OK);
}
