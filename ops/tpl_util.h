/* Internal to ops/ (the operator-library templates: conv2d_nchwc, im2col,
 * depthwise, pool, nn): a step builder that chains schedule primitives by axis name and
 * stops at the first error, and helpers to find stages by tag and to make knob spaces.
 *
 * Usage:
 *   tpl_builder b;
 *   if (tpl_begin(&b, p, "conv2d_nchwc template") != TSL_OK) return ...;
 *   tpl_split(&b, "conv", "x", 6);           // names "x.outer", "x.inner"
 *   tpl_reorder(&b, "conv", 3, (const char *[]){"x.outer", "k", "x.inner"});
 *   return tpl_finish(&b, out);              // frees the schedule on error
 * After a failed step every later call is a no-op and tpl_finish returns the first
 * error, its message prefixed with the template's name and the step's text.
 */
#ifndef TESSEL_OPS_TPL_UTIL_H
#define TESSEL_OPS_TPL_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "schedule/schedule.h"
#include "schedule/template.h"
#include "target/target.h"
#include "tessel/status.h"

/* Longest axis or stage name the builder handles (derived names grow by ".outer" etc.). */
#define TPL_NAME_LEN 160

typedef char tpl_name[TPL_NAME_LEN];

typedef struct tpl_builder {
  tsl_schedule *s;
  tsl_status st;
  const char *who; /* the template's name, for messages */
} tpl_builder;

/* Starts from the initial schedule of p (tsl_schedule_new: every stage compute_root,
 * nothing inlined). Errors: those of tsl_schedule_new. */
tsl_status tpl_begin(tpl_builder *b, const tsl_te_program *p, const char *who);

/* The same from the default schedule (tsl_schedule_create: "elemwise"/"injective"
 * intermediates inlined). */
tsl_status tpl_begin_inlined(tpl_builder *b, const tsl_te_program *p, const char *who);

/* The builder's status; on error frees the schedule. *out receives the schedule on
 * success (owned by the caller) and NULL otherwise. */
tsl_status tpl_finish(tpl_builder *b, tsl_schedule **out);

/* The primitives; no-ops once b->st != TSL_OK. Derived names as schedule.h says:
 * split(x) -> x.outer, x.inner; fuse(a, b) -> a.b.fused; cache_write(s) -> s.local. */
void tpl_split(tpl_builder *b, const char *stage, const char *axis, int64_t factor);
void tpl_fuse(tpl_builder *b, const char *stage, const char *outer, const char *inner);
void tpl_reorder(tpl_builder *b, const char *stage, int n, const char *const *axes);
void tpl_vectorize(tpl_builder *b, const char *stage, const char *axis);
void tpl_unroll(tpl_builder *b, const char *stage, const char *axis);
void tpl_parallel(tpl_builder *b, const char *stage, const char *axis);
void tpl_compute_at(tpl_builder *b, const char *stage, const char *target, const char *axis);
void tpl_compute_inline(tpl_builder *b, const char *stage);
/* cache_write(stage, "local"); the new stage's name goes to out (TPL_NAME_LEN). */
void tpl_cache_write(tpl_builder *b, const char *stage, tpl_name out);
/* cache_read(tensor, "local", readers); the new stage's name goes to out. */
void tpl_cache_read(tpl_builder *b, const char *tensor, int nreaders, const char *const *readers, tpl_name out);

/* Writes "<a><b>" into out (truncated to TPL_NAME_LEN - 1; names that long are refused
 * by the step that uses them). Returns out. */
char *tpl_cat(tpl_name out, const char *a, const char *b);

/* Fuses the leaves names[0..n) (adjacent, outermost first) into one and writes its name
 * to out; with n == 1 copies the name, with n == 0 writes "". */
void tpl_fuse_all(tpl_builder *b, const char *stage, int n, const char *const *names, tpl_name out);

/* The compute op of p tagged `tag` (the first in topological order), or NULL. */
const tsl_te_op *tpl_find_tagged(const tsl_te_program *p, const char *tag);
/* The compute op called `name` among p's stages, or NULL. */
const tsl_te_op *tpl_find_named(const tsl_te_program *p, const char *name);

/* Lanes and vector registers of t: tsl_target_f32_lanes, tsl_target_vector_registers
 * (target/target.h). */
/* L1d / L2 bytes of t (32 KiB / 512 KiB when unknown). */
int64_t tpl_l1_bytes(const tsl_target *t);
int64_t tpl_l2_bytes(const tsl_target *t);

int64_t tpl_min(int64_t a, int64_t b);
int64_t tpl_max(int64_t a, int64_t b);
int64_t tpl_ceil_div(int64_t a, int64_t b);

/* Adds a knob to s from up to 64 candidate values (duplicates dropped) that always
 * include `dflt`. Returns the space's status. */
tsl_status tpl_knob(tsl_config_space *s, const char *name, tsl_knob_kind kind, int n, const int64_t *values,
                    int64_t dflt);

/* The config of s whose knob names[i] has values[i] (n pairs; every knob of s must be
 * named). Errors: TSL_ERR_INVALID naming a knob of s without a value, or the check of
 * tsl_config_check (a value that is not a candidate). */
tsl_status tpl_config_of(const tsl_config_space *s, int n, const char *const *names, const int64_t *values,
                         tsl_config *out);

#endif
