/* Templates a user brings at run time (tunecli tune-op --file / --schedule), registered
 * in the template registry (schedule/template.h) so the tuner searches them exactly like
 * the built-in ones: same runner and output checks, same cost model, same records.
 *
 * - A schedule text (the form of schedule.h, a --schedule file) is a template of one
 *   config: tune-op measures and records it like any candidate, the user's starting point
 *   that the searched templates must beat.
 * - A DSL op with a schedule block (docs/dsl.md section 11) is a template whose knobs and
 *   steps are the block's (ops/user/dsl_template.c).
 *
 * Both are keyed by the operator's name: a template's callbacks receive only the program,
 * whose name is its op's (dsl/te.h), so one template of each kind per operator and
 * process. Both live for the process (the runner's forked workers inherit them).
 */
#ifndef TESSEL_OPS_USER_USER_TEMPLATE_H
#define TESSEL_OPS_USER_USER_TEMPLATE_H

#include "dsl/parser.h"
#include "schedule/template.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TSL_OK when s lowers as tsl_build lowers it for t (t->vector_bits; a vector_width step
 * must be a width t offers), else the lowering's error (TSL_ERR_SCHEDULE: unroll or
 * vectorize limits, a width wider than t's; TSL_ERR_UNSUPPORTED: a width t lacks). The
 * check of user schedules (schedule files, schedule blocks) before they are built; the IR
 * lives in the current arena. t NULL: the default lowering options. */
tsl_status tsl_user_schedule_lowers(const tsl_schedule *s, const tsl_target *t);

/* The version of a user's template made from `text` (its schedule text, or its op's DSL
 * text): FNV-1a (64-bit) of the bytes, masked to a non-negative int. The space hash
 * covers it (schedule/template.h), so records of another text never apply. */
int tsl_user_template_version(const char *text);

/* Registers the schedule text `text` (read from `filename`, named in its errors) as the
 * template "OP.schedule_text" of operator op (a registry name, ops/registry.h): no knobs,
 * its one config applies the text to the initial schedule (tsl_schedule_from_text_file:
 * errors at FILE:LINE:COL). Its version is a hash of the text, so records of another
 * text never match. Registering the same text again returns the first template.
 * Errors: TSL_ERR_INVALID (NULL arguments, another text for op in this process, the
 * registry full), TSL_ERR_NOMEM. */
tsl_status tsl_user_text_template(const char *op, const char *text, const char *filename, const tsl_template **out);

/* Registers the schedule block of def (an op registered with tsl_op_register_user, so
 * that the tuner instantiates it by name) as the template "OP.dsl": its config space
 * is the block's knobs (split -> "sp", reorder -> "re", annotate -> "an", list -> "ot"),
 * its default config the first candidate of each (split by the divisors: 1; annotate:
 * off), and apply() replays the block's steps on the default schedule
 * (tsl_schedule_create) with the config's values. The version is a hash of the op's text:
 * records of an edited op never match. Errors (located at the knob or step,
 * FILE:LINE:COL, as the DSL's) come from space() and apply() once shapes are known: a
 * split knob with no divisor in range or more than TSL_MAX_KNOB_VALUES candidates, a
 * listed split factor that does not divide the axis' extent (unless divide = false) or
 * exceeds it, a step that does not apply. Errors here: TSL_ERR_INVALID (NULL, def
 * without a schedule block, not registered, another def of that name, registry full),
 * TSL_ERR_NOMEM. */
tsl_status tsl_user_dsl_template(const tsl_dsl_op *def, const tsl_template **out);

#ifdef __cplusplus
}
#endif
#endif
