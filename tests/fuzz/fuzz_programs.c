/* Programs of the schedule-text harness (fuzz_programs.h). */
#include "fuzz_programs.h"

#include <string.h>

#include "ops/registry.h"

/* Winograd F(4x4) and F(6x6) are left out: their 6x6 and 8x8 transforms take seconds to
 * lower under the sanitizers (a few executions a second); F(2x2) has the same stages
 * and schedule steps at a size the fuzzer can iterate on. */
static bool too_slow(const char *op) { return strstr(op, "winograd_f4") || strstr(op, "winograd_f6"); }

int fuzz_programs(const tsl_te_program **progs, const char **ops, int max) {
  int n_ops, n = 0;
  const tsl_op_info *const *list = tsl_op_list(&n_ops);
  for (int i = 0; i < n_ops && n < max; i++) {
    const tsl_op_example *ex = &list[i]->example;
    tsl_te_program *p = NULL;
    if (too_slow(list[i]->name) ||
        tsl_op_instantiate(list[i]->name, ex->ninputs, ex->shapes, ex->ndims, ex->nparams, ex->params, &p) != TSL_OK)
      continue;
    progs[n] = p;
    if (ops) ops[n] = list[i]->name;
    n++;
  }
  return n;
}
