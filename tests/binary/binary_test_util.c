/* Helpers shared by the binary suites (binary_test_util.h). */
#include "binary_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/arena.h"
#include "models/node_kernels_binary.h"
#include "ops/binary/lutconv.h"
#include "runtime/module.h"

uint64_t bin_test_rng(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void *bin_test_zalloc(size_t bytes) {
  size_t b = (bytes + 63) & ~(size_t)63;
  void *p = aligned_alloc(64, b ? b : 64);
  if (p) memset(p, 0, b ? b : 64);
  return p;
}

int bin_test_jit_open(tsl_target *t, tsl_jit **jit) {
  return tsl_target_parse("host", t) != TSL_OK || tsl_jit_new(t, jit) != TSL_OK;
}

int bin_test_jit_close(tsl_jit **jit) {
  tsl_jit_free(*jit);
  *jit = NULL;
  return 0;
}

int bin_test_run_op(tsl_jit *jit, const tsl_target *t, const char *name, int nin, const int64_t *const *shapes,
                    const int *ndims, int nparams, const tsl_dsl_param_value *params, bool tpl,
                    const tsl_bitserial_knobs *k, void **bufs) {
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_te_program *prog = NULL;
  tsl_schedule *s = NULL;
  tsl_module *m = NULL;
  const tsl_kernel *kern = NULL;
  tsl_status st = tsl_op_instantiate(name, nin, shapes, ndims, nparams, params, &prog);
  if (st == TSL_OK) {
    if (tpl && strncmp(name, "bitserial_conv2d", 16) == 0) st = tsl_bitserial_schedule(prog, t, k, &s);
    else if (tpl && (tsl_binary_is_blocked_pack(name) || tsl_binary_is_blocked_unpack(name)))
      st = tsl_binary_glue_schedule(name, prog, t, &s);
    else if (tpl && strcmp(name, TSL_LUTCONV_OP) == 0) st = tsl_lutconv_schedule(prog, t, &s);
    else st = tsl_schedule_create(prog, &s);
  }
  if (st == TSL_OK) st = tsl_module_new(&m);
  if (st == TSL_OK) st = tsl_build(s, "bin_kernel", jit, m, NULL, NULL);
  if (st == TSL_OK) st = tsl_module_get_kernel(m, "bin_kernel", &kern);
  if (st == TSL_OK) {
    void *args[8];
    for (int i = 0; i <= nin; i++) args[i] = &bufs[i];
    st = tsl_kernel_call(kern, args, nin + 1);
  }
  if (st != TSL_OK) printf("\n  %s: %s\n", name, tsl_last_error());
  tsl_module_free(m);
  tsl_schedule_free(s);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return st != TSL_OK;
}
