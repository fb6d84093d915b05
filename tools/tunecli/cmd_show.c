/* tunecli show OP: the TE, the schedule, the lowered loop IR and optionally the LLVM IR,
 * the assembly and the compile time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "codegen/machine.h"
#include "schedule/lower.h"
#include "ir/arena.h"
#include "ops/algorithm.h"
#include "schedule/template.h"
#include "op_args.h"
#include "runtime/module.h"
#include "target/target.h"
#include "tunecli.h"
#include "tuner/cost_static.h"

int tunecli_show(int argc, char **argv) {
  const char *cmd = "show";
  char *rest[64];
  int nrest = 0;
  if (argc > 60) {
    fprintf(stderr, "tunecli show: error: too many arguments\n");
    return 2;
  }
  op_args a;
  if (!op_args_parse(cmd, argc, argv, &a, rest, &nrest)) {
    op_args_free(&a);
    return 2;
  }
  bool want_llvm = false, want_asm = false, want_time = false, want_dsl = false, want_cost = false;
  for (int i = 0; i < nrest; i++) {
    if (strcmp(rest[i], "--llvm") == 0) want_llvm = true;
    else if (strcmp(rest[i], "--asm") == 0) want_asm = true;
    else if (strcmp(rest[i], "--time") == 0) want_time = true;
    else if (strcmp(rest[i], "--dsl") == 0) want_dsl = true;
    else if (strcmp(rest[i], "--static-cost") == 0) want_cost = true;
    else {
      fprintf(stderr, "tunecli show: error: unknown option '%s' (see tunecli help)\n", rest[i]);
      op_args_free(&a);
      return 2;
    }
  }
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  int rc = 1;
  tsl_module *m = NULL;
  tsl_jit *jit = NULL;
  if (!op_args_build(cmd, &a)) goto done;

  if (want_dsl && a.text) printf("# operator %s (DSL source)\n%s\n", a.name, a.text);
  printf("# %s: ", a.name);
  op_args_print_config(stdout, &a);
  printf("\n# tensor expression\n");
  tsl_te_print(stdout, a.program);
  if (a.record_note[0]) printf("\n# schedule (%s)\n", a.record_note);
  else printf("\n# schedule%s%s\n", a.schedule_file ? " from " : "", a.schedule_file ? a.schedule_file : "");
  tsl_schedule_print(stdout, a.schedule);
  if (!a.record_note[0] && !a.schedule_file) {
    /* the operator's own schedule; a template's is what the graph compiler runs */
    const tsl_template *list[64];
    tsl_tuner_register_templates();
    int n = tsl_template_list(a.name, list, 64);
    if (n > 0) {
      printf("# (the operator's default loop nest; its templates, whose default config the graph compiler\n"
             "#  and the tuner start from: ");
      for (int i = 0; i < n && i < 64; i++) printf("%s%s", i ? ", " : "", list[i]->name);
      printf("; show one with --template NAME)\n");
    }
  }
  tsl_target target;
  tsl_status st = tsl_target_parse(a.target, &target);
  if (st != TSL_OK) {
    rc = tunecli_fail(cmd, st);
    goto done;
  }
  tsl_func *f = NULL;
  tsl_lower_options lopts = tsl_lower_options_default();
  lopts.vector_bits = target.vector_bits; /* as tsl_build lowers for this target */
  if ((st = tsl_lower_with(a.schedule, a.name, &lopts, &f)) != TSL_OK) {
    rc = tunecli_fail(cmd, st);
    goto done;
  }
  printf("\n# loop IR (%s)\n", target.name);
  tsl_print_func(stdout, f);

  if (want_llvm) {
    char *text = NULL;
    if ((st = tsl_codegen_llvm_ir(f, &target, true, &text)) != TSL_OK) {
      rc = tunecli_fail(cmd, st);
      goto done;
    }
    printf("\n# LLVM IR (optimized, %s)\n%s", target.name, text);
    free(text);
  }
  if (want_asm) {
    char *text = NULL;
    if ((st = tsl_codegen_asm(f, &target, &text)) != TSL_OK) {
      rc = tunecli_fail(cmd, st);
      goto done;
    }
    printf("\n# assembly (%s, cpu %s)\n%s", target.name, target.cpu, text);
    free(text);
  }
  if (want_cost) {
    tsl_cost_static_detail d;
    /* --threads N: the estimate split over N cores (a static record's `threads`) */
    if ((st = tsl_cost_static_func(f, &target, a.threads, &d)) != TSL_OK) {
      rc = tunecli_fail(cmd, st);
      goto done;
    }
    int cores = 0;
    const tsl_cpu_figures *fig = tsl_cost_static_figures(&target, &cores);
    printf("\n# static cost (%s, cpu %s as %s: %.2f GHz, %d cores; model %s, docs/cost_static.md)\n"
           "%.6g ms  (compute %.6g ms, memory %.6g ms)\n"
           "cycles %.6g, into L1 %.6g bytes, into L2 %.6g bytes, parallel %g on %d cores\n"
           "innermost loops %d (trip guessed %d, mapped to no nest %d)\n",
           target.name, target.cpu, fig->machine, fig->ghz, cores, TSL_COST_STATIC_MODEL, d.seconds * 1e3,
           d.compute_s * 1e3, d.memory_s * 1e3, d.cycles, d.l1_fill_bytes, d.l2_fill_bytes, d.parallel, d.cores,
           d.loops, d.loops_guessed, d.loops_unmapped);
  }
  if (want_time) {
    tsl_build_stats stats;
    if ((st = tsl_jit_new(&target, &jit)) != TSL_OK || (st = tsl_module_new(&m)) != TSL_OK ||
        (st = tsl_build(a.schedule, a.name, jit, m, NULL, &stats)) != TSL_OK) {
      rc = tunecli_fail(cmd, st);
      goto done;
    }
    printf("\n# compile time (%s, cpu %s): lower %.2f ms, LLVM (emit + O3 + machine code) %.2f ms\n",
           target.name, target.cpu, stats.lower_seconds * 1e3, stats.compile_seconds * 1e3);
  }
  rc = 0;
done:
  tsl_module_free(m);
  tsl_jit_free(jit);
  op_args_free(&a);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return rc;
}
