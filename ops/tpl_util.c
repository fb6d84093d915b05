/* Step builder and helpers shared by the operator-library templates (tpl_util.h). */
#include "ops/tpl_util.h"

#include <stdio.h>
#include <string.h>

tsl_status tpl_begin(tpl_builder *b, const tsl_te_program *p, const char *who) {
  b->s = NULL;
  b->who = who;
  b->st = tsl_schedule_new(p, &b->s);
  return b->st;
}

tsl_status tpl_begin_inlined(tpl_builder *b, const tsl_te_program *p, const char *who) {
  b->s = NULL;
  b->who = who;
  b->st = tsl_schedule_create(p, &b->s);
  return b->st;
}

tsl_status tpl_finish(tpl_builder *b, tsl_schedule **out) {
  *out = NULL;
  if (b->st != TSL_OK) {
    tsl_schedule_free(b->s);
    b->s = NULL;
    return b->st;
  }
  *out = b->s;
  b->s = NULL;
  return TSL_OK;
}

/* Prefixes the step's error with the template's name: a refused step is a bug in the
 * template (or the schedule), and the message must say which step of which template. */
static void check(tpl_builder *b, tsl_status st, const char *what, const char *stage, const char *axis) {
  if (st == TSL_OK || b->st != TSL_OK) return;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", tsl_last_error());
  b->st = tsl_error(st, "%s: %s(%s%s%s) refused: %s", b->who, what, stage, axis ? ", " : "", axis ? axis : "", msg);
}

void tpl_split(tpl_builder *b, const char *stage, const char *axis, int64_t factor) {
  if (b->st == TSL_OK) check(b, tsl_schedule_split(b->s, stage, axis, factor), "split", stage, axis);
}

void tpl_fuse(tpl_builder *b, const char *stage, const char *outer, const char *inner) {
  if (b->st == TSL_OK) check(b, tsl_schedule_fuse(b->s, stage, outer, inner), "fuse", stage, outer);
}

void tpl_reorder(tpl_builder *b, const char *stage, int n, const char *const *axes) {
  if (b->st == TSL_OK && n > 1) check(b, tsl_schedule_reorder(b->s, stage, n, axes), "reorder", stage, NULL);
}

void tpl_vectorize(tpl_builder *b, const char *stage, const char *axis) {
  if (b->st == TSL_OK) check(b, tsl_schedule_vectorize(b->s, stage, axis), "vectorize", stage, axis);
}

void tpl_unroll(tpl_builder *b, const char *stage, const char *axis) {
  if (b->st == TSL_OK) check(b, tsl_schedule_unroll(b->s, stage, axis), "unroll", stage, axis);
}

void tpl_parallel(tpl_builder *b, const char *stage, const char *axis) {
  if (b->st == TSL_OK) check(b, tsl_schedule_parallel(b->s, stage, axis), "parallel", stage, axis);
}

void tpl_compute_at(tpl_builder *b, const char *stage, const char *target, const char *axis) {
  if (b->st == TSL_OK) check(b, tsl_schedule_compute_at(b->s, stage, target, axis), "compute_at", stage, axis);
}

void tpl_compute_inline(tpl_builder *b, const char *stage) {
  if (b->st == TSL_OK) check(b, tsl_schedule_compute_inline(b->s, stage), "compute_inline", stage, NULL);
}

void tpl_cache_write(tpl_builder *b, const char *stage, tpl_name out) {
  out[0] = '\0';
  if (b->st != TSL_OK) return;
  const char *name = NULL;
  check(b, tsl_schedule_cache_write(b->s, stage, "local", &name), "cache_write", stage, NULL);
  if (b->st == TSL_OK) snprintf(out, TPL_NAME_LEN, "%s", name);
}

void tpl_cache_read(tpl_builder *b, const char *tensor, int nreaders, const char *const *readers, tpl_name out) {
  out[0] = '\0';
  if (b->st != TSL_OK) return;
  const char *name = NULL;
  check(b, tsl_schedule_cache_read(b->s, tensor, "local", nreaders, readers, &name), "cache_read", tensor, NULL);
  if (b->st == TSL_OK) snprintf(out, TPL_NAME_LEN, "%s", name);
}

char *tpl_cat(tpl_name out, const char *a, const char *b) {
  char tmp[TPL_NAME_LEN];
  snprintf(tmp, sizeof tmp, "%s%s", a, b);
  memcpy(out, tmp, sizeof tmp);
  return out;
}

void tpl_fuse_all(tpl_builder *b, const char *stage, int n, const char *const *names, tpl_name out) {
  out[0] = '\0';
  if (n <= 0) return;
  snprintf(out, TPL_NAME_LEN, "%s", names[0]);
  for (int i = 1; i < n; i++) {
    tpl_name fused;
    tpl_fuse(b, stage, out, names[i]);
    tpl_cat(fused, out, ".");
    tpl_cat(fused, fused, names[i]);
    tpl_cat(out, fused, ".fused");
  }
}

const tsl_te_op *tpl_find_tagged(const tsl_te_program *p, const char *tag) {
  int n = 0;
  tsl_te_op **ops = tsl_te_program_stages(p, &n);
  for (int i = 0; i < n; i++)
    if (ops[i]->tag && strcmp(ops[i]->tag, tag) == 0) return ops[i];
  return NULL;
}

const tsl_te_op *tpl_find_named(const tsl_te_program *p, const char *name) {
  int n = 0;
  tsl_te_op **ops = tsl_te_program_stages(p, &n);
  for (int i = 0; i < n; i++)
    if (ops[i]->name && strcmp(ops[i]->name, name) == 0) return ops[i];
  return NULL;
}

int64_t tpl_l1_bytes(const tsl_target *t) { return t && t->l1d_bytes > 0 ? t->l1d_bytes : 32 * 1024; }
int64_t tpl_l2_bytes(const tsl_target *t) { return t && t->l2_bytes > 0 ? t->l2_bytes : 512 * 1024; }

int64_t tpl_min(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t tpl_max(int64_t a, int64_t b) { return a > b ? a : b; }
int64_t tpl_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

tsl_status tpl_knob(tsl_config_space *s, const char *name, tsl_knob_kind kind, int n, const int64_t *values,
                    int64_t dflt) {
  int64_t v[TSL_MAX_KNOB_VALUES];
  int k = 0;
  v[k++] = dflt;
  for (int i = 0; i < n && k < TSL_MAX_KNOB_VALUES; i++) {
    bool seen = false;
    for (int j = 0; j < k; j++) seen = seen || v[j] == values[i];
    if (!seen) v[k++] = values[i];
  }
  return tsl_space_add_knob(s, name, kind, k, v);
}

tsl_status tpl_config_of(const tsl_config_space *s, int n, const char *const *names, const int64_t *values,
                         tsl_config *out) {
  out->nknobs = s->nknobs;
  for (int i = 0; i < s->nknobs; i++) {
    int j = 0;
    while (j < n && strcmp(names[j], s->knobs[i].name) != 0) j++;
    if (j == n) return tsl_error(TSL_ERR_INVALID, "template: knob %s has no default value", s->knobs[i].name);
    out->values[i] = values[j];
  }
  return tsl_config_check(s, out);
}
