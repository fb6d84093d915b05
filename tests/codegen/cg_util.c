/* Shared helpers of the codegen tests, and the module's registration function. */
#include "tests/codegen/cg_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tsl_jit *cg_jit;
const int cg_region_lanes[CG_NREGIONS] = {1, 4, 8, 16};

int cg_suite_init(void) {
  tsl_target t;
  if (tsl_target_parse("host", &t) != TSL_OK || tsl_jit_new(&t, &cg_jit) != TSL_OK) {
    fprintf(stderr, "codegen tests: no host JIT: %s\n", tsl_last_error());
    return 1;
  }
  return 0;
}

int cg_suite_clean(void) {
  tsl_jit_free(cg_jit);
  cg_jit = NULL;
  return 0;
}

tsl_status cg_run_n_on(tsl_jit *j, const tsl_func *f, void *const *args, int times) {
  tsl_module *m;
  tsl_status st = tsl_module_new(&m);
  if (st != TSL_OK) return st;
  st = tsl_jit_compile(j, f, m, NULL);
  const tsl_kernel *k = NULL;
  if (st == TSL_OK) st = tsl_module_get_kernel(m, f->name, &k);
  for (int i = 0; i < times && st == TSL_OK; i++) st = tsl_kernel_call(k, args, f->nargs);
  if (st != TSL_OK) fprintf(stderr, "\n    [%s: %s]\n", f->name, tsl_last_error());
  tsl_module_free(m);
  return st;
}

tsl_status cg_run_n(const tsl_func *f, void *const *args, int times) { return cg_run_n_on(cg_jit, f, args, times); }

tsl_status cg_run(const tsl_func *f, void *const *args) { return cg_run_n(f, args, 1); }

void *cg_alloc(size_t bytes) {
  size_t n = (bytes + 63) / 64 * 64;
  void *p = aligned_alloc(64, n ? n : 64);
  if (p) memset(p, 0, n ? n : 64);
  return p;
}

tsl_buffer *cg_buf(const char *name, tsl_type t, int64_t n) {
  return tsl_buffer_new(name, t, 1, &n, TSL_BUF_ARG);
}

tsl_expr *cg_ld(tsl_buffer *b, tsl_expr *index) { return tsl_load(b, 1, &index, NULL); }

tsl_expr *cg_ldv(tsl_buffer *b, tsl_expr *base, int lanes) {
  if (lanes == 1) return cg_ld(b, base);
  tsl_expr *idx = tsl_ramp(base, tsl_int(base->type, 1), lanes);
  return tsl_load(b, 1, &idx, NULL);
}

tsl_stmt *cg_st(tsl_buffer *b, tsl_expr *index, tsl_expr *value) { return tsl_store(b, 1, &index, value, NULL); }

tsl_stmt *cg_stv(tsl_buffer *b, tsl_expr *base, int lanes, tsl_expr *value) {
  if (lanes == 1) return cg_st(b, base, value);
  tsl_expr *idx = tsl_ramp(base, tsl_int(base->type, 1), lanes);
  return tsl_store(b, 1, &idx, value, NULL);
}

tsl_expr *cg_bc(tsl_expr *value, int lanes) { return tsl_broadcast(value, lanes); }

tsl_func *cg_func(const char *name, int nbufs, tsl_buffer *const *bufs, tsl_stmt *body) {
  tsl_arg args[16];
  for (int i = 0; i < nbufs; i++) args[i] = (tsl_arg){.is_buffer = true, .buf = bufs[i]};
  return tsl_func_new(name, nbufs, args, body);
}

tsl_func *cg_lanes_kernel_multi(const char *name, int nin, const tsl_type *in_types, tsl_type out_type, int64_t n,
                                int nfn, const cg_expr_fn *fns) {
  tsl_buffer *bufs[9];
  for (int i = 0; i < nin; i++) {
    char nm[16];
    snprintf(nm, sizeof nm, "in%d", i);
    bufs[i] = cg_buf(nm, in_types[i], n);
  }
  tsl_buffer *out = bufs[nin] = cg_buf("out", out_type, (int64_t)nfn * CG_NREGIONS * n);
  tsl_stmt *regions[64];
  for (int k = 0; k < nfn; k++)
    for (int r = 0; r < CG_NREGIONS; r++) {
      int lanes = cg_region_lanes[r];
      tsl_expr *io = tsl_var("io", TSL_I64);
      tsl_expr *base = tsl_mul(io, tsl_i64(lanes));
      tsl_expr *in[8];
      for (int i = 0; i < nin; i++) in[i] = cg_ldv(bufs[i], base, lanes);
      tsl_expr *at = tsl_add(tsl_i64((k * CG_NREGIONS + r) * n), base);
      regions[k * CG_NREGIONS + r] =
          tsl_for(io, tsl_i64(0), tsl_i64(n / lanes), TSL_FOR_SERIAL, cg_stv(out, at, lanes, fns[k](in, lanes)));
    }
  return cg_func(name, nin + 1, bufs, tsl_seq(nfn * CG_NREGIONS, regions));
}

tsl_func *cg_lanes_kernel(const char *name, int nin, const tsl_type *in_types, tsl_type out_type, int64_t n,
                          cg_expr_fn fn) {
  return cg_lanes_kernel_multi(name, nin, in_types, out_type, n, 1, &fn);
}

tsl_status cg_run_lanes_on(tsl_jit *j, const tsl_func *f, int nin, void *const *inputs, void *out) {
  void *ptrs[9];
  void *args[9];
  for (int i = 0; i < nin; i++) ptrs[i] = inputs[i];
  ptrs[nin] = out;
  for (int i = 0; i <= nin; i++) args[i] = &ptrs[i];
  return cg_run_n_on(j, f, args, 1);
}

tsl_status cg_run_lanes(const tsl_func *f, int nin, void *const *inputs, void *out) {
  return cg_run_lanes_on(cg_jit, f, nin, inputs, out);
}

int64_t ref_floor_div(int64_t a, int64_t b) {
  long double q = floorl((long double)a / (long double)b);
  if (q >= 9223372036854775808.0L) return INT64_MIN; /* INT64_MIN / -1 wraps */
  return (int64_t)q;
}

int64_t ref_floor_mod(int64_t a, int64_t b) {
  return (int64_t)((uint64_t)a - (uint64_t)b * (uint64_t)ref_floor_div(a, b));
}

bool same_float(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

void tsl_tests_codegen(void) {
  cg_add_target_tests();
  cg_add_expr_tests();
  cg_add_intrinsic_tests();
  cg_add_memory_tests();
  cg_add_stmt_tests();
  cg_add_build_cache_tests();
  cg_add_math_tests();
  cg_add_transpose_tests();
}
