/* libFuzzer harness: the DSL front-end (docs/fuzzing.md).
 *
 * Each input is DSL text (docs/dsl.md). It is parsed; for each op definition (the
 * first MAX_OPS) every input gets small extents (all 2, then all 3: equal extents
 * satisfy most size unifications), scalar parameters without a default get 1, and the
 * op is instantiated. An instance that passes tsl_te_check gets its default schedule,
 * is lowered to loop IR, and, when its arithmetic is small, evaluated by the TE
 * interpreter, which must find every read in bounds (tsl_te_check proved them so).
 * Errors are fine; crashes, leaks, UBSan reports and a read outside a tensor that the
 * check let through are not. Seeds: the registry's operators and docs/dsl.md. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/parser.h"
#include "dsl/te.h"
#include "dsl/te_interp.h"
#include "ir/arena.h"
#include "schedule/lower.h"
#include "schedule/schedule.h"
#include "tessel/tensor.h"

#define MAX_OPS 4
#define MAX_TEXT 16384
#define MAX_INTERP_WORK (INT64_C(1) << 16)
#define MAX_TENSORS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Points the interpreter visits: per stage, its output's axes times its reduction. */
static int64_t interp_work(const tsl_te_program *p) {
  int n;
  tsl_te_op **stages = tsl_te_program_stages(p, &n);
  int64_t total = 0;
  for (int i = 0; i < n; i++) {
    int64_t w = 1;
    for (int a = 0; a < stages[i]->naxis; a++)
      if (__builtin_mul_overflow(w, stages[i]->axis[a].extent, &w)) return INT64_MAX;
    for (int a = 0; a < stages[i]->nreduce; a++)
      if (__builtin_mul_overflow(w, stages[i]->reduce_axis[a].extent, &w)) return INT64_MAX;
    if (__builtin_add_overflow(total, w, &total)) return INT64_MAX;
  }
  return total;
}

static void interpret(const tsl_te_program *p) {
  int n = p->ninputs + p->noutputs;
  if (n > MAX_TENSORS || interp_work(p) > MAX_INTERP_WORK) return;
  tsl_tensor *t[MAX_TENSORS] = {0};
  bool ok = true;
  for (int i = 0; i < n && ok; i++) {
    const tsl_buffer *b = i < p->ninputs ? p->inputs[i]->buf : p->outputs[i - p->ninputs]->buf;
    tsl_dtype dt = tsl_te_dtype(b->dtype);
    ok = tsl_tensor_new(dt, b->ndim, b->shape, &t[i]) == TSL_OK;
    if (ok && i < p->ninputs)
      ok = tsl_tensor_fill_random(t[i], (uint64_t)i, dt.code == TSL_DT_FLOAT ? -2.0 : 0.0, 3.0) == TSL_OK;
  }
  if (ok) {
    tsl_status st = tsl_te_interpret(p, (const tsl_tensor *const *)t, t + p->ninputs);
    if (st == TSL_ERR_INVALID && strstr(tsl_last_error(), "out of bounds")) {
      fprintf(stderr, "fuzz_dsl: tsl_te_check passed a program the interpreter reads out of bounds: %s\n",
              tsl_last_error());
      abort();
    }
  }
  for (int i = 0; i < n; i++) tsl_tensor_free(t[i]);
}

/* Instantiates def with every extent `extent`; lowers and interprets what checks. */
static void try_instance(const tsl_dsl_op *def, int64_t extent) {
  int nin = tsl_dsl_op_ninputs(def), npar = tsl_dsl_op_nparams(def);
  if (nin > MAX_TENSORS || npar > 16) return;
  int64_t dims[MAX_TENSORS][TSL_MAX_NDIM];
  const int64_t *shapes[MAX_TENSORS];
  int ndims[MAX_TENSORS];
  for (int i = 0; i < nin; i++) {
    const tsl_dsl_input_info *in = tsl_dsl_op_input(def, i);
    ndims[i] = in->ndim;
    if (in->ndim > TSL_MAX_NDIM) return;
    for (int d = 0; d < in->ndim; d++) dims[i][d] = extent;
    shapes[i] = dims[i];
  }
  tsl_dsl_param_value params[16];
  int ngiven = 0;
  for (int i = 0; i < npar; i++) {
    const tsl_dsl_param_info *pi = tsl_dsl_op_param(def, i);
    if (pi->has_default) continue;
    params[ngiven++] = pi->kind == TSL_DSL_PARAM_INT ? tsl_dsl_int_param(pi->name, 1) : tsl_dsl_float_param(pi->name, 1.0);
  }
  tsl_te_program *p = NULL;
  if (tsl_dsl_instantiate(def, nin, shapes, ndims, ngiven, params, &p) != TSL_OK) return;
  if (tsl_te_check(p) != TSL_OK) return;
  tsl_schedule *s = NULL;
  if (tsl_schedule_create(p, &s) == TSL_OK) {
    tsl_func *f = NULL;
    (void)tsl_lower(s, "fuzz_kernel", &f);
    tsl_schedule_free(s);
  }
  interpret(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > MAX_TEXT) return 0;
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_dsl_module *m = NULL;
  if (tsl_dsl_parse(text, "fuzz.tsl", &m) == TSL_OK) {
    int n = tsl_dsl_module_count(m);
    for (int i = 0; i < n && i < MAX_OPS; i++) {
      try_instance(tsl_dsl_module_op(m, i), 2);
      try_instance(tsl_dsl_module_op(m, i), 3);
    }
    tsl_dsl_module_free(m);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  free(text);
  return 0;
}
