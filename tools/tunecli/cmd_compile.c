/* tunecli compile OP: ahead-of-time compilation of one operator into a shared object
 * for any target (codegen/aot.h), to be loaded by tsl_module_load_so on that machine,
 * e.g. by tessel-device-run (device/) on an AArch64 board or under qemu-aarch64. */
#include <stdio.h>
#include <string.h>

#include "codegen/aot.h"
#include "codegen/llvm.h"
#include "codegen/target.h"
#include "ir/arena.h"
#include "op_args.h"
#include "schedule/lower.h"
#include "tunecli.h"

int tunecli_compile(int argc, char **argv) {
  const char *cmd = "compile";
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
  printf("\n");
  rc = 0;
done:
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  op_args_free(&a);
  return rc;
}
