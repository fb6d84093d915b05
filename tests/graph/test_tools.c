/* `tunecli run` as a user runs it: the key lines of its output, the top class of the
 * shared SqueezeNet on the shared input (ONNX Runtime's), and usage errors. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "graph_tests.h"
#include "models/models_util.h"

/* Runs cmd with stderr folded into stdout: exit status (128 + signal when killed) and
 * the first n - 1 bytes of output in out. */
static int run(const char *cmd, char *out, size_t n) {
  char full[4600];
  snprintf(full, sizeof full, "%s 2>&1", cmd);
  FILE *p = popen(full, "r");
  if (!p) return -1;
  size_t len = 0, r;
  char sink[4096];
  while ((r = fread(len < n - 1 ? out + len : sink, 1, len < n - 1 ? n - 1 - len : sizeof sink, p)) > 0)
    if (len < n - 1) len += r;
  out[len] = '\0';
  int status = pclose(p);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char out[1 << 16];

static void expect(const char *args, int code, const char *needle) {
  char cmd[4400];
  snprintf(cmd, sizeof cmd, "%s %s", TSL_TUNECLI_PATH, args);
  int rc = run(cmd, out, sizeof out);
  if (rc != code || !strstr(out, needle))
    printf("\n  `tunecli %s`: exit %d (want %d), output lacks '%s':\n%.2000s\n", args, rc, code, needle, out);
  CU_ASSERT_EQUAL(rc, code);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, needle));
}

static void test_tunecli_run_reports_latency_memory_and_top5(void) {
  const char *dir = mt_shared_models_dir("tunecli_run_reports_latency_memory_and_top5");
  char args[4300];
  if (dir) {
    mt_manifest_model man;
    CU_ASSERT_FATAL(mt_manifest_read(dir, "squeezenet1_1", &man));
    snprintf(args, sizeof args, "run %s/squeezenet1_1.onnx --input %s/input_1x3x224x224.f32 --repeat 3 --threads 1", dir,
             dir);
    char top1[32];
    snprintf(top1, sizeof top1, "top-5 of output 0: %d ", man.top5[0]);
    expect(args, 0, top1);
  } else {
    expect("run squeezenet1_1 --repeat 3 --threads 1", 0, "top-5 of output 0:");
  }
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "median"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "planned peak activations"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "threads 1, 3 runs"));
}

static void test_tunecli_run_refuses_bad_arguments(void) {
  expect("run", 2, "which model?");
  expect("run squeezenet1_1 --threads 0", 2, "--threads wants an integer");
  expect("run squeezenet1_1 --repeat x", 2, "--repeat wants an integer");
  expect("run squeezenet1_1 --bogus", 2, "unknown option");
  expect("run a b", 2, "one model please");
  expect("run no_such_net", 1, "no_such_net");
  expect("run /nonexistent/model.onnx", 1, "/nonexistent/model.onnx");
  expect("run squeezenet1_1 --claims sometimes", 2, "--claims wants auto, always or never");
}

/* --claims on a model that claims outputs (MobileNetV2's stride-1 depthwise convs) at 2
 * threads: auto runs its trial as warm-ups and says what it keeps; the fixed modes say
 * themselves (the same top-5 either way: a claim only zeroes bytes the kernel writes). */
static void test_tunecli_run_claims_modes(void) {
  expect("run mobilenet_v2 --repeat 2 --threads 2", 0, "--claims auto, ");
  /* what the trial kept (under TSL_PARALLEL_SCHEDULE=dynamic nothing can claim: no trial) */
  CU_ASSERT(strstr(out, "--claims auto, timed faster here: ") || strstr(out, "--claims auto, still in its trial"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "claimed outputs: "));
  char top_auto[128];
  const char *t = strstr(out, "top-5 of output 0:");
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  snprintf(top_auto, sizeof top_auto, "%.60s", t);
  expect("run mobilenet_v2 --repeat 2 --threads 2 --claims always", 0, "--claims always)");
  CU_ASSERT_PTR_NOT_NULL(strstr(out, top_auto));
  expect("run mobilenet_v2 --repeat 2 --threads 2 --claims never", 0, "--claims never)");
  CU_ASSERT_PTR_NOT_NULL(strstr(out, top_auto));
}

void tsl_tests_graph_tools(void) {
  CU_pSuite s = CU_add_suite("graph_tools", NULL, NULL);
  CU_add_test(s, "tunecli_run_reports_latency_memory_and_top5", test_tunecli_run_reports_latency_memory_and_top5);
  CU_add_test(s, "tunecli_run_refuses_bad_arguments", test_tunecli_run_refuses_bad_arguments);
  CU_add_test(s, "tunecli_run_claims_modes", test_tunecli_run_claims_modes);
}
