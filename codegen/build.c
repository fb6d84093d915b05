/* Build: schedule -> lowered kernel -> machine code (see build.h). */
#include "codegen/build.h"

#include <stdlib.h>

#include "codegen/build_key.h"
#include "codegen/jit_cache.h"
#include "schedule/lower.h"
#include "tessel/runtime.h"

/* Level 1 of the cache: the kernel's object by key k, added to m. true when the kernel
 * is in m; false (nothing done) when there is no usable entry. *st receives an error
 * of adding a valid entry (then the build fails as a compile would). */
static bool build_from_cache(const tsl_jit_cache_key *k, const char *name, tsl_jit *jit, tsl_module *m,
                             tsl_status *st) {
  tsl_jit_object obj;
  *st = TSL_OK;
  if (!tsl_jit_cache_kernel_load(k, &obj)) return false;
  bool added = false;
  *st = tsl_jit_add_object(jit, m, name, &obj, &added);
  tsl_jit_object_free(&obj);
  return added || *st != TSL_OK;
}

tsl_status tsl_build(const tsl_schedule *s, const char *name, tsl_jit *jit, tsl_module *m, tsl_func **func,
                     tsl_build_stats *stats) {
  if (func) *func = NULL;
  if (!s || !name || !jit || !m) return tsl_error(TSL_ERR_INVALID, "build: NULL argument");
  double t0 = tsl_time_now();
  tsl_lower_options opts = tsl_lower_options_default();
  opts.vector_bits = tsl_jit_target(jit)->vector_bits; /* vectorized loops become native-width vectors */
  /* Level 1 cannot give the lowered IR, so a caller asking for it lowers. */
  const char *ctx = tsl_jit_cache_ctx(jit);
  bool level1 = !func && ctx && tsl_jit_cache_enabled();
  tsl_jit_cache_key key;
  if (level1 && tsl_build_cache_key(s, name, &opts, ctx, &key) != TSL_OK) {
    tsl_clear_error(); /* a kernel the key cannot describe is built without level 1 */
    level1 = false;
  }
  if (level1) {
    tsl_status st;
    bool done = build_from_cache(&key, name, jit, m, &st);
    if (done && st != TSL_OK) return st;
    tsl_jit_cache_count_kernel(done);
    if (done) {
      if (stats) {
        stats->lower_seconds = 0.0;
        stats->compile_seconds = tsl_time_now() - t0;
      }
      return TSL_OK;
    }
  }
  double t1 = tsl_time_now();
  tsl_func *f = NULL;
  tsl_status st = tsl_lower_with(s, name, &opts, &f);
  if (st != TSL_OK) return st;
  double t2 = tsl_time_now();
  double compile = 0.0;
  tsl_jit_object obj;
  st = tsl_jit_compile_object(jit, f, m, &compile, level1 ? &obj : NULL);
  if (st != TSL_OK) return st;
  if (level1) {
    tsl_jit_cache_kernel_store(&key, &obj);
    tsl_jit_object_free(&obj);
  }
  if (stats) {
    stats->lower_seconds = t2 - t1;
    stats->compile_seconds = compile + (t1 - t0); /* the key and the level-1 lookup count as compiling */
  }
  if (func) *func = f;
  return TSL_OK;
}
