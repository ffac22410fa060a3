/*
 * internal.h - transitional umbrella: the private headers of every floor up to search/ and
 * logs/, for source files written before the re-floor (issue 39) that still include it.  New
 * code includes its own floor's header (docs/design.md, "Source layout: floors");
 * scripts/check-layers.py allows this header only to the files on its short allow-list.
 */
#ifndef TP_INTERNAL_H
#define TP_INTERNAL_H

#include "search_internal.h"
#include "logs_internal.h"

#endif
