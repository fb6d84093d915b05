/* The thread-safety contract of include/tessel/tessel.h: one compiled model, many
 * contexts on many application threads (pthreads), each with its own thread count,
 * inputs changing between runs; every output equals the one a single thread computes
 * with one context, and the shared input's equals ONNX Runtime's (when
 * ../shared/models is there). */
#include <CUnit/Basic.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi_tests.h"
#include "models/models_util.h"
#include "tessel/tessel.h"

enum { APP_THREADS = 4, INPUTS = 4, ROUNDS = 3, IN_FLOATS = 3 * 224 * 224, OUT_FLOATS = 1000 };

typedef struct app_thread {
  const tsl_compiled *c;
  int id, num_threads;
  float *const *inputs;            /* INPUTS inputs */
  const float (*expected)[OUT_FLOATS]; /* the single-threaded outputs */
  int mismatches;
  tsl_status st;
  char error[256];
} app_thread;

static void *app_main(void *arg) {
  app_thread *t = arg;
  tsl_context *ctx = NULL;
  float out[OUT_FLOATS];
  t->st = tsl_context_new(t->c, &ctx);
  if (t->st == TSL_OK) t->st = tsl_context_set_num_threads(ctx, t->num_threads);
  for (int r = 0; r < ROUNDS && t->st == TSL_OK; r++) {
    int k = (t->id + r) % INPUTS;
    t->st = tsl_context_set_input_by_name(ctx, "input", t->inputs[k], IN_FLOATS * sizeof(float));
    if (t->st == TSL_OK) t->st = tsl_context_run(ctx);
    if (t->st == TSL_OK) t->st = tsl_context_get_output(ctx, 0, out, sizeof out);
    /* the same kernels in the same order on each element: bitwise the same */
    if (t->st == TSL_OK && memcmp(out, t->expected[k], sizeof out) != 0) t->mismatches++;
  }
  if (t->st != TSL_OK) snprintf(t->error, sizeof t->error, "%s", tsl_last_error());
  tsl_context_free(ctx);
  return NULL;
}

static void test_capi_many_app_threads_one_compiled_model(void) {
  const char *dir = mt_shared_models_dir("capi_many_app_threads (ONNX Runtime check)");
  char path[4096];
  float *ort = NULL;
  float *inputs[INPUTS];
  for (int k = 0; k < INPUTS; k++) {
    inputs[k] = malloc(IN_FLOATS * sizeof(float));
    CU_ASSERT_PTR_NOT_NULL_FATAL(inputs[k]);
    unsigned seed = 100u + (unsigned)k;
    for (int i = 0; i < IN_FLOATS; i++) {
      seed = seed * 1664525u + 1013904223u;
      inputs[k][i] = (float)(seed >> 9) / 4194304.0f - 1.0f;
    }
  }
  const char *source = "squeezenet1_1";
  if (dir) { /* the shared export, its input as input 0 and ONNX Runtime's output */
    snprintf(path, sizeof path, "%s/squeezenet1_1.onnx", dir);
    source = path;
    char f[4096];
    size_t n = 0, m = 0;
    snprintf(f, sizeof f, "%s/input_1x3x224x224.f32", dir);
    float *in = mt_read_file(f, &n);
    snprintf(f, sizeof f, "%s/squeezenet1_1.ort.f32", dir);
    ort = mt_read_file(f, &m);
    CU_ASSERT_FATAL(in && ort && n == IN_FLOATS * sizeof(float) && m == OUT_FLOATS * sizeof(float));
    memcpy(inputs[0], in, n);
    free(in);
  }
  tsl_model *model = NULL;
  tsl_compiled *c = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_model_load(source, &model), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_model_compile(model, "host", NULL, &c), TSL_OK);
  tsl_model_free(model);

  /* one thread, one context: the expected outputs */
  static float expected[INPUTS][OUT_FLOATS];
  tsl_context *ctx = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_context_new(c, &ctx), TSL_OK);
  for (int k = 0; k < INPUTS; k++) {
    CU_ASSERT_EQUAL(tsl_context_set_input(ctx, 0, inputs[k], IN_FLOATS * sizeof(float)), TSL_OK);
    CU_ASSERT_EQUAL(tsl_context_run(ctx), TSL_OK);
    CU_ASSERT_EQUAL(tsl_context_get_output(ctx, 0, expected[k], sizeof expected[k]), TSL_OK);
  }
  tsl_context_free(ctx);
  if (ort) {
    double scale = 0, worst = 0;
    for (int i = 0; i < OUT_FLOATS; i++) scale = fmax(scale, fabs(ort[i]));
    for (int i = 0; i < OUT_FLOATS; i++) worst = fmax(worst, fabs((double)expected[0][i] - ort[i]));
    CU_ASSERT(worst <= 2e-4 * scale);
  }
  CU_ASSERT(memcmp(expected[0], expected[1], sizeof expected[0]) != 0);

  /* APP_THREADS application threads at once, each its own context and thread count */
  app_thread th[APP_THREADS];
  pthread_t pt[APP_THREADS];
  for (int i = 0; i < APP_THREADS; i++) {
    th[i] = (app_thread){.c = c, .id = i, .num_threads = i % 4, .inputs = inputs, .expected = expected};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&pt[i], NULL, app_main, &th[i]), 0);
  }
  for (int i = 0; i < APP_THREADS; i++) {
    pthread_join(pt[i], NULL);
    CU_ASSERT_EQUAL(th[i].st, TSL_OK);
    if (th[i].st != TSL_OK) printf("\n    app thread %d: %s", i, th[i].error);
    CU_ASSERT_EQUAL(th[i].mismatches, 0);
  }
  tsl_compiled_free(c);
  for (int k = 0; k < INPUTS; k++) free(inputs[k]);
  free(ort);
}

void tsl_tests_capi_threads(void) {
  CU_pSuite s = CU_add_suite("capi_threads", NULL, NULL);
  CU_add_test(s, "capi_many_app_threads_one_compiled_model", test_capi_many_app_threads_one_compiled_model);
}
