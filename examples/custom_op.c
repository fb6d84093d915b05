/* A new operator written in the DSL and run from C: parse, instantiate for a shape,
 * schedule, lower + JIT-compile, call. Build: part of the meson build
 * (build/examples/custom_op). */
#include <stdio.h>
#include <stdlib.h>

#include "codegen/build.h"
#include "dsl/parser.h"
#include "ir/arena.h"
#include "runtime/module.h"

static const char *text =
    "op scaled_add(A: f32[M, N], B: f32[M, N], alpha: float = 1.0)\n"
    "  C[i, j] = A[i, j] + alpha * B[i, j]\n";

static int fail(const char *what) {
  fprintf(stderr, "custom_op: %s: %s\n", what, tsl_last_error());
  return 1;
}

int main(void) {
  tsl_arena *arena = tsl_arena_new(); /* IR nodes live here until the end */
  tsl_arena_set_current(arena);

  tsl_dsl_module *mod;
  if (tsl_dsl_parse(text, "scaled_add.tsl", &mod) != TSL_OK) return fail("parse");
  int64_t shape[2] = {3, 5};
  const int64_t *shapes[2] = {shape, shape};
  int ndims[2] = {2, 2};
  tsl_dsl_param_value alpha = tsl_dsl_float_param("alpha", 0.5);
  tsl_te_program *prog;
  if (tsl_dsl_instantiate(tsl_dsl_module_find(mod, "scaled_add"), 2, shapes, ndims, 1, &alpha, &prog) != TSL_OK)
    return fail("instantiate");

  tsl_schedule *sched; /* the default schedule; tsl_schedule_split/... or text refine it */
  if (tsl_schedule_create(prog, &sched) != TSL_OK) return fail("schedule");

  tsl_target target;
  tsl_jit *jit;
  tsl_module *module;
  if (tsl_target_parse("host", &target) != TSL_OK || tsl_jit_new(&target, &jit) != TSL_OK ||
      tsl_module_new(&module) != TSL_OK || tsl_build(sched, "scaled_add", jit, module, NULL, NULL) != TSL_OK)
    return fail("build");

  /* kernels assume 64-byte aligned, non-overlapping buffers (tsl_tensor_new gives both) */
  _Alignas(64) float A[15], B[15], C[15];
  for (int i = 0; i < 15; i++) A[i] = (float)i, B[i] = 10.0f;
  void *a = A, *b = B, *c = C; /* kernel arguments: inputs, then outputs */
  void *args[3] = {&a, &b, &c};
  const tsl_kernel *k;
  if (tsl_module_get_kernel(module, "scaled_add", &k) != TSL_OK || tsl_kernel_call(k, args, 3) != TSL_OK)
    return fail("run");
  for (int i = 0; i < 15; i++) printf("%g%s", C[i], i % 5 == 4 ? "\n" : " ");

  tsl_module_free(module);
  tsl_jit_free(jit);
  tsl_schedule_free(sched);
  tsl_dsl_module_free(mod);
  tsl_arena_set_current(NULL);
  tsl_arena_free(arena);
  return 0;
}
