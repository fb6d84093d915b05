/* The application API (include/tessel/tessel.h) as an app uses it: versions; inputs and
 * outputs by index and by name with their shapes, on a model with two of each checked
 * against naive loops written here; another batch size (that model, and the shared
 * SqueezeNet 1.1 / ShuffleNetV2 exports against ONNX Runtime's outputs); thread counts
 * per compiled model and per context. The concurrency contract: test_capi_threads.c. */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capi_tests.h"
#include "models/onnx_build.h"
#include "models/models_util.h"
#include "tessel/plan.h"
#include "tessel/tessel.h"
#include "tsl_config.h"

/* The two-input, two-output model: a, b [N,C,H,W]; act = Relu(Conv3x3(a, w, bias), pads 1);
 * sum = a + b; outputs in the order sum, act. */
enum { MC = 2, MK = 3, MH = 5, MW = 6 };

static void fill(float *x, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
  }
}

static float g_w[MK * MC * 9], g_bias[MK];

static int write_two_io_model(char *path, size_t n) {
  char dir[] = "/tmp/tsl_capi_XXXXXX";
  if (!mkdtemp(dir)) return -1;
  snprintf(path, n, "%s/two_io.onnx", dir);
  fill(g_w, sizeof g_w / sizeof g_w[0], 11);
  fill(g_bias, MK, 12);
  ob_model *m = ob_new(13);
  int64_t xs[4] = {1, MC, MH, MW}, ws[4] = {MK, MC, 3, 3}, bs[1] = {MK};
  ob_input(m, "a", OB_FLOAT, 4, xs);
  ob_input(m, "b", OB_FLOAT, 4, xs);
  ob_init_f32(m, "w", 4, ws, g_w, OB_RAW, NULL, 0);
  ob_init_f32(m, "bias", 1, bs, g_bias, OB_RAW, NULL, 0);
  ob_node(m, "Conv", "conv", 3, (const char *[]){"a", "w", "bias"}, 1, (const char *[]){"c"});
  ob_attr_ints(m, "kernel_shape", 2, (int64_t[]){3, 3});
  ob_attr_ints(m, "pads", 4, (int64_t[]){1, 1, 1, 1});
  ob_node(m, "Relu", "relu", 1, (const char *[]){"c"}, 1, (const char *[]){"act"});
  ob_node(m, "Add", "add", 2, (const char *[]){"a", "b"}, 1, (const char *[]){"sum"});
  ob_output(m, "sum");
  ob_output(m, "act");
  size_t bytes;
  uint8_t *buf = ob_pack(m, &bytes);
  FILE *f = fopen(path, "wb");
  int rc = f && fwrite(buf, bytes, 1, f) == 1 ? 0 : -1;
  if (f) fclose(f);
  free(buf);
  ob_free(m);
  return rc;
}

static void remove_model(const char *path) {
  unlink(path);
  char dir[512];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  rmdir(dir);
}

/* The naive reference of act for batch nb. */
static void ref_act(const float *a, int nb, float *act) {
  for (int n = 0; n < nb; n++)
    for (int k = 0; k < MK; k++)
      for (int y = 0; y < MH; y++)
        for (int x = 0; x < MW; x++) {
          double s = g_bias[k];
          for (int c = 0; c < MC; c++)
            for (int dy = 0; dy < 3; dy++)
              for (int dx = 0; dx < 3; dx++) {
                int iy = y + dy - 1, ix = x + dx - 1;
                if (iy < 0 || iy >= MH || ix < 0 || ix >= MW) continue;
                s += (double)a[((n * MC + c) * MH + iy) * MW + ix] * g_w[((k * MC + c) * 3 + dy) * 3 + dx];
              }
          act[((n * MK + k) * MH + y) * MW + x] = s > 0 ? (float)s : 0.0f;
        }
}

static bool close_to(const float *x, const float *ref, size_t n, double tol) {
  for (size_t i = 0; i < n; i++)
    if (!(fabs((double)x[i] - ref[i]) <= tol)) {
      printf("\n    element %zu: %g, expected %g (tolerance %g)", i, x[i], ref[i], tol);
      return false;
    }
  return true;
}

/* Compiles m and checks the two-input model at batch nb: shapes and names by index and
 * by name, outputs against the naive loops, set and get by name = by index. */
static void check_two_io(const tsl_model *m, int nb) {
  tsl_compiled *c = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_compile(m, "host", NULL, &c), TSL_OK);
  CU_ASSERT_EQUAL(tsl_compiled_num_inputs(c), 2);
  CU_ASSERT_EQUAL(tsl_compiled_num_outputs(c), 2);
  const char *want_in[2] = {"a", "b"}, *want_out[2] = {"sum", "act"};
  int64_t want_ch[2] = {MC, MK};
  for (int i = 0; i < 2; i++) {
    const char *name = NULL;
    tsl_dtype dt;
    int ndim = 0, idx = -1;
    int64_t shape[TSL_MAX_NDIM];
    size_t bytes = 0;
    CU_ASSERT_EQUAL(tsl_compiled_input_info(c, i, &name, &dt, &ndim, shape, &bytes), TSL_OK);
    CU_ASSERT_STRING_EQUAL(name, want_in[i]);
    CU_ASSERT(tsl_dtype_equal(dt, TSL_DTYPE_F32));
    CU_ASSERT(ndim == 4 && shape[0] == nb && shape[1] == MC && shape[2] == MH && shape[3] == MW);
    CU_ASSERT_EQUAL(bytes, (size_t)nb * MC * MH * MW * 4);
    CU_ASSERT_EQUAL(tsl_compiled_input_index(c, want_in[i], &idx), TSL_OK);
    CU_ASSERT_EQUAL(idx, i);
    CU_ASSERT_EQUAL(tsl_compiled_output_info(c, i, &name, &dt, &ndim, shape, &bytes), TSL_OK);
    CU_ASSERT_STRING_EQUAL(name, want_out[i]);
    CU_ASSERT(ndim == 4 && shape[0] == nb && shape[1] == want_ch[i] && shape[2] == MH && shape[3] == MW);
    CU_ASSERT_EQUAL(bytes, (size_t)nb * want_ch[i] * MH * MW * 4);
    CU_ASSERT_EQUAL(tsl_compiled_output_index(c, want_out[i], &idx), TSL_OK);
    CU_ASSERT_EQUAL(idx, i);
  }
  size_t nin = (size_t)nb * MC * MH * MW, nact = (size_t)nb * MK * MH * MW;
  float *a = malloc(nin * 4), *b = malloc(nin * 4), *sum = malloc(nin * 4), *act = malloc(nact * 4);
  float *act2 = malloc(nact * 4), *ref = malloc(nact * 4);
  fill(a, nin, 21);
  fill(b, nin, 22);
  tsl_context *ctx = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_context_new(c, &ctx), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_set_input_by_name(ctx, "b", b, nin * 4), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_set_input(ctx, 0, a, nin * 4), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_run(ctx), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_get_output(ctx, 0, sum, nin * 4), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_get_output_by_name(ctx, "act", act, nact * 4), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_get_output(ctx, 1, act2, nact * 4), TSL_OK);
  CU_ASSERT(memcmp(act, act2, nact * 4) == 0);
  bool sum_ok = true;
  for (size_t i = 0; i < nin; i++) sum_ok &= sum[i] == a[i] + b[i];
  CU_ASSERT(sum_ok);
  ref_act(a, nb, ref);
  CU_ASSERT(close_to(act, ref, nact, 1e-5));
  /* bad names, indices and sizes: refused with a message, nothing written */
  int idx = 7;
  CU_ASSERT_EQUAL(tsl_compiled_input_index(c, "sum", &idx), TSL_ERR_NOT_FOUND);
  CU_ASSERT(strstr(tsl_last_error(), "'sum'") && strstr(tsl_last_error(), "'a', 'b'"));
  CU_ASSERT_EQUAL(idx, 7);
  CU_ASSERT_EQUAL(tsl_compiled_output_index(c, "a", &idx), TSL_ERR_NOT_FOUND);
  CU_ASSERT_EQUAL(tsl_compiled_output_index(c, NULL, &idx), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_context_set_input_by_name(ctx, "c", a, nin * 4), TSL_ERR_NOT_FOUND);
  CU_ASSERT_EQUAL(tsl_context_set_input_by_name(ctx, "a", a, nin * 4 - 4), TSL_ERR_INVALID);
  CU_ASSERT(strstr(tsl_last_error(), "bytes") != NULL);
  CU_ASSERT_EQUAL(tsl_context_get_output_by_name(ctx, "act", act, nin * 4), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_context_get_output_by_name(ctx, "nope", act, nact * 4), TSL_ERR_NOT_FOUND);
  CU_ASSERT_EQUAL(tsl_context_get_output(ctx, 2, act, nact * 4), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_context_get_output(ctx, -1, act, nact * 4), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_compiled_input_info(c, 2, NULL, NULL, NULL, NULL, NULL), TSL_ERR_INVALID);
  CU_ASSERT(strstr(tsl_last_error(), "out of range") != NULL);
  tsl_context_free(ctx);
  tsl_compiled_free(c);
  free(a), free(b), free(sum), free(act), free(act2), free(ref);
}

static void test_capi_two_inputs_two_outputs_by_name_and_batch(void) {
  char path[256];
  CU_ASSERT_EQUAL_FATAL(write_two_io_model(path, sizeof path), 0);
  tsl_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_load(path, &m), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_num_inputs(m), 2);
  CU_ASSERT_EQUAL(tsl_model_num_outputs(m), 2);
  const char *name = NULL;
  int ndim = 0;
  int64_t shape[TSL_MAX_NDIM];
  CU_ASSERT_EQUAL(tsl_model_output_info(m, 1, &name, NULL, &ndim, shape), TSL_OK);
  CU_ASSERT(strcmp(name, "act") == 0 && ndim == 4 && shape[0] == 1 && shape[1] == MK);
  CU_ASSERT_EQUAL(tsl_model_input_info(m, 2, &name, NULL, &ndim, shape), TSL_ERR_INVALID);
  check_two_io(m, 1);
  CU_ASSERT_EQUAL(tsl_model_set_batch(m, 3), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_input_info(m, 1, &name, NULL, &ndim, shape), TSL_OK);
  CU_ASSERT(strcmp(name, "b") == 0 && shape[0] == 3 && shape[1] == MC);
  check_two_io(m, 3);
  CU_ASSERT_EQUAL(tsl_model_set_batch(m, 0), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_model_set_batch(NULL, 2), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_model_set_batch(m, 1), TSL_OK); /* and back */
  check_two_io(m, 1);
  tsl_model_free(m);
  remove_model(path);
}

/* A shared torchvision export at batch 2: row 0 the shared input (against ONNX
 * Runtime's output), row 1 another input (against the batch-1 compilation). */
static void check_shared_model_batch2(const char *model) {
  const char *dir = mt_shared_models_dir(model);
  if (!dir) return;
  char path[4096], in_path[4096], ref_path[4096];
  snprintf(path, sizeof path, "%s/%s.onnx", dir, model);
  snprintf(in_path, sizeof in_path, "%s/input_1x3x224x224.f32", dir);
  snprintf(ref_path, sizeof ref_path, "%s/%s.ort.f32", dir, model);
  size_t in_bytes = 0, ref_bytes = 0;
  float *in = mt_read_file(in_path, &in_bytes), *ort = mt_read_file(ref_path, &ref_bytes);
  CU_ASSERT_FATAL(in && ort && in_bytes == 602112 && ref_bytes == 4000);
  float *in2 = malloc(2 * in_bytes), out2[2000], out1[1000];
  memcpy(in2, in, in_bytes);
  fill(in2 + 150528, 150528, 5);
  tsl_model *m = NULL;
  tsl_compiled *c1 = NULL, *c2 = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_load(path, &m), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_model_compile(m, "host", NULL, &c1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_model_set_batch(m, 2), TSL_OK);
  tsl_status st = tsl_model_compile(m, "host", NULL, &c2);
  CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
  tsl_model_free(m);
  size_t bytes = 0;
  int64_t shape[TSL_MAX_NDIM];
  CU_ASSERT_EQUAL(tsl_compiled_output_info(c2, 0, NULL, NULL, NULL, shape, &bytes), TSL_OK);
  CU_ASSERT(shape[0] == 2 && shape[1] == 1000 && bytes == sizeof out2);
  tsl_context *x1 = NULL, *x2 = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_context_new(c1, &x1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_context_new(c2, &x2), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_set_input_by_name(x2, "input", in2, 2 * in_bytes), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_run(x2), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_get_output_by_name(x2, "output", out2, sizeof out2), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_set_input(x1, 0, in2 + 150528, in_bytes), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_run(x1), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_get_output(x1, 0, out1, sizeof out1), TSL_OK);
  double scale = 0;
  for (int i = 0; i < 1000; i++) scale = fmax(scale, fabs(ort[i]));
  CU_ASSERT(close_to(out2, ort, 1000, 2e-4 * scale));
  CU_ASSERT(close_to(out2 + 1000, out1, 1000, 2e-4 * scale));
  CU_ASSERT(memcmp(out2, out2 + 1000, 4000) != 0);
  tsl_context_free(x1);
  tsl_context_free(x2);
  tsl_compiled_free(c1);
  tsl_compiled_free(c2);
  free(in), free(in2), free(ort);
}

/* tsl_compiled_num_claimed_outputs: the built-in MobileNetV2 claims outputs by default
 * (its stride-1 depthwise convs and layout transforms are below the claim threshold),
 * none with no_claim_outputs; at 2 threads both compiled models give the same output bit
 * for bit (a claim only zeroes bytes the kernel then writes), the claimed one with its
 * context set to TSL_CLAIMS_ALWAYS (tsl_context_set_claims), the plain one under the
 * default TSL_CLAIMS_AUTO (nothing to claim: its next run claims nothing). */
static void test_capi_claimed_outputs_count_and_switch(void) {
  tsl_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_load("mobilenet_v2", &m), TSL_OK);
  tsl_compile_opts o = tsl_compile_opts_default();
  o.num_threads = 2;
  tsl_compiled *claimed = NULL, *plain = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_compile_with(m, &o, &claimed), TSL_OK);
  o.no_claim_outputs = true;
  CU_ASSERT_EQUAL_FATAL(tsl_model_compile_with(m, &o, &plain), TSL_OK);
  tsl_model_free(m);
  CU_ASSERT(tsl_compiled_num_claimed_outputs(claimed) > 0);
  CU_ASSERT_EQUAL(tsl_compiled_num_claimed_outputs(plain), 0);
  CU_ASSERT_EQUAL(tsl_compiled_num_claimed_outputs(NULL), 0);
  enum { NIN = 3 * 224 * 224, NOUT = 1000 };
  float *in = malloc(NIN * sizeof *in), out[2][NOUT];
  CU_ASSERT_PTR_NOT_NULL_FATAL(in);
  for (int i = 0; i < NIN; i++) in[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  tsl_compiled *cs[2] = {claimed, plain};
  for (int k = 0; k < 2; k++) {
    tsl_context *x = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_context_new(cs[k], &x), TSL_OK);
    /* the claimed model's context claims on every run (the default times both kinds) */
    CU_ASSERT_EQUAL(tsl_context_set_claims(x, k == 0 ? TSL_CLAIMS_ALWAYS : TSL_CLAIMS_AUTO), TSL_OK);
    CU_ASSERT_EQUAL(tsl_context_claims_next(x), k == 0);
    CU_ASSERT_EQUAL(tsl_context_set_input(x, 0, in, NIN * sizeof *in), TSL_OK);
    for (int run = 0; run < 2; run++) CU_ASSERT_EQUAL(tsl_context_run(x), TSL_OK);
    CU_ASSERT_EQUAL(tsl_context_get_output(x, 0, out[k], sizeof out[k]), TSL_OK);
    tsl_context_free(x);
  }
  CU_ASSERT(memcmp(out[0], out[1], sizeof out[0]) == 0);
  CU_ASSERT_EQUAL(tsl_context_set_claims(NULL, TSL_CLAIMS_NEVER), TSL_ERR_INVALID);
  CU_ASSERT_FALSE(tsl_context_claims_next(NULL));
  CU_ASSERT_EQUAL(tsl_context_claims_kept(NULL), 0);
  tsl_context *x = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_context_new(claimed, &x), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_claims_kept(x), -1); /* AUTO, before its trial */
  CU_ASSERT_EQUAL(tsl_context_set_claims(x, (tsl_claims_mode)3), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "tsl_context_set_claims: mode 3"));
  tsl_context_free(x);
  tsl_compiled_free(claimed);
  tsl_compiled_free(plain);
  free(in);
}

static void test_capi_batch2_squeezenet1_1(void) { check_shared_model_batch2("squeezenet1_1"); }
/* its channel shuffles are Reshapes whose target shape holds the batch */
static void test_capi_batch2_shufflenet_v2(void) { check_shared_model_batch2("shufflenet_v2_x1_0"); }

static void test_capi_batch_errors(void) {
  tsl_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_load("squeezenet1_1", &m), TSL_OK);
  CU_ASSERT_EQUAL(tsl_model_set_batch(m, -4), TSL_ERR_INVALID);
  CU_ASSERT(strstr(tsl_last_error(), "-4") != NULL);
  int64_t shape[TSL_MAX_NDIM];
  CU_ASSERT_EQUAL(tsl_model_input_info(m, 0, NULL, NULL, NULL, shape), TSL_OK);
  CU_ASSERT_EQUAL(shape[0], 1); /* unchanged */
  CU_ASSERT_EQUAL(tsl_model_input_info(NULL, 0, NULL, NULL, NULL, shape), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_model_num_inputs(NULL), 0);
  tsl_model_free(m);
}

/* Pool workers alive now: threads of this process named "tessel-w<i>" (parallel.c). */
static int pool_workers(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[300], comm[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    if (fgets(comm, sizeof comm, f)) n += strncmp(comm, "tessel-w", 8) == 0;
    fclose(f);
  }
  closedir(d);
  return n;
}

static void test_capi_threads_per_compiled_model_and_context(void) {
  int process_threads = tsl_get_num_threads();
  tsl_model *m = NULL;
  tsl_compiled *c = NULL, *c3 = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_load("squeezenet1_1", &m), TSL_OK);
  tsl_compile_opts o = tsl_compile_opts_default();
  CU_ASSERT(o.target == NULL && o.records == NULL && o.num_threads == 0);
  o.num_threads = TSL_MAX_THREADS + 1;
  CU_ASSERT_EQUAL(tsl_model_compile_with(m, &o, &c), TSL_ERR_INVALID);
  CU_ASSERT(c == NULL && strstr(tsl_last_error(), "num_threads") != NULL);
  o.num_threads = 1;
  CU_ASSERT_EQUAL_FATAL(tsl_model_compile_with(m, &o, &c), TSL_OK);
  o.num_threads = 3;
  CU_ASSERT_EQUAL_FATAL(tsl_model_compile_with(m, &o, &c3), TSL_OK);
  tsl_model_free(m);
  CU_ASSERT_EQUAL(tsl_compiled_num_threads(c), 1);
  CU_ASSERT_EQUAL(tsl_compiled_num_threads(c3), 3);
  CU_ASSERT_EQUAL(tsl_get_num_threads(), process_threads); /* compiling left it alone */
  tsl_context *ctx = NULL, *ctx3 = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_context_new(c, &ctx), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_context_new(c3, &ctx3), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_num_threads(ctx), 1);
  CU_ASSERT_EQUAL(tsl_context_num_threads(ctx3), 3);
  CU_ASSERT_EQUAL(tsl_context_set_num_threads(ctx, 2), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_num_threads(ctx), 2);
  CU_ASSERT_EQUAL(tsl_context_set_num_threads(ctx, 0), TSL_OK); /* back to the compiled model's */
  CU_ASSERT_EQUAL(tsl_context_num_threads(ctx), 1);
  CU_ASSERT_EQUAL(tsl_context_set_num_threads(ctx, -1), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_context_set_num_threads(ctx, TSL_MAX_THREADS + 1), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_context_set_num_threads(NULL, 1), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_context_num_threads(ctx), 1);
  CU_ASSERT_EQUAL(tsl_context_num_threads(NULL), 0);
  /* the model-file side (tessel/plan.h) refuses the same way */
  int idx;
  CU_ASSERT_EQUAL(tsl_graph_ctx_set_num_threads(NULL, 1), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_graph_ctx_num_threads(NULL), 0);
  CU_ASSERT_EQUAL(tsl_graph_plan_find_input(NULL, "input", &idx), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_graph_plan_find_output(NULL, "output", &idx), TSL_ERR_INVALID);

  float *x = malloc(602112), out1[1000], out3[1000];
  fill(x, 150528, 3);
  /* the pool grows to what a run asks for: none for 1 thread, 2 workers for 3 */
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(1), TSL_OK);
  tsl_thread_pool_shutdown();
  CU_ASSERT_EQUAL(pool_workers(), 0);
  CU_ASSERT_EQUAL(tsl_context_set_input(ctx, 0, x, 602112), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_run(ctx), TSL_OK);
  CU_ASSERT_EQUAL(pool_workers(), 0);
  CU_ASSERT_EQUAL(tsl_context_set_input(ctx3, 0, x, 602112), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_run(ctx3), TSL_OK);
  CU_ASSERT_EQUAL(pool_workers(), 2);
  CU_ASSERT_EQUAL(tsl_get_num_threads(), 1); /* the run's count was its own */
  CU_ASSERT_EQUAL(tsl_context_get_output(ctx, 0, out1, sizeof out1), TSL_OK);
  CU_ASSERT_EQUAL(tsl_context_get_output(ctx3, 0, out3, sizeof out3), TSL_OK);
  CU_ASSERT(close_to(out3, out1, 1000, 1e-4));
  tsl_thread_pool_shutdown();
  CU_ASSERT_EQUAL(tsl_set_num_threads(process_threads), TSL_OK);
  free(x);
  tsl_context_free(ctx);
  tsl_context_free(ctx3);
  tsl_compiled_free(c);
  tsl_compiled_free(c3);
}

static void test_capi_versions(void) {
  CU_ASSERT_STRING_EQUAL(tsl_version_string(), TSL_VERSION);     /* meson's project version */
  CU_ASSERT_STRING_EQUAL(TSL_VERSION_STRING, TSL_VERSION);
  int major = -1, minor = -1, patch = -1;
  tsl_version_numbers(&major, &minor, &patch);
  char buf[64];
  snprintf(buf, sizeof buf, "%d.%d.%d", major, minor, patch);
  CU_ASSERT_STRING_EQUAL(buf, TSL_VERSION);
  snprintf(buf, sizeof buf, "%d.%d", major, minor);
  CU_ASSERT_STRING_EQUAL(buf, TSL_SOVERSION);
  tsl_version_numbers(NULL, NULL, NULL);
  CU_ASSERT_EQUAL(tsl_model_file_format_version(), TSL_MODEL_FILE_FORMAT_VERSION);
  CU_ASSERT(TSL_MODEL_FILE_FORMAT_VERSION >= 1);
}

void tsl_tests_capi(void) {
  CU_pSuite s = CU_add_suite("capi", NULL, NULL);
  CU_add_test(s, "capi_versions", test_capi_versions);
  CU_add_test(s, "capi_two_inputs_two_outputs_by_name_and_batch", test_capi_two_inputs_two_outputs_by_name_and_batch);
  CU_add_test(s, "capi_batch2_squeezenet1_1", test_capi_batch2_squeezenet1_1);
  CU_add_test(s, "capi_batch2_shufflenet_v2", test_capi_batch2_shufflenet_v2);
  CU_add_test(s, "capi_batch_errors", test_capi_batch_errors);
  CU_add_test(s, "capi_claimed_outputs_count_and_switch", test_capi_claimed_outputs_count_and_switch);
  CU_add_test(s, "capi_threads_per_compiled_model_and_context", test_capi_threads_per_compiled_model_and_context);
  tsl_tests_capi_threads();
}
