/* tunecli: tessel's command-line tool. `tunecli help` lists the commands. */
#include <stdio.h>
#include <string.h>

#include "dsl/ops/registry.h"
#include "tsl_config.h"
#include "tunecli.h"

typedef struct command {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *usage;
} command;

int tunecli_list(int argc, char **argv) {
  (void)argc;
  (void)argv;
  int n = 0;
  const tsl_op_info *const *ops = tsl_op_list(&n);
  for (int i = 0; i < n; i++) printf("%-14s %s\n", ops[i]->name, ops[i]->description);
  return 0;
}

static const command commands[] = {
    {"list", tunecli_list, "list                      the built-in operators"},
    {"show", tunecli_show,
     "show OP [--shape IN=AxB..]... [--param P=V]... [--schedule FILE] [--target T]\n"
     "         [--dsl] [--llvm] [--asm] [--time]\n"
     "                          print the tensor expression, schedule and lowered loop IR;\n"
     "                          --llvm/--asm add the optimized LLVM IR / assembly, --time the\n"
     "                          compile time (TSL_DEBUG=lower prints the IR after every pass)"},
    {"run-op", tunecli_run_op,
     "run-op OP [--shape ...] [--param ...] [--schedule FILE] [--seed S] [--tolerance E]\n"
     "                          JIT-compile OP, run it on seeded random inputs, check it against\n"
     "                          the TE interpreter (float64) and time it"},
};

static void usage(FILE *f) {
  fprintf(f, "tunecli %s (LLVM %s): tessel's command-line tool\n\nusage: tunecli COMMAND [ARGS]\n\n", TSL_VERSION,
          TSL_LLVM_VERSION);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) fprintf(f, "  tunecli %s\n\n", commands[i].usage);
  fprintf(f, "  tunecli help | --version\n");
}

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("tunecli %s (LLVM %s)\n", TSL_VERSION, TSL_LLVM_VERSION);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[1], commands[i].name) == 0) return commands[i].run(argc - 2, argv + 2);
  fprintf(stderr, "tunecli: error: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
