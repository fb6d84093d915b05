/* tunecli: tessel's command-line tool. `tunecli help` lists the commands. */
#include <stdio.h>
#include <string.h>

#include "codegen/jit_cache.h"
#include "ops/registry.h"
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
     "show OP [OPTIONS] [--dsl] [--llvm] [--asm] [--time] [--static-cost]\n"
     "                          print the tensor expression, schedule and lowered loop IR;\n"
     "                          --dsl the operator's DSL source, --llvm/--asm the optimized\n"
     "                          LLVM IR / assembly, --time the compile time,\n"
     "                          --static-cost the static cost model's estimate (docs/cost_static.md),\n"
     "                          over --threads N cores when given\n"
     "                          (TSL_DEBUG=lower prints the IR after every lowering pass)"},
    {"run-op", tunecli_run_op,
     "run-op OP [OPTIONS] [--seed S] [--tolerance E] [--repeat N] [--no-check]\n"
     "                          JIT-compile OP, run it on seeded random inputs (floats in [-1, 1),\n"
     "                          signed integers in {-1, 0, 1}, unsigned and bool in {0, 1}), check\n"
     "                          every output against the direct interpretation of its tensor\n"
     "                          expression (float64; default tolerance 1e-5 of the output's\n"
     "                          magnitude) and time it: median and min of N samples (default 5);\n"
     "                          --no-check times it without the check (large operators whose\n"
     "                          float64 interpretation takes minutes)"},
    {"run", tunecli_run,
     "run MODEL [--records FILE] [--threads N] [--input FILE] [--output FILE] [--repeat N] [--target T] [--profile]\n"
     "          [--verbose] [--no-auto-schedule] [--no-claim-outputs] [--claims auto|always|never]\n"
     "                          compile a whole model (a built-in name: squeezenet1_0/1_1, resnet18/50,\n"
     "                          mobilenet_v2, shufflenet_v2_x1_0; or an .onnx file) and run it: median\n"
     "                          and min latency over N runs (default 10), planned peak memory, top-5\n"
     "                          of output 0; --input is raw f32 (default: seeded random in [-1, 1));\n"
     "                          --output writes output 0 as raw little-endian f32 (after the timed runs);\n"
     "                          --profile: per kernel call median ms (with the claim of its outputs),\n"
     "                          largest first; --verbose: one\n"
     "                          'no tuning record' line per conv layer (default: one per model);\n"
     "                          --no-auto-schedule: kernels with a reduction and no template keep the\n"
     "                          generic default schedule (default: the auto-scheduler's);\n"
     "                          --no-claim-outputs: at 2+ threads, low-intensity kernels write their\n"
     "                          outputs without first claiming them (docs/capi.md, Claimed outputs);\n"
     "                          --claims: when runs claim them: auto (default: runs with and without\n"
     "                          claims timed here, the faster kept), always, never"},
    {"peak", tunecli_peak,
     "peak [--target T] [--threads N] [--repeat R] [--min-ms MS] [--triad-mib MIB] [--no-bandwidth]\n"
     "                          measure fp32 FMA peak (GFLOP/s) and STREAM triad bandwidth (GB/s),\n"
     "                          one thread and N threads, with kernels from tessel's codegen"},
    {"tune", tunecli_tune,
     "tune MODEL [TUNE OPTIONS]\n"
     "                          tune every distinct convolution of a model (a built-in name, e.g.\n"
     "                          squeezenet = squeezenet1_1, or an .onnx file) across its algorithms;\n"
     "                          defaults --trials 32 --early-stopping 16; prints a table per layer;\n"
     "                          then verifies each layer's choice inside the model (in-situ pass:\n"
     "                          default vs the best isolated algorithms, timed in whole-model runs,\n"
     "                          in-model records appended and preferred by the lookup)"},
    {"tune-op", tunecli_tune_op,
     "tune-op OP [OPTIONS] [TUNE OPTIONS]\n"
     "                          tune one operator instantiation across its algorithms/templates\n"
     "                          (an op of --file: the template of its schedule block, docs/dsl.md;\n"
     "                          without one, the auto-scheduler's sketches, template OP.auto)\n"
     "  TUNE OPTIONS: --target T  --records FILE (default tessel_records.jsonl, appended, resumed)\n"
     "                --trials N (per workload, default 64)  --early-stopping N  --timeout S (total)\n"
     "                --search xgb|evolution|random|grid  --batch N  --seed S  --template NAME\n"
     "                --number N  --repeat N  --min-repeat-ms MS  --cache-flush  --cooldown S\n"
     "                --threads N  --build-timeout S  --run-timeout S  --no-peak\n"
     "                --no-e2e (tune MODEL: no end-to-end latency, tuned vs default, at the end)\n"
     "                --layers I,J,.. (tune MODEL: only these distinct layers, 1-based)\n"     "                --no-insitu (tune MODEL: keep the isolated choice, no in-model verification)\n"
     "                --insitu-per-algo N (tune MODEL: the N best isolated configs of each of the 3\n"
     "                best algorithms are measured in the model, 31 in all at most; default 8)\n"
     "                --insitu-window N (tune MODEL: the final-plan check times each changed layer's\n"
     "                steps and the N steps after them in the plan of every layer's choice, against\n"
     "                the same plan with the layer at its default; 0 = no check; default 2)\n"
     "                --cost static|measured  static: estimate each candidate with the static cost model\n"
     "                (llvm-mca on the target CPU's scheduling model, docs/cost_static.md) instead of\n"
     "                running it; the default for a target of another architecture (armv8 on x86) when\n"
     "                no --device is given\n"
     "                --prefilter K  (measured runs) estimate each batch statically, measure its best K\n"
     "                --static-shadow FILE  (measured runs) also estimate every measured candidate,\n"
     "                append the static records to FILE, print the rank correlation per layer\n"
     "                --static-shadow-held  with --static-shadow and --records: estimate the measured\n"
     "                records held too (re-estimates a measured run offline; --trials 1: none measured)\n"
     "                --device tcp://HOST:PORT[,tcp://...] --key KEY   measure on a tessel-rpc-server\n"
     "                (or a pool of identical ones, in parallel; docs/rpc.md)"},
    {"compile", tunecli_compile,
     "compile OP [OPTIONS] [--target T] -o FILE.so [--name KERNEL]\n"
     "                          compile OP ahead of time into a shared object for T (any target,\n"
     "                          e.g. armv8: no need to run here); load it with the runtime\n"
     "                          (tsl_module_load_so) or run it with tessel-device-run (cross/)\n"
     "\n  tunecli compile MODEL [--target T] [--records FILE] [--no-layout] [--no-auto-schedule] [--verbose]\n"
     "                  -o FILE.so\n"
     "                          compile a whole model (built-in name or .onnx) ahead of time into\n"
     "                          one file: kernels + plan + weights (docs/aot.md); run it with\n"
     "                          tessel-device-app (examples/device_app.c, cross/)"},
    {"records", tunecli_records,
     "records show FILE [--workload TEXT] | best FILE [--target T] | merge OUT IN... |\n"
     "        pick-best IN OUT\n"
     "                          inspect tuning records (docs/records.md); merge keeps the fastest\n"
     "                          record per configuration, pick-best the fastest per workload"},
    {"report", tunecli_report,
     "report RECORDS [--model M] [--target T] [--threads N] [--runs N] -o FILE.html\n"
     "                          one self-contained HTML page (inline SVG, no network): per layer the\n"
     "                          tuning curve (best GFLOP/s against trials, a series per algorithm) and\n"
     "                          the chosen algorithm and config; with --model, the model compiled\n"
     "                          without and with RECORDS, run alternately N times (default 15):\n"
     "                          per-layer time bars and end to end (docs/tuning.md)"},
    {"rpc-server", tunecli_rpc_server,
     "rpc-server --key KEY [--host 127.0.0.1] [--port 9190] [--timeout S] [--qemu-cpu CPU] [--server PATH]\n"
     "                          run the AArch64 device server (under qemu-aarch64 on this host) that\n"
     "                          `tune --target armv8 --device tcp://HOST:PORT --key KEY` measures on"},
    {"rpc-info", tunecli_rpc_info,
     "rpc-info --device tcp://HOST:PORT --key KEY\n"
     "                          handshake with a device server: its fingerprint and caps"},
};

static const char *op_options =
    "OPTIONS of show, run-op, compile OP and tune-op:\n"
    "  --file FILE             OP is defined in this DSL file (docs/dsl.md), not built in\n"
    "  --shape IN=AxBx..       shape of input IN (built-in ops start from their example shapes,\n"
    "                          shown by `tunecli show OP`; ops from --file need every shape)\n"
    "  --param NAME=VALUE      a scalar parameter (built-in ops: example values, else defaults)\n"
    "  --schedule FILE         schedule steps, one a line (`split(out, y, 8)`), applied to the\n"
    "                          initial schedule instead of the default one (errors: FILE:LINE:COL\n"
    "                          and the step); tune-op measures it as the starting point to beat\n"
    "  --records FILE          (show, run-op, compile) the schedule of the best record of this\n"
    "                          operator instance on --target (show prints it as schedule text);\n"
    "                          a conv layer's family operator (conv2d_nchwc_bias, ..._bias_add,\n"
    "                          ..._grouped, ..._grouped_add) takes its best record over every\n"
    "                          algorithm, as the graph compiler does (the program is that algorithm's);\n"
    "                          an algorithm's operator (conv2d_nchwc_im2col, ...) its own best of the layer\n"
    "  --threads N             (show, run-op, compile) look records up for N threads (records timed\n"
    "                          with N first), run with N and estimate (--static-cost) over N cores\n"
    "  --template NAME         (show, run-op, compile) the default config of that template of OP\n"
    "                          (the schedule used where no record applies; show OP lists them)\n"
    "  --target T              host (default), x86-64-avx2, x86-64-avx512, armv8,\n"
    "                          armv8.2-a+dotprod; options: \"T -mcpu=NAME\", \"T -device=tcp://H:P\".\n"
    "                          show --asm/--llvm work for every target; running needs one the\n"
    "                          host can execute\n";


static void usage(FILE *f) {
  fprintf(f, "tunecli %s (LLVM %s): tessel's command-line tool\n\nusage: tunecli COMMAND [ARGS]\n\n", TSL_VERSION,
          TSL_LLVM_VERSION);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) fprintf(f, "  tunecli %s\n\n", commands[i].usage);
  fprintf(f, "  tunecli help | --version\n\n%s", op_options);
  fprintf(f, "Every command: --no-cache (or TSL_CACHE=0) compiles without the on-disk JIT object cache\n"
             "  ($TSL_CACHE_DIR, else $XDG_CACHE_HOME/tessel, else ~/.cache/tessel)\n");
}

int main(int argc, char **argv) {
  /* --no-cache anywhere: compile without the on-disk JIT object cache (as TSL_CACHE=0) */
  int kept = 1;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--no-cache") == 0) tsl_jit_cache_set_enabled(false);
    else argv[kept++] = argv[i];
  argc = kept;
  argv[argc] = NULL;
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
