/* tunecli run-op OP: JIT-compiles the operator with its schedule, runs it on seeded
 * random inputs, checks every output element against the direct interpretation of the
 * tensor expression (dsl/te_interp.h, float64), and reports the time per call. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "dsl/te_interp.h"
#include "ir/arena.h"
#include "op_args.h"
#include "runtime/module.h"
#include "target/target.h"
#include "tessel/runtime.h"
#include "tessel/tensor.h"
#include "tunecli.h"

enum { MAX_ARGS = 16, MAX_REPEAT = 1000 };

static tsl_dtype dtype_of(tsl_type t) {
  tsl_dtype d = {TSL_DT_FLOAT, (uint8_t)t.bits};
  if (t.code == TSL_TYPE_BOOL) d = (tsl_dtype){TSL_DT_BOOL, 8};
  else if (t.code == TSL_TYPE_INT) d.code = TSL_DT_INT;
  else if (t.code == TSL_TYPE_UINT) d.code = TSL_DT_UINT;
  return d;
}

int tunecli_run_op(int argc, char **argv) {
  const char *cmd = "run-op";
  char *rest[64];
  int nrest = 0;
  if (argc > 60) {
    fprintf(stderr, "tunecli run-op: error: too many arguments\n");
    return 2;
  }
  op_args a;
  if (!op_args_parse(cmd, argc, argv, &a, rest, &nrest)) {
    op_args_free(&a);
    return 2;
  }
  uint64_t seed = 1;
  double tolerance = 1e-5;
  int repeat = 5;
  bool check = true;
  for (int i = 0; i < nrest; i++) {
    if (strcmp(rest[i], "--no-check") == 0) {
      check = false;
      continue;
    }
    bool is_seed = strcmp(rest[i], "--seed") == 0, is_tol = strcmp(rest[i], "--tolerance") == 0;
    bool is_rep = strcmp(rest[i], "--repeat") == 0;
    if (is_seed || is_tol || is_rep) {
      char *end = NULL;
      const char *v = i + 1 < nrest ? rest[++i] : "";
      errno = 0;
      unsigned long long r = 0;
      if (is_seed) seed = strtoull(v, &end, 10);
      else if (is_rep) r = strtoull(v, &end, 10);
      else tolerance = strtod(v, &end);
      if (is_rep && r >= 1 && r <= MAX_REPEAT) repeat = (int)r;
      if (!*v || *end || errno || *v == '-' || (is_tol && !(tolerance >= 0.0 && tolerance < INFINITY)) ||
          (is_rep && (r < 1 || r > MAX_REPEAT))) {
        fprintf(stderr, "tunecli run-op: error: %s wants a %s, got '%s'\n", rest[i - 1],
                is_seed ? "non-negative integer" : is_rep ? "whole number from 1 to 1000" : "finite non-negative number",
                v);
        op_args_free(&a);
        return 2;
      }
    } else {
      fprintf(stderr, "tunecli run-op: error: unknown option '%s' (see tunecli help)\n", rest[i]);
      op_args_free(&a);
      return 2;
    }
  }
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  int rc = 1;
  tsl_module *m = NULL;
  tsl_jit *jit = NULL;
  tsl_tensor *tensors[MAX_ARGS] = {0};
  tsl_tensor *ref[MAX_ARGS] = {0}; /* the interpreter's outputs */
  int nargs = 0;
  tsl_status st;
  if (!op_args_build(cmd, &a)) goto done;
  const tsl_te_program *p = a.program;
  nargs = p->ninputs + p->noutputs;
  if (nargs > MAX_ARGS) {
    fprintf(stderr, "tunecli run-op: error: %d arguments (at most %d)\n", nargs, MAX_ARGS);
    goto done;
  }
  tsl_target target;
  tsl_build_stats stats;
  if ((st = tsl_target_parse(a.target, &target)) != TSL_OK || (st = tsl_jit_new(&target, &jit)) != TSL_OK ||
      (st = tsl_module_new(&m)) != TSL_OK ||
      (st = tsl_build(a.schedule, a.name, jit, m, NULL, &stats)) != TSL_OK) {
    rc = tunecli_fail(cmd, st);
    goto done;
  }
  for (int i = 0; i < nargs; i++) {
    const tsl_buffer *b = i < p->ninputs ? p->inputs[i]->buf : p->outputs[i - p->ninputs]->buf;
    if ((st = tsl_tensor_new(dtype_of(b->dtype), b->ndim, b->shape, &tensors[i])) != TSL_OK) {
      rc = tunecli_fail(cmd, st);
      goto done;
    }
    st = i < p->ninputs ? tsl_tensor_fill_random(tensors[i], seed + (uint64_t)i, -1.0, 1.0)
                        : tsl_tensor_new(dtype_of(b->dtype), b->ndim, b->shape, &ref[i]);
    if (st != TSL_OK) {
      rc = tunecli_fail(cmd, st);
      goto done;
    }
  }
  const tsl_kernel *k;
  if ((st = tsl_module_get_kernel(m, a.name, &k)) != TSL_OK ||
      (st = tsl_kernel_call_tensors(k, tensors, nargs)) != TSL_OK) {
    rc = tunecli_fail(cmd, st);
    goto done;
  }
  if (check && (st = tsl_te_interpret(p, (const tsl_tensor *const *)tensors, ref + p->ninputs)) != TSL_OK) {
    rc = tunecli_fail(cmd, st);
    goto done;
  }
  /* error relative to the output's magnitude (at least 1) */
  double worst = 0.0;
  int64_t worst_at = -1;
  int worst_out = 0;
  for (int o = 0; check && o < p->noutputs; o++) {
    const tsl_tensor *t = tensors[p->ninputs + o];
    const tsl_tensor *r = ref[p->ninputs + o];
    int64_t n = tsl_tensor_numel(t);
    double scale = 1.0;
    for (int64_t e = 0; e < n; e++) scale = fmax(scale, fabs(tsl_tensor_get_f64(r, e)));
    for (int64_t e = 0; e < n; e++) {
      double want = tsl_tensor_get_f64(r, e), got = tsl_tensor_get_f64(t, e), d = fabs(got - want) / scale;
      if (isnan(got) != isnan(want)) d = INFINITY;
      else if (isnan(got)) d = 0.0;
      if (d > worst || (isinf(d) && worst_at < 0)) {
        worst = d;
        worst_at = e;
        worst_out = o;
      }
    }
  }
  tsl_time_opts opts = tsl_time_opts_default();
  opts.repeat = repeat;
  double costs[MAX_REPEAT];
  void *ptrs[MAX_ARGS];
  void *argv_values[MAX_ARGS];
  for (int i = 0; i < nargs; i++) {
    ptrs[i] = tensors[i]->data;
    argv_values[i] = &ptrs[i];
  }
  if ((st = tsl_time_kernel(k, argv_values, nargs, &opts, costs)) != TSL_OK) {
    rc = tunecli_fail(cmd, st);
    goto done;
  }
  double median = tunecli_median_sort(costs, repeat);
  printf("%s on %s (cpu %s): ", a.name, target.name, target.cpu);
  op_args_print_config(stdout, &a);
  if (a.record_note[0]) printf("\n  schedule %s", a.record_note);
  else if (a.schedule_file) printf("\n  schedule from %s", a.schedule_file);
  printf("\n  compile: lower %.2f ms, LLVM %.2f ms\n", stats.lower_seconds * 1e3, stats.compile_seconds * 1e3);
  printf("  time per call: median %.4f ms, min %.4f ms (%d samples)\n", median * 1e3, costs[0] * 1e3, repeat);
  if (!check) {
    printf("  check: skipped (--no-check)\n");
    rc = 0;
    goto done;
  }
  printf("  max error vs the direct interpretation of the TE (float64), relative to the output's magnitude: %.3g (tolerance %.1g)\n",
         worst, tolerance);
  if (worst <= tolerance) {
    printf("  check: PASS\n");
    rc = 0;
  } else {
    printf("  check: FAIL at output %d element %lld\n", worst_out, (long long)worst_at);
  }
done:
  for (int i = 0; i < MAX_ARGS; i++) {
    tsl_tensor_free(tensors[i]);
    tsl_tensor_free(ref[i]);
  }
  tsl_module_free(m);
  tsl_jit_free(jit);
  op_args_free(&a);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return rc;
}
