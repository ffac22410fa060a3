/*
 * stack_rules.h - the training frameworks' own validity rules for a layout (stack_rules.c):
 * one table, each rule with the stacks it binds, the condition, the framework's message and
 * the source file and line it comes from.  Not installed; the tests read the table.
 */
#ifndef TP_STACK_RULES_H
#define TP_STACK_RULES_H

#include "trainplan.h"

#include <stdbool.h>
#include <stddef.h>

/* Bit of a framework in tp_stack_rule.stacks. */
#define TP_FW_BIT(fw) (1u << (unsigned)(fw))

struct tp_stack_rule {
    const char *id;      /* "megatron-experts-ep": the name errors and docs use */
    unsigned stacks;     /* TP_FW_BIT of every --framework the rule binds */
    bool fix;            /* the framework (or its documentation) turns the setting on itself:
                            tp_stack_rules_fix does the same instead of refusing */
    const char *field;   /* the input the rule is about (tp_error.field), or NULL */
    /* true when (m, j, l) breaks the rule; `why` (may be NULL) gets the figures */
    bool (*broken)(const struct tp_model *m, const struct tp_job *j, const struct tp_layout *l,
                   char *why, size_t len);
    const char *message; /* what the framework asserts, in trainplan's option names */
    const char *source;  /* "NVIDIA/Megatron-LM@67f3515c megatron/training/arguments.py:1028" */
};

/* The table, in order. */
size_t tp_stack_rule_count(void);
const struct tp_stack_rule *tp_stack_rule_at(size_t i);
/* By id; NULL when unknown. */
const struct tp_stack_rule *tp_stack_rule_find(const char *id);

/* The first rule of j->framework that (m, j, l) breaks, as TP_EINVAL naming the rule and its
   source; TP_OK when none.  A fix rule left broken (tp_stack_rules_fix not applied, or undone
   by the caller) refuses too. */
enum tp_status tp_stack_rules_check(const struct tp_model *m, const struct tp_job *j,
                                    const struct tp_layout *l, struct tp_error *err);
/* Applies the fix rules of j->framework to `l` (Megatron's sequence parallelism for an MoE
   model with tensor parallelism); returns how many settings it changed. */
unsigned tp_stack_rules_fix(const struct tp_model *m, const struct tp_job *j,
                            struct tp_layout *l);

#endif
