/*
 * search_internal.h - what the search floor (search, nearest layouts, stacks, size, scaling,
 * suggestions) shares.  Not installed, not public.
 */
#ifndef TP_SEARCH_INTERNAL_H
#define TP_SEARCH_INTERNAL_H

#include "data_internal.h"

/* suggest.c: fills one setting of a change (struct tp_setting); what the fit hint's settings
   save. */
extern const char TP_REASON_RECOMPUTE[], TP_REASON_FUSED_LOSS[];
void tp_setting_set(struct tp_setting *s, const char *field, const char *value, uint32_t dp,
                    const char *reason);

#endif
