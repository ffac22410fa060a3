/*
 * trainplan.h - the whole public API of libtrainplan, in topical headers (include/trainplan/).
 *
 * libtrainplan plans large-language-model training runs: exact parameter and FLOP counts from a
 * model description (built-in preset, Hugging Face config.json, or shape fields).  Later modules
 * (memory, time, search, calibration) build on the same model description.
 *
 * Ownership: every object is a plain value owned by the caller; the library keeps no global
 * mutable state, never allocates inside the evaluation functions, never prints and never exits.
 * Fallible functions return enum tp_status and, on failure, fill the caller's struct tp_error
 * with a one-line message (no trailing newline).  The only functions that read files are
 * tp_model_from_hf_config() and tp_model_from_hf_json(); they release everything they allocate
 * before returning.
 *
 * Units are in the field names or comments: counts are plain numbers of parameters, FLOPs are
 * floating-point operations (a multiply-add is 2), lengths are tokens.
 */
#ifndef TRAINPLAN_H
#define TRAINPLAN_H

#include "trainplan/base.h"    /* version, TP_API, limits, status, struct tp_error */
#include "trainplan/model.h"   /* model description, presets, parameters, FLOPs */
#include "trainplan/cluster.h" /* GPU catalog, cluster, job, stacks, parallel layout */
#include "trainplan/results.h" /* memory, fixes, calibration, time, tp_evaluate */
#include "trainplan/runs.h"    /* measured runs, validation, the calibration fit, training logs */
#include "trainplan/search.h"  /* layout search, model sizing */
#include "trainplan/io.h"      /* checkpoints, requests, JSON, tp_call_json, ABI, SVG */

#endif /* TRAINPLAN_H */
