/*
 * trainplan/base.h - the version, the export macro, limits, status codes and struct tp_error:
 * what every other header of libtrainplan uses.
 *
 * Part of the public API; include "trainplan.h" for all of it.
 */
#ifndef TRAINPLAN_BASE_H
#define TRAINPLAN_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_VERSION "0.1.0"
/* What a declaration of the public API carries: exported from libtrainplan.so, which builds every
   other symbol hidden (-fvisibility=hidden). */
#if defined(__GNUC__) || defined(__clang__)
#define TP_API __attribute__((visibility("default")))
#else
#define TP_API
#endif
/* Version of the JSON documents the CLI writes; bumped on any incompatible key change. */
#define TP_SCHEMA_VERSION 1
/* Most transformer blocks a model may have (the largest published models have < 200). */
#define TP_MAX_LAYERS 1024
/* Most virtual pipeline stages (pp * vpp) an explicit pipeline layout may list. */
#define TP_MAX_VSTAGES 256

/* Status codes; append only. */
enum tp_status {
    TP_OK = 0,
    TP_EINVAL,       /* an input value is missing, out of range or inconsistent */
    TP_ENOTFOUND,    /* a named thing (preset, file) does not exist */
    TP_EUNSUPPORTED, /* a valid input the library does not model (e.g. an unknown model_type) */
    TP_EIO,          /* a file could not be read */
    TP_ENOMEM        /* an allocation failed (file readers, the calibration fit) */
};

struct tp_error {
    char msg[512]; /* one line, no trailing newline; empty when no error */
    char field[32]; /* the input field the error is about, named as the CLI's option without
                       its dashes and as a binding's keyword ("gbs", "gas"); empty when none */
};

#ifdef __cplusplus
}
#endif
#endif /* TRAINPLAN_BASE_H */
