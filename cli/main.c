/*
 * main.c - `trainplan`: dispatches subcommands; the only place that exits.
 */
#include "cli.h"

#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: trainplan <command> [options]\n"
            "\n"
            "Plans LLM training runs from a model (built-in preset, Hugging Face config.json or\n"
            "shape flags).\n"
            "\n"
            "commands:\n"
            "  params MODEL    parameter counts (total, active, by component and block) and\n"
            "                  training FLOPs per token\n"
            "  memory MODEL    per-GPU memory of a training run: does it fit, what takes the\n"
            "                  memory, and which change makes it fit\n"
            "  estimate MODEL  memory and time of a training run: step time broken down,\n"
            "                  tokens/s, MFU, wall-clock, GPU-hours and cost\n"
            "  search MODEL    the fastest parallel layouts that fit, ranked, with the counts\n"
            "                  of layouts rejected by each constraint\n"
            "  validate RUNS.csv...   every measured run against its prediction, with\n"
            "                  errors by source, GPU and framework\n"
            "  calibrate RUNS.csv...  fits the time model's efficiencies to measured runs\n"
            "                  and writes a calibration file\n"
            "  size            the model to train for a FLOP budget, or for a cluster and a\n"
            "                  deadline: scaling-law optima and ranked concrete shapes\n"
            "  logs FILE...    training logs (Megatron, HF/Axolotl/TRL, torchtitan, nanoGPT,\n"
            "                  llm.c, JSON run logs): steady-state step time, tokens/s, MFU,\n"
            "                  time for a token budget, and runs-file rows for calibrate\n"
            "  export MODEL --to FORMAT   the planned layout as the framework's files:\n"
            "                  DeepSpeed JSON, Axolotl YAML, Megatron arguments, torchrun/Slurm\n"
            "  checkpoint PATH [MODEL]   safetensors files, shard index, DeepSpeed ZeRO\n"
            "                  folder: tensors, faults (stubs, missing shards, duplicates,\n"
            "                  truncation), match with the model, and the saves' sizes\n"
            "  models          the built-in presets with their sources\n"
            "  gpus            the accelerator catalog\n"
            "\n"
            "MODEL is a preset name (see `trainplan models`), a config.json file, or a directory\n"
            "holding one; shape flags alone describe a hypothetical model.\n"
            "\n"
            "  trainplan <command> --help   options of a command\n"
            "  trainplan --version          version\n"
            "\n"
            "exit status: 0 success; 1 the answer is no (does not fit, no feasible layout,\n"
            "problems found in a checkpoint);\n"
            "2 usage, input or I/O error.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_error("no command given (commands: params, memory, estimate, search, validate, calibrate, logs, export, size, checkpoint, models, gpus; see trainplan "
                  "--help)");
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return cli_finish(EXIT_OK);
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("trainplan %s (JSON schema %d)\n", TP_VERSION, TP_SCHEMA_VERSION);
        return cli_finish(EXIT_OK);
    }
    if (strcmp(cmd, "params") == 0)
        return cmd_params(argc - 2, argv + 2);
    if (strcmp(cmd, "models") == 0)
        return cmd_models(argc - 2, argv + 2);
    if (strcmp(cmd, "memory") == 0)
        return cmd_memory(argc - 2, argv + 2);
    if (strcmp(cmd, "estimate") == 0)
        return cmd_estimate(argc - 2, argv + 2);
    if (strcmp(cmd, "search") == 0)
        return cmd_search(argc - 2, argv + 2);
    if (strcmp(cmd, "validate") == 0)
        return cmd_validate(argc - 2, argv + 2);
    if (strcmp(cmd, "calibrate") == 0)
        return cmd_calibrate(argc - 2, argv + 2);
    if (strcmp(cmd, "gpus") == 0)
        return cmd_gpus(argc - 2, argv + 2);
    if (strcmp(cmd, "logs") == 0)
        return cmd_logs(argc - 2, argv + 2);
    if (strcmp(cmd, "export") == 0)
        return cmd_export(argc - 2, argv + 2);
    if (strcmp(cmd, "size") == 0)
        return cmd_size(argc - 2, argv + 2);
    if (strcmp(cmd, "checkpoint") == 0)
        return cmd_checkpoint(argc - 2, argv + 2);
    cli_error("unknown command \"%s\" (commands: params, memory, estimate, search, validate, calibrate, logs, export, size, checkpoint, models, gpus; see trainplan "
              "--help)", cmd);
    return EXIT_USAGE;
}
