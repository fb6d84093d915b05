/* tunecli compile OP: ahead-of-time compilation of one operator into a shared object
 * for any target (codegen/aot.h), to be loaded by tsl_module_load_so on that machine,
 * e.g. by tessel-device-run (device/) on an AArch64 board or under qemu-aarch64.
 * tunecli compile MODEL: a whole model into one model file (models/aot_model.h), run by
 * examples/device_app.c (tessel-device-app) with the runtime alone. */
#include <stdio.h>
#include <string.h>

#include "codegen/aot.h"
#include "codegen/kernel_abi.h"
#include "codegen/llvm.h"
#include "ir/arena.h"
#include "models/aot_model.h"
#include "models/onnx.h"
#include "models/zoo.h"
#include "op_args.h"
#include "schedule/lower.h"
#include "target/target.h"
#include "tunecli.h"

/* Zoo models get the weights of this seed, as tsl_model_load gives them (models/api.c),
 * so `tunecli run NAME` and the AOT file of NAME compute the same function. */
#define ZOO_SEED 1

/* A model unless it is a built-in operator or an op of a --file. */
static bool is_model(int argc, char **argv) {
  if (argc < 1 || argv[0][0] == '-') return false;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--file") == 0) return false;
  const tsl_op_info *info = NULL;
  bool op = tsl_op_lookup(argv[0], &info) == TSL_OK;
  tsl_clear_error();
  return !op;
}

static int compile_model(int argc, char **argv) {
  const char *cmd = "compile", *model = argv[0], *out = NULL;
  tsl_aot_model_options o = {.target = "host"};
  for (int i = 1; i < argc; i++) {
    bool has_value = i + 1 < argc;
    if ((strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) && has_value) out = argv[++i];
    else if (strcmp(argv[i], "--target") == 0 && has_value) o.target = argv[++i];
    else if (strcmp(argv[i], "--records") == 0 && has_value) o.records = argv[++i];
    else if (strcmp(argv[i], "--no-layout") == 0) o.no_layout = true;
    else if (strcmp(argv[i], "--verbose") == 0) o.verbose = true;
    else if (strcmp(argv[i], "--no-auto-schedule") == 0) o.no_auto_schedule = true;
    else {
      fprintf(stderr, "tunecli compile: error: unknown option or missing value '%s' (a model takes --target T, "
              "--records FILE, --no-layout, --no-auto-schedule, --verbose, -o FILE.so)\n", argv[i]);
      return 2;
    }
  }
  if (!out || !out[0]) {
    fprintf(stderr, "tunecli compile: error: give the output file with -o FILE.so\n");
    return 2;
  }
  size_t n = strlen(model);
  bool onnx = strchr(model, '/') || (n >= 5 && strcmp(model + n - 5, ".onnx") == 0);
  tsl_graph *g = NULL;
  tsl_status st = onnx ? tsl_graph_load_onnx(model, &g) : tsl_zoo_build(model, ZOO_SEED, &g);
  if (st == TSL_ERR_NOT_FOUND && !onnx) {
    fprintf(stderr, "tunecli compile: error: '%s' is neither a built-in operator (tunecli list) nor a model: %s\n",
            model, tsl_last_error());
    return 1;
  }
  if (st != TSL_OK) return tunecli_fail(cmd, st);
  tsl_aot_model_stats s;
  st = tsl_aot_compile_model(g, &o, out, &s);
  if (st != TSL_OK) {
    tsl_graph_free(g);
    return tunecli_fail(cmd, st);
  }
  printf("%s: model %s for %s: %d kernel calls, %d distinct kernels", out, model, o.target, s.steps, s.kernels);
  if (o.records) printf(", %d tuned from %s", s.records_used, o.records);
  printf("\n  activations %.2f MiB (planned peak), weights %.2f MiB, plan %.2f MiB appended\n",
         (double)s.arena_bytes / (1 << 20), (double)s.constant_bytes / (1 << 20), (double)s.plan_bytes / (1 << 20));
  for (int i = 0; i < g->n_inputs + g->n_outputs; i++) {
    bool in = i < g->n_inputs;
    const tsl_value *v = &g->values[in ? g->inputs[i] : g->outputs[i - g->n_inputs]];
    int64_t bytes = (int64_t)tsl_dtype_bytes(v->dtype);
    printf("  %s %s %s[", in ? "input" : "output", v->name, tsl_dtype_str(v->dtype));
    for (int d = 0; d < v->ndim; d++) {
      printf("%s%lld", d ? "x" : "", (long long)v->shape[d]);
      bytes *= v->shape[d];
    }
    printf("], %lld bytes\n", (long long)bytes);
  }
  printf("  lower %.2f s, LLVM + link %.2f s\n", s.lower_seconds, s.codegen_seconds);
  tsl_graph_free(g);
  return 0;
}

int tunecli_compile(int argc, char **argv) {
  const char *cmd = "compile";
  if (is_model(argc, argv)) return compile_model(argc, argv);
  char *rest[64];
  int nrest = 0;
  if (argc > 60) {
    fprintf(stderr, "tunecli compile: error: too many arguments\n");
    return 2;
  }
  op_args a;
  if (!op_args_parse(cmd, argc, argv, &a, rest, &nrest)) {
    op_args_free(&a);
    return 2;
  }
  const char *out = NULL, *kernel = NULL;
  for (int i = 0; i < nrest; i++) {
    bool has_value = i + 1 < nrest;
    if ((strcmp(rest[i], "-o") == 0 || strcmp(rest[i], "--output") == 0) && has_value) out = rest[++i];
    else if (strcmp(rest[i], "--name") == 0 && has_value) kernel = rest[++i];
    else {
      fprintf(stderr, "tunecli compile: error: unknown option or missing value '%s' (see tunecli help)\n", rest[i]);
      op_args_free(&a);
      return 2;
    }
  }
  if (!out || !out[0]) {
    fprintf(stderr, "tunecli compile: error: give the output file with -o FILE.so\n");
    op_args_free(&a);
    return 2;
  }
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  int rc = 1;
  tsl_target target;
  tsl_status st = tsl_target_parse(a.target, &target);
  if (st != TSL_OK) {
    rc = tunecli_fail(cmd, st);
    goto done;
  }
  if (!op_args_build(cmd, &a)) goto done;
  if (!kernel) kernel = a.name;
  tsl_lower_options o = tsl_lower_options_default();
  o.vector_bits = target.vector_bits;
  tsl_func *f = NULL;
  if ((st = tsl_lower_with(a.schedule, kernel, &o, &f)) != TSL_OK) {
    rc = tunecli_fail(cmd, st);
    goto done;
  }
  const tsl_func *funcs[1] = {f};
  if ((st = tsl_aot_compile(funcs, 1, &target, out)) != TSL_OK) {
    rc = tunecli_fail(cmd, st);
    goto done;
  }
  tsl_kernel_sig sig;
  if ((st = tsl_codegen_kernel_sig(f, &sig)) != TSL_OK) {
    rc = tunecli_fail(cmd, st);
    goto done;
  }
  char tbuf[256];
  /* The buffer sizes are what tessel-device-run's out:PATH:BYTES arguments need. */
  printf("%s: kernel %s for %s\n", out, kernel, tsl_target_str(&target, tbuf, sizeof tbuf));
  for (int i = 0; i < sig.nargs; i++) {
    const tsl_arg *arg = &f->args[i];
    if (!arg->is_buffer) {
      printf("  arg %d: %s scalar\n", i, tsl_arg_type_str(sig.args[i]));
      continue;
    }
    char ty[32];
    printf("  arg %d: %s %s[", i, tsl_arg_type_str(sig.args[i]), arg->buf->name);
    for (int d = 0; d < arg->buf->ndim; d++) printf("%s%lld", d ? "x" : "", (long long)arg->buf->shape[d]);
    printf("] %s, %lld bytes\n", tsl_type_str(arg->buf->dtype, ty, sizeof ty),
           (long long)(tsl_buffer_numel(arg->buf) * (int64_t)tsl_type_bytes(arg->buf->dtype)));
  }
  printf("# ");
  op_args_print_config(stdout, &a);
  if (a.record_note[0]) printf("\n# schedule %s", a.record_note);
  else if (a.schedule_file) printf("\n# schedule from %s", a.schedule_file);
  printf("\n");
  rc = 0;
done:
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  op_args_free(&a);
  return rc;
}
