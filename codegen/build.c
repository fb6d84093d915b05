/* Build: schedule -> lowered kernel -> machine code (see build.h). */
#include "codegen/build.h"

#include "schedule/lower.h"
#include "tessel/runtime.h"

tsl_status tsl_build(const tsl_schedule *s, const char *name, tsl_jit *jit, tsl_module *m, tsl_func **func,
                     tsl_build_stats *stats) {
  if (func) *func = NULL;
  double t0 = tsl_time_now();
  tsl_func *f = NULL;
  tsl_lower_options opts = tsl_lower_options_default();
  opts.vector_bits = tsl_jit_target(jit)->vector_bits; /* vectorized loops become native-width vectors */
  tsl_status st = tsl_lower_with(s, name, &opts, &f);
  if (st != TSL_OK) return st;
  double t1 = tsl_time_now();
  double compile = 0.0;
  st = tsl_jit_compile(jit, f, m, &compile);
  if (st != TSL_OK) return st;
  if (stats) {
    stats->lower_seconds = t1 - t0;
    stats->compile_seconds = compile;
  }
  if (func) *func = f;
  return TSL_OK;
}
