/*
 * reports_internal.h - the JSON documents floor (report_*.c: the results as jansson documents
 * for Python, the page and the CLI's --format json): its files share nothing beyond the floors
 * below.  Not installed, not public.
 */
#ifndef TP_REPORTS_INTERNAL_H
#define TP_REPORTS_INTERNAL_H

#include "fit_internal.h"
#include "logs_internal.h"

#endif
