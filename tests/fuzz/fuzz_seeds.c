/* fuzz-seeds OUTDIR: writes the seed corpora of the fuzz harnesses (docs/fuzzing.md)
 * into OUTDIR/<harness>/, one file a seed, from the repository's own sources of valid
 * input: small ONNX models built with the tests' ModelProto builder, the DSL texts of the
 * operator registry, records printed by tsl_record_to_json, the default and template
 * schedules of the schedule harness's programs printed as text, and RPC requests
 * encoded with the wire format's writer. scripts/fuzz.sh runs it at fuzz time (no seed
 * is committed) and adds the ONNX node tests of libonnx-testdata.
 * Exit status: 0, or 1 when a seed could not be made or written (the message says which). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "device/rpc_proto.h"
#include "ops/registry.h"
#include "fuzz_programs.h"
#include "ir/arena.h"
#include "models/onnx_build.h"
#include "schedule/schedule.h"
#include "schedule/template.h"
#include "target/target.h"
#include "ops/algorithm.h"
#include "tessel/tensor.h"
#include "tuner/records.h"

#define FUZZ_RPC_KEY "fuzz-key" /* the key fuzz_rpc_request.c decodes with */

static const char *outdir;
static int failures;

static void seed(const char *harness, const char *name, const void *data, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", outdir, harness);
  if (mkdir(path, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "fuzz-seeds: cannot make %s: %s\n", path, strerror(errno));
    failures++;
    return;
  }
  snprintf(path, sizeof path, "%s/%s/%s", outdir, harness, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "fuzz-seeds: cannot write %s: %s\n", path, strerror(errno));
    failures++;
  }
}

/* ---- ONNX models: one per operator family the importer and compiler take ---- */

static void model_seed(ob_model *m, const char *name) {
  size_t n;
  uint8_t *buf = ob_pack(m, &n);
  seed("onnx_load", name, buf, n);
  seed("onnx_compile", name, buf, n);
  free(buf);
  ob_free(m);
}

static void fill(float *w, int n) {
  for (int i = 0; i < n; i++) w[i] = (float)(i % 7) * 0.25f - 0.75f;
}

static void onnx_seeds(void) {
  float w[256];
  fill(w, 256);
  ob_model *m = ob_new(13); /* conv + relu */
  ob_input(m, "x", OB_FLOAT, 4, (const int64_t[]){1, 2, 5, 5});
  ob_init_f32(m, "w", 4, (const int64_t[]){3, 2, 3, 3}, w, OB_RAW, NULL, 0);
  ob_init_f32(m, "b", 1, (const int64_t[]){3}, w, OB_TYPED, NULL, 0);
  ob_node(m, "Conv", "conv", 3, (const char *[]){"x", "w", "b"}, 1, (const char *[]){"c"});
  ob_attr_ints(m, "pads", 4, (const int64_t[]){1, 1, 1, 1});
  ob_node(m, "Relu", "relu", 1, (const char *[]){"c"}, 1, (const char *[]){"y"});
  ob_output(m, "y");
  model_seed(m, "conv_relu.onnx");

  m = ob_new(11); /* pools, batch norm, clip */
  ob_input(m, "x", OB_FLOAT, 4, (const int64_t[]){1, 2, 6, 6});
  const char *bn[4] = {"s", "bb", "mean", "var"};
  for (int k = 0; k < 4; k++) ob_init_f32(m, bn[k], 1, (const int64_t[]){2}, w + 4, OB_RAW, NULL, 0);
  ob_node(m, "BatchNormalization", "bn", 5, (const char *[]){"x", "s", "bb", "mean", "var"}, 1,
          (const char *[]){"n"});
  ob_node(m, "MaxPool", "mp", 1, (const char *[]){"n"}, 1, (const char *[]){"p"});
  ob_attr_ints(m, "kernel_shape", 2, (const int64_t[]){2, 2});
  ob_attr_ints(m, "strides", 2, (const int64_t[]){2, 2});
  ob_node(m, "AveragePool", "ap", 1, (const char *[]){"p"}, 1, (const char *[]){"a"});
  ob_attr_ints(m, "kernel_shape", 2, (const int64_t[]){3, 3});
  ob_attr_ints(m, "pads", 4, (const int64_t[]){1, 1, 1, 1});
  ob_attr_int(m, "ceil_mode", 1);
  ob_node(m, "Clip", "clip", 1, (const char *[]){"a"}, 1, (const char *[]){"k"});
  ob_node(m, "GlobalAveragePool", "gap", 1, (const char *[]){"k"}, 1, (const char *[]){"y"});
  ob_output(m, "y");
  model_seed(m, "pool_bn_clip.onnx");

  m = ob_new(13); /* flatten, gemm, softmax */
  ob_input(m, "x", OB_FLOAT, 4, (const int64_t[]){1, 3, 2, 2});
  ob_init_f32(m, "fw", 2, (const int64_t[]){4, 12}, w, OB_RAW, NULL, 0);
  ob_init_f32(m, "fb", 1, (const int64_t[]){4}, w + 12, OB_RAW, NULL, 0);
  ob_node(m, "Flatten", "flat", 1, (const char *[]){"x"}, 1, (const char *[]){"f"});
  ob_node(m, "Gemm", "fc", 3, (const char *[]){"f", "fw", "fb"}, 1, (const char *[]){"g"});
  ob_attr_int(m, "transB", 1);
  ob_node(m, "Softmax", "sm", 1, (const char *[]){"g"}, 1, (const char *[]){"y"});
  ob_output(m, "y");
  model_seed(m, "flatten_gemm_softmax.onnx");

  m = ob_new(13); /* add, mul, concat, reshape (constant shape input), transpose */
  ob_input(m, "a", OB_FLOAT, 4, (const int64_t[]){1, 2, 3, 3});
  ob_input(m, "b", OB_FLOAT, 4, (const int64_t[]){1, 2, 3, 3});
  ob_init_i64(m, "shape", 1, (const int64_t[]){3}, (const int64_t[]){1, 4, -1}, OB_RAW);
  ob_node(m, "Add", "add", 2, (const char *[]){"a", "b"}, 1, (const char *[]){"s"});
  ob_node(m, "Mul", "mul", 2, (const char *[]){"s", "b"}, 1, (const char *[]){"p"});
  ob_node(m, "Concat", "cat", 2, (const char *[]){"s", "p"}, 1, (const char *[]){"c"});
  ob_attr_int(m, "axis", 1);
  ob_node(m, "Reshape", "rs", 2, (const char *[]){"c", "shape"}, 1, (const char *[]){"r"});
  ob_node(m, "Transpose", "tr", 1, (const char *[]){"r"}, 1, (const char *[]){"y"});
  ob_attr_ints(m, "perm", 3, (const int64_t[]){0, 2, 1});
  ob_output(m, "y");
  model_seed(m, "add_mul_concat_reshape.onnx");

  m = ob_new(13); /* slice, split, pad, matmul, div */
  ob_input(m, "x", OB_FLOAT, 2, (const int64_t[]){4, 6});
  ob_init_i64(m, "st", 1, (const int64_t[]){1}, (const int64_t[]){1}, OB_RAW);
  ob_init_i64(m, "en", 1, (const int64_t[]){1}, (const int64_t[]){5}, OB_RAW);
  ob_init_i64(m, "pads", 1, (const int64_t[]){4}, (const int64_t[]){0, 1, 0, 1}, OB_RAW);
  ob_init_f32(m, "mw", 2, (const int64_t[]){5, 3}, w, OB_RAW, NULL, 0);
  ob_node(m, "Slice", "sl", 3, (const char *[]){"x", "st", "en"}, 1, (const char *[]){"s"});
  ob_node(m, "Split", "sp", 1, (const char *[]){"s"}, 2, (const char *[]){"s0", "s1"});
  ob_attr_int(m, "axis", 1);
  ob_node(m, "Pad", "pad", 2, (const char *[]){"s0", "pads"}, 1, (const char *[]){"pd"});
  ob_node(m, "Div", "div", 2, (const char *[]){"pd", "pd"}, 1, (const char *[]){"d"});
  ob_node(m, "MatMul", "mm", 2, (const char *[]){"d", "mw"}, 1, (const char *[]){"y"});
  ob_output(m, "y");
  model_seed(m, "slice_split_pad_matmul.onnx");

  m = ob_new(13); /* the shape chain exporters emit: Shape, Gather, Unsqueeze, Concat */
  ob_input(m, "x", OB_FLOAT, 4, (const int64_t[]){2, 3, 2, 2});
  ob_init_i64(m, "zero", 0, NULL, (const int64_t[]){0}, OB_RAW);
  ob_init_i64(m, "minus1", 1, (const int64_t[]){1}, (const int64_t[]){-1}, OB_RAW);
  ob_init_i64(m, "axes", 1, (const int64_t[]){1}, (const int64_t[]){0}, OB_RAW);
  ob_node(m, "Shape", "shp", 1, (const char *[]){"x"}, 1, (const char *[]){"sh"});
  ob_node(m, "Gather", "gat", 2, (const char *[]){"sh", "zero"}, 1, (const char *[]){"n"});
  ob_node(m, "Unsqueeze", "uns", 2, (const char *[]){"n", "axes"}, 1, (const char *[]){"nu"});
  ob_node(m, "Concat", "cat", 2, (const char *[]){"nu", "minus1"}, 1, (const char *[]){"tgt"});
  ob_attr_int(m, "axis", 0);
  ob_node(m, "Reshape", "rs", 2, (const char *[]){"x", "tgt"}, 1, (const char *[]){"y"});
  ob_output(m, "y");
  model_seed(m, "shape_chain.onnx");

  /* a lone TensorProto (the ONNX test data format) */
  m = ob_new(13);
  ob_init_f32(m, "t", 2, (const int64_t[]){2, 3}, w, OB_RAW, NULL, 0);
  size_t n;
  uint8_t *buf = ob_pack_initializer(m, 0, &n);
  seed("onnx_load", "tensor.pb", buf, n);
  free(buf);
  ob_free(m);
}

/* ---- DSL texts ---- */

static void dsl_seeds(void) {
  int n;
  const tsl_op_info *const *ops = tsl_op_list(&n);
  for (int i = 0; i < n; i++) {
    char name[128];
    snprintf(name, sizeof name, "%s.tsl", ops[i]->name);
    seed("dsl", name, ops[i]->text, strlen(ops[i]->text));
  }
  static const char *const extra[] = {
      "op scaled_add(A: f32[M, N], B: f32[M, N], alpha: float = 1.0)\n  C[i, j] = A[i, j] + alpha * B[i, j]\n",
      "op pad_conv(data: f32[N, C, H, W], weight: f32[K, C, R, S], pad: int)\n"
      "  padded[n, c, y, x] = select(y >= pad && y < H + pad && x >= pad && x < W + pad,\n"
      "                              data[n, c, y - pad, x - pad], 0.0)\n"
      "  out[n, k, y, x] = sum(c, r, s: padded[n, c, y + r, x + s] * weight[k, c, r, s])\n"
      "    where y < H + 2*pad - R + 1, x < W + 2*pad - S + 1\n",
      "op two(x: i32[N])\n  @output\n  a[i] = x[i] * 2\n  @output\n  b[i] = max(a[i], x[N - 1 - i])\n",
  };
  for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
    char name[32];
    snprintf(name, sizeof name, "extra%zu.tsl", i);
    seed("dsl", name, extra[i], strlen(extra[i]));
  }
}

/* ---- records ---- */

static void record_line(char **text, size_t *len, const tsl_record *r) {
  char *line = tsl_record_to_json(r);
  if (!line) {
    failures++;
    return;
  }
  size_t n = strlen(line);
  char *t = realloc(*text, *len + n + 2);
  if (!t) abort();
  memcpy(t + *len, line, n);
  t[*len + n] = '\n';
  t[*len + n + 1] = '\0';
  *text = t;
  *len += n + 1;
  free(line);
}

static void records_seeds(void) {
  tsl_record *r = calloc(1, sizeof *r);
  if (!r) abort();
  snprintf(r->target, sizeof r->target, "host -mcpu=znver5");
  snprintf(r->task, sizeof r->task, "matmul");
  snprintf(r->workload, sizeof r->workload, "matmul(A:f32[64,64],B:f32[64,64])");
  snprintf(r->algorithm, sizeof r->algorithm, "matmul");
  snprintf(r->template_name, sizeof r->template_name, "matmul.blis");
  r->space_hash = 0x0123456789abcdefull;
  r->config_index = 42;
  r->nknobs = 3;
  static const char *const knobs[3] = {"tile_m", "order", "vectorize"};
  for (int k = 0; k < 3; k++) {
    snprintf(r->knob_names[k], sizeof r->knob_names[k], "%s", knobs[k]);
    r->knob_kinds[k] = (tsl_knob_kind)k;
  }
  r->config = (tsl_config){3, {8, 1, 1}};
  r->ncosts = 3;
  r->costs[0] = 1.5e-5;
  r->costs[1] = 1.25e-5;
  r->costs[2] = 2e-5;
  r->all_cost = 0.5;
  r->compile_s = 0.02;
  r->timestamp = 1.7e9;
  snprintf(r->device.cpu, sizeof r->device.cpu, "AMD EPYC");
  r->device.cores = 2;
  snprintf(r->device.isa, sizeof r->device.isa, "avx2,fma,avx512f");
  r->threads = 1;
  tsl_record_stamp(r);
  char *text = NULL;
  size_t len = 0;
  record_line(&text, &len, r);
  seed("records", "one.jsonl", text, len);
  r->error_no = TSL_MEASURE_COMPILE; /* an error record, then an in-model one */
  r->ncosts = 0;
  snprintf(r->error_msg, sizeof r->error_msg, "lower: vectorized axis of 100 lanes");
  record_line(&text, &len, r);
  r->error_no = TSL_MEASURE_OK;
  r->error_msg[0] = '\0';
  r->ncosts = 1;
  r->threads = 2;
  snprintf(r->context, sizeof r->context, "model squeezenet1_1");
  record_line(&text, &len, r);
  seed("records", "three.jsonl", text, len);
  free(text);
  free(r);
  static const char broken[] = "{\"input\": [\"host\", \"matmul\", 7], \"config\": {}, \"result\": [], \"version\": 0.2}\n"
                               "{\"broken\": \n";
  seed("records", "broken.jsonl", broken, sizeof broken - 1);
}

/* ---- schedule texts: byte k (the program, fuzz_programs.h) + the text ---- */

static void schedule_seed(int k, const char *what, const tsl_schedule *s) {
  char *text = tsl_schedule_to_string(s);
  if (!text) abort();
  size_t n = strlen(text);
  uint8_t *buf = malloc(n + 1);
  if (!buf) abort();
  buf[0] = (uint8_t)k;
  memcpy(buf + 1, text, n);
  char name[160];
  snprintf(name, sizeof name, "p%02d_%s.txt", k, what);
  seed("schedule_text", name, buf, n + 1);
  free(buf);
  free(text);
}

static void schedule_seeds(void) {
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_tuner_register_templates();
  tsl_target target;
  if (tsl_target_parse("host", &target) != TSL_OK) abort();
  const tsl_te_program *progs[FUZZ_MAX_PROGRAMS];
  const char *ops[FUZZ_MAX_PROGRAMS];
  int n = fuzz_programs(progs, ops, FUZZ_MAX_PROGRAMS);
  tsl_config_space *space = malloc(sizeof *space);
  if (!space) abort();
  for (int k = 0; k < n; k++) {
    tsl_schedule *s = NULL;
    if (tsl_schedule_create(progs[k], &s) == TSL_OK) schedule_seed(k, "default", s);
    tsl_schedule_free(s);
    const tsl_template *tpls[16];
    int nt = tsl_template_list(ops[k], tpls, 16);
    for (int t = 0; t < nt && t < 16; t++) {
      if (tpls[t]->space(progs[k], &target, space) != TSL_OK) continue;
      int64_t size = tsl_space_size(space);
      int64_t picks[3] = {-1, size / 3, size - 1};
      for (int j = 0; j < 3; j++) {
        tsl_config c;
        bool ok = j == 0 ? tpls[t]->default_config(progs[k], &target, space, &c) == TSL_OK
                         : tsl_config_from_index(space, picks[j], &c) == TSL_OK;
        s = NULL;
        if (ok && tpls[t]->apply(progs[k], &target, space, &c, &s) == TSL_OK) {
          char what[128];
          snprintf(what, sizeof what, "%s_%d", tpls[t]->name, j);
          schedule_seed(k, what, s);
        }
        tsl_schedule_free(s);
      }
    }
  }
  free(space);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
}

/* ---- RPC requests, as the tuner's client sends them (tuner/remote.c) ---- */

static void rpc_seed(const char *name, tsl_rpc_buf *b) {
  if (!b->ok) abort();
  seed("rpc_request", name, b->data, b->len);
  tsl_rpc_buf_free(b);
}

static void put_f32_buffer(tsl_rpc_buf *b, uint8_t kind, bool with_data) {
  static const float data[4] = {1, 2, 3, 4};
  tsl_rpc_put_u8(b, kind);
  tsl_rpc_put_u8(b, TSL_DT_FLOAT);
  tsl_rpc_put_u8(b, 32);
  tsl_rpc_put_u8(b, 2);
  tsl_rpc_put_u64(b, 2);
  tsl_rpc_put_u64(b, 2);
  if (with_data) tsl_rpc_put_blob(b, data, sizeof data);
}

static void rpc_seeds(void) {
  tsl_rpc_buf b;
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, TSL_RPC_HELLO);
  tsl_rpc_put_str(&b, FUZZ_RPC_KEY);
  rpc_seed("hello", &b);
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, TSL_RPC_HELLO);
  tsl_rpc_put_str(&b, "wrong-key");
  rpc_seed("hello_wrong_key", &b);
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, TSL_RPC_UPLOAD);
  tsl_rpc_put_str(&b, FUZZ_RPC_KEY);
  tsl_rpc_put_blob(&b, "\177ELF\2\1\1\0\0\0\0\0\0\0\0\0", 16);
  rpc_seed("upload", &b);
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, TSL_RPC_MEASURE);
  tsl_rpc_put_str(&b, FUZZ_RPC_KEY);
  tsl_rpc_put_u32(&b, 1);
  tsl_rpc_put_str(&b, "matmul");
  tsl_rpc_put_u32(&b, 1);    /* number */
  tsl_rpc_put_u32(&b, 3);    /* repeat */
  tsl_rpc_put_f64(&b, 10.0); /* min_repeat_ms */
  tsl_rpc_put_f64(&b, 5.0);  /* timeout */
  tsl_rpc_put_u32(&b, 0);    /* threads */
  tsl_rpc_put_u8(&b, 1);     /* want_outputs */
  tsl_rpc_put_u32(&b, 5);
  put_f32_buffer(&b, TSL_RPC_ARG_INPUT, true);
  put_f32_buffer(&b, TSL_RPC_ARG_INPUT, true);
  put_f32_buffer(&b, TSL_RPC_ARG_OUTPUT, false);
  tsl_rpc_put_u8(&b, TSL_RPC_ARG_I32);
  tsl_rpc_put_u64(&b, 7);
  tsl_rpc_put_u8(&b, TSL_RPC_ARG_I64);
  tsl_rpc_put_u64(&b, (uint64_t)-1);
  rpc_seed("measure", &b);
  tsl_rpc_buf_init(&b);
  tsl_rpc_put_header(&b, TSL_RPC_FREE);
  tsl_rpc_put_str(&b, FUZZ_RPC_KEY);
  tsl_rpc_put_u32(&b, 1);
  rpc_seed("free", &b);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fuzz-seeds OUTDIR\n");
    return 2;
  }
  outdir = argv[1];
  if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "fuzz-seeds: cannot make %s: %s\n", outdir, strerror(errno));
    return 1;
  }
  onnx_seeds();
  dsl_seeds();
  records_seeds();
  schedule_seeds();
  rpc_seeds();
  tsl_arena_free_default();
  return failures ? 1 : 0;
}
