/* Binarized squeezenet1_1 and resnet18 (zoo_binary.h). */
#include "models/zoo_binary.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct bb {
  tsl_graph *g;
  uint64_t seed;
  tsl_status st;
  int L; /* activation levels - 1: 2^abits - 1 */
  int abits;
  bool no_fusion;
} bb;

static void chk(bb *b, tsl_status st) {
  if (b->st == TSL_OK) b->st = st;
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* A per-tensor seed from the model seed and the tensor's name (weights do not depend on
 * build order). */
static uint64_t tensor_seed(const bb *b, const char *name) {
  uint64_t h = 1469598103934665603ull;
  for (const char *s = name; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  h ^= b->seed * 0x9E3779B97F4A7C15ull;
  return splitmix(&h);
}

static int add_const(bb *b, const char *name, tsl_tensor *t) {
  int id = -1;
  if (b->st != TSL_OK) {
    tsl_tensor_free(t);
    return -1;
  }
  chk(b, tsl_graph_add_constant(b->g, name, t, &id));
  return id;
}

static int f32_param(bb *b, const char *owner, const char *what, int ndim, const int64_t *shape, double lo,
                     double hi) {
  if (b->st != TSL_OK) return -1;
  char name[256];
  snprintf(name, sizeof name, "%s.%s", owner, what);
  tsl_tensor *t;
  tsl_status st = tsl_tensor_new(TSL_DTYPE_F32, ndim, shape, &t);
  if (st == TSL_OK && (st = tsl_tensor_fill_random(t, tensor_seed(b, name), lo, hi)) != TSL_OK) tsl_tensor_free(t);
  chk(b, st);
  return st == TSL_OK ? add_const(b, name, t) : -1;
}

/* Adds node `name` (value of the same name) reading in[0..n), then infers it. */
static int node(bb *b, tsl_op op, const char *name, int n, const int *in, int *id) {
  *id = -1;
  if (b->st != TSL_OK) return -1;
  for (int i = 0; i < n; i++)
    if (in[i] < 0) return -1;
  int out;
  chk(b, tsl_graph_add_value(b->g, name, &out));
  if (b->st == TSL_OK) chk(b, tsl_graph_add_node(b->g, op, name, n, in, 1, &out, id));
  return b->st == TSL_OK ? out : -1;
}

static int finish(bb *b, int id, int out) {
  if (b->st == TSL_OK) chk(b, tsl_graph_infer_node(b->g, id));
  return b->st == TSL_OK ? out : -1;
}

static void set_int(bb *b, int id, const char *name, int64_t v) {
  if (b->st == TSL_OK) chk(b, tsl_graph_set_attr_int(b->g, id, name, v));
}

static void set_ints(bb *b, int id, const char *name, int n, const int64_t *v) {
  if (b->st == TSL_OK) chk(b, tsl_graph_set_attr_ints(b->g, id, name, n, v));
}

static int64_t dim(const bb *b, int v, int d) { return v >= 0 && b->st == TSL_OK ? b->g->values[v].shape[d] : 0; }

/* ---- full-precision layers (the stem and the last layer) ---- */

static int conv_f32(bb *b, const char *name, int x, int64_t oc, int64_t k, int64_t stride, int64_t pad, bool bias) {
  int64_t ic = dim(b, x, 1), w[4] = {oc, ic, k, k}, bs[1] = {oc};
  double a = sqrt(6.0 / (double)(ic * k * k + (ic == 0)));
  int in[3] = {x, f32_param(b, name, "weight", 4, w, -a, a), bias ? f32_param(b, name, "bias", 1, bs, -0.1, 0.1) : -1};
  int id, out = node(b, TSL_OP_CONV, name, bias ? 3 : 2, in, &id);
  int64_t ks[2] = {k, k}, st[2] = {stride, stride}, pads[4] = {pad, pad, pad, pad};
  set_ints(b, id, "kernel_shape", 2, ks);
  set_ints(b, id, "strides", 2, st);
  set_ints(b, id, "pads", 4, pads);
  return finish(b, id, out);
}

static int bn_f32(bb *b, const char *name, int x) {
  int64_t c[1] = {dim(b, x, 1)};
  int in[5] = {x, f32_param(b, name, "weight", 1, c, 0.5, 1.5), f32_param(b, name, "bias", 1, c, -0.25, 0.25),
               f32_param(b, name, "running_mean", 1, c, -0.25, 0.25),
               f32_param(b, name, "running_var", 1, c, 0.5, 1.5)};
  int id, out = node(b, TSL_OP_BATCH_NORM, name, 5, in, &id);
  if (b->st == TSL_OK) chk(b, tsl_graph_set_attr_float(b->g, id, "epsilon", 1e-5));
  return finish(b, id, out);
}

static int unary(bb *b, tsl_op op, const char *name, int x) {
  int id, out = node(b, op, name, 1, &x, &id);
  return finish(b, id, out);
}

static int maxpool_f32(bb *b, const char *name, int x, int64_t pad, bool ceil_mode) {
  int id, out = node(b, TSL_OP_MAX_POOL, name, 1, &x, &id);
  int64_t ks[2] = {3, 3}, st[2] = {2, 2}, pads[4] = {pad, pad, pad, pad};
  set_ints(b, id, "kernel_shape", 2, ks);
  set_ints(b, id, "strides", 2, st);
  set_ints(b, id, "pads", 4, pads);
  set_int(b, id, "ceil_mode", ceil_mode);
  return finish(b, id, out);
}

static int flatten(bb *b, const char *name, int x) {
  int id, out = node(b, TSL_OP_FLATTEN, name, 1, &x, &id);
  set_int(b, id, "axis", 1);
  return finish(b, id, out);
}

static int linear(bb *b, const char *name, int x, int64_t out_f) {
  int64_t in_f = dim(b, x, 1), w[2] = {out_f, in_f}, bs[1] = {out_f};
  double a = 1.0 / sqrt((double)(in_f + (in_f == 0)));
  int in[3] = {x, f32_param(b, name, "weight", 2, w, -a, a), f32_param(b, name, "bias", 1, bs, -a, a)};
  int id, out = node(b, TSL_OP_GEMM, name, 3, in, &id);
  set_int(b, id, "transB", 1);
  return finish(b, id, out);
}

/* ---- binary layers ---- */

typedef struct bparam {
  const char *name;
  int64_t v;
} bparam;

/* A tsl.Binary node running registry operator `kernel`. */
static int bnode(bb *b, const char *name, const char *kernel, int n, const int *in, int np, const bparam *p) {
  int id, out = node(b, TSL_OP_BINARY, name, n, in, &id);
  if (b->st == TSL_OK) chk(b, tsl_graph_set_attr_string(b->g, id, "kernel", kernel));
  for (int i = 0; i < np; i++) set_int(b, id, p[i].name, p[i].v);
  return finish(b, id, out);
}

/* Packed bipolar weights u64 [ceil(C/64), k, k, K] (the unipolar ops' layout): random bits,
 * channel pad bits 0. */
static int packed_weight(bb *b, const char *layer, int64_t K, int64_t C, int64_t k) {
  if (b->st != TSL_OK) return -1;
  char name[256];
  snprintf(name, sizeof name, "%s.weight", layer);
  int64_t cw = (C + 63) / 64, shape[4] = {cw, k, k, K};
  tsl_tensor *t;
  tsl_status st = tsl_tensor_new(TSL_DTYPE_U64, 4, shape, &t);
  chk(b, st);
  if (st != TSL_OK) return -1;
  uint64_t s = tensor_seed(b, name), *w = t->data;
  for (int64_t c = 0; c < cw; c++)
    for (int64_t i = 0; i < k * k * K; i++) {
      uint64_t bits = splitmix(&s), real = (uint64_t)(C - c * 64);
      w[c * k * k * K + i] = real >= 64 ? bits : bits & ((1ull << real) - 1);
    }
  return add_const(b, name, t);
}

/* The glue constants of a conv with n taps per output from L_in-level inputs (zoo_binary.h):
 * shift and bias, i32 [K], so that (dot + bias) >> shift has spread `spread` around
 * `center` (+- a quarter level of per-channel noise). */
static void glue(bb *b, const char *layer, int64_t K, int64_t n, int L_in, double spread, double center,
                 int *shift_id, int *bias_id) {
  *shift_id = *bias_id = -1;
  if (b->st != TSL_OK) return;
  char name[256];
  int64_t shape[1] = {K};
  double sigma = sqrt((double)n * L_in * L_in / 2.0);
  int sh = (int)lround(log2(sigma / spread));
  sh = sh < 0 ? 0 : sh > 20 ? 20 : sh;
  tsl_tensor *ts = NULL, *tb = NULL;
  chk(b, tsl_tensor_new(TSL_DTYPE_I32, 1, shape, &ts));
  if (b->st == TSL_OK) chk(b, tsl_tensor_new(TSL_DTYPE_I32, 1, shape, &tb));
  if (b->st != TSL_OK) {
    tsl_tensor_free(ts);
    return;
  }
  snprintf(name, sizeof name, "%s.glue_bias", layer);
  uint64_t s = tensor_seed(b, name);
  int32_t *ps = ts->data, *pb = tb->data;
  int64_t span = (int64_t)1 << sh, base = llround(center * (double)span);
  for (int64_t k = 0; k < K; k++) {
    ps[k] = sh;
    pb[k] = (int32_t)(base + (int64_t)(splitmix(&s) % (uint64_t)(span / 2 + 1)) - span / 4);
  }
  *bias_id = add_const(b, name, tb);
  snprintf(name, sizeof name, "%s.glue_shift", layer);
  *shift_id = add_const(b, name, ts);
}

/* A binary conv of packed planes x (C true channels) to K outputs: kind "packed" (next
 * layer's planes), "requant" or "requant_add" (i32, with residual res). */
static int bconv(bb *b, const char *name, const char *kind, int x, int64_t C, int64_t K, int64_t k, int64_t stride,
                 int res, int64_t qmax) {
  int sh, bi;
  /* packed: levels centred in [0, L]; requant (a downsample shortcut): centred in
   * [0, 2L]; requant_add: centred on 0, the shortcut carries the level */
  bool packed = strcmp(kind, "packed") == 0, add = strcmp(kind, "requant_add") == 0;
  glue(b, name, K, C * k * k, b->L, packed ? b->L / 2.0 : b->L, packed ? b->L / 2.0 + 0.5 : add ? 0.0 : b->L, &sh,
       &bi);
  int in[5] = {x, packed_weight(b, name, K, C, k), sh, bi, res};
  char kernel[64];
  snprintf(kernel, sizeof kernel, "bitserial_conv2d_unipolar64_%s", kind);
  bparam p[6] = {{"C", C}, {"stride_h", stride}, {"stride_w", stride}, {"pad_h", k / 2}, {"pad_w", k / 2},
                 {strcmp(kind, "packed") == 0 ? "bits" : "qmax", strcmp(kind, "packed") == 0 ? b->abits : qmax}};
  if (packed && b->no_fusion) {
    char pn[160];
    snprintf(pn, sizeof pn, "%s.pack", name);
    p[5] = (bparam){"qmax", b->L};
    int q = bnode(b, name, "bitserial_conv2d_unipolar64_requant", 4, in, 6, p);
    bparam pp[2] = {{"bits", b->abits}, {"shift", 0}};
    return bnode(b, pn, "bitpack_unipolar64_i32", 1, &q, 2, pp);
  }
  return bnode(b, name, kernel, res >= 0 ? 5 : 4, in, 6, p);
}

/* ---- bresnet18 ---- */

static int bresnet_block(bb *b, const char *name, int s, int64_t in_c, int64_t planes, int64_t stride, int pack_shift) {
  char n[128];
  int64_t qmax = 4 * b->L;
  snprintf(n, sizeof n, "%s.pack", name);
  bparam pp[2] = {{"bits", b->abits}, {"shift", pack_shift}};
  int x = bnode(b, n, "bitpack_unipolar64_i32", 1, &s, 2, pp);
  snprintf(n, sizeof n, "%s.conv1", name);
  int a = bconv(b, n, "packed", x, in_c, planes, 3, stride, -1, 0);
  int identity = s;
  if (stride != 1 || in_c != planes) {
    snprintf(n, sizeof n, "%s.downsample", name);
    identity = bconv(b, n, "requant", x, in_c, planes, 1, stride, -1, qmax);
  }
  snprintf(n, sizeof n, "%s.conv2", name);
  return bconv(b, n, "requant_add", a, planes, planes, 3, 1, identity, qmax);
}

static int bresnet18(bb *b, int x, int w, bool no_stem) {
  if (!no_stem) {
    x = conv_f32(b, "conv1", x, 64 / w, 7, 2, 3, false);
    x = bn_f32(b, "bn1", x);
    x = unary(b, TSL_OP_RELU, "relu", x);
    x = maxpool_f32(b, "maxpool", x, 1, false);
  }
  bparam qb[1] = {{"bits", b->abits}};
  int s = bnode(b, "quantize", "quantize_unipolar_i32", 1, &x, 1, qb);
  int64_t c = 64 / w;
  for (int l = 0; l < 4; l++)
    for (int i = 0; i < 2; i++) {
      char name[32];
      snprintf(name, sizeof name, "layer%d.%d", l + 1, i);
      int64_t planes = (int64_t)(64 << l) / w;
      s = bresnet_block(b, name, s, c, planes, i == 0 && l > 0 ? 2 : 1, l == 0 && i == 0 ? 0 : 1);
      c = planes;
    }
  int id, out = node(b, TSL_OP_BINARY, "avgpool", 1, &s, &id);
  if (b->st == TSL_OK) chk(b, tsl_graph_set_attr_string(b->g, id, "kernel", "binary_global_avgpool_i32"));
  if (b->st == TSL_OK) chk(b, tsl_graph_set_attr_float(b->g, id, "scale", 1.0 / b->L));
  x = finish(b, id, out);
  x = flatten(b, "flatten", x);
  return linear(b, "output", x, 1000);
}

/* ---- bsqueezenet1_1 ---- */

static int bfire(bb *b, const char *name, int x, int64_t in_c, int64_t squeeze, int64_t expand) {
  char n[128], e1n[128], e3n[128];
  snprintf(n, sizeof n, "%s.squeeze", name);
  int sq = bconv(b, n, "packed", x, in_c, squeeze, 1, 1, -1, 0);
  snprintf(e1n, sizeof e1n, "%s.expand1x1", name);
  snprintf(e3n, sizeof e3n, "%s.expand3x3", name);
  int in[2] = {bconv(b, e1n, "packed", sq, squeeze, expand, 1, 1, -1, 0),
               bconv(b, e3n, "packed", sq, squeeze, expand, 3, 1, -1, 0)};
  snprintf(n, sizeof n, "%s.concat", name);
  bparam p[1] = {{"C1", expand}};
  return bnode(b, n, "concat_packed64", 2, in, 1, p);
}

static int bsqueezenet(bb *b, int x, bool no_stem) {
  static const int64_t v11[][3] = {{3, 16, 64}, {4, 16, 64}, {5, 0, 0}, {6, 32, 128}, {7, 32, 128}, {8, 0, 0},
                                   {9, 48, 192}, {10, 48, 192}, {11, 64, 256}, {12, 64, 256}};
  if (!no_stem) {
    x = conv_f32(b, "features.0", x, 64, 3, 2, 0, true);
    x = unary(b, TSL_OP_RELU, "features.1", x);
    x = maxpool_f32(b, "features.2", x, 0, true);
  }
  bparam pb[1] = {{"bits", b->abits}};
  x = bnode(b, "pack", "bitpack_unipolar64", 1, &x, 1, pb);
  int64_t c = 64;
  for (int i = 0; i < 10; i++) {
    char name[32];
    snprintf(name, sizeof name, "features.%d", (int)v11[i][0]);
    if (v11[i][1]) {
      x = bfire(b, name, x, c, v11[i][1], v11[i][2]);
      c = 2 * v11[i][2];
    } else {
      bparam pp[2] = {{"size", 3}, {"stride", 2}};
      x = bnode(b, name, "maxpool_packed_planes64", 1, &x, 2, pp);
    }
  }
  bparam pu[1] = {{"C", c}};
  x = bnode(b, "unpack", "bitunpack_unipolar64", 1, &x, 1, pu);
  x = conv_f32(b, "classifier.1", x, 1000, 1, 1, 0, true);
  x = unary(b, TSL_OP_RELU, "classifier.2", x);
  x = unary(b, TSL_OP_GLOBAL_AVERAGE_POOL, "classifier.3", x);
  int id, out = node(b, TSL_OP_FLATTEN, "output", 1, &x, &id);
  set_int(b, id, "axis", 1);
  return finish(b, id, out);
}

/* ---- entry points ---- */

/* The stem's output size for an image of side `image` (no_stem inputs). */
static int64_t stem_side(bool resnet, int64_t image) {
  if (resnet) {
    int64_t h = (image + 6 - 7) / 2 + 1;
    return (h + 2 - 3) / 2 + 1;
  }
  int64_t h = (image - 3) / 2 + 1;
  return (h - 3 + 1) / 2 + 1; /* ceil mode */
}

tsl_status tsl_zoo_binary_build_ex(const tsl_zoo_binary_options *o, tsl_graph **out) {
  if (!o || !out || !o->arch) return tsl_error(TSL_ERR_INVALID, "zoo_binary: NULL argument");
  bool resnet = strcmp(o->arch, "bresnet18") == 0;
  if (!resnet && strcmp(o->arch, "bsqueezenet1_1") != 0)
    return tsl_error(TSL_ERR_NOT_FOUND, "zoo_binary: no architecture '%s' (bresnet18, bsqueezenet1_1)", o->arch);
  if (o->abits != 1 && o->abits != 2)
    return tsl_error(TSL_ERR_INVALID, "zoo_binary: abits = %d (must be 1 or 2)", o->abits);
  if (o->width_div < 1 || 64 % o->width_div != 0 || (!resnet && o->width_div != 1))
    return tsl_error(TSL_ERR_INVALID, "zoo_binary: width_div = %d (1, 2, 4, 8, 16, 32 or 64; 1 for bsqueezenet1_1)",
                     o->width_div);
  if (o->image < 32 || o->image > 4096)
    return tsl_error(TSL_ERR_INVALID, "zoo_binary: image side %lld outside [32, 4096]", (long long)o->image);
  bb b = {NULL, o->seed, TSL_OK, (1 << o->abits) - 1, o->abits, o->no_fusion};
  char gname[64];
  snprintf(gname, sizeof gname, "%s%s", o->arch, o->abits == 2 ? "_a2" : "");
  tsl_status st = tsl_graph_new(gname, &b.g);
  if (st != TSL_OK) return st;
  int64_t side = stem_side(resnet, o->image);
  int64_t shape[4] = {1, 3, o->image, o->image}, stem[4] = {1, 64 / o->width_div, side, side};
  int x, y = -1;
  chk(&b, tsl_graph_add_input(b.g, "input", TSL_DTYPE_F32, 4, o->no_stem ? stem : shape, &x));
  y = resnet ? bresnet18(&b, x, o->width_div, o->no_stem) : bsqueezenet(&b, x, o->no_stem);
  if (b.st == TSL_OK) chk(&b, tsl_graph_add_output(b.g, y));
  if (b.st == TSL_OK) chk(&b, tsl_graph_check(b.g));
  if (b.st != TSL_OK) {
    tsl_graph_free(b.g);
    return b.st;
  }
  *out = b.g;
  return TSL_OK;
}

static const struct {
  const char *name, *arch;
  int abits;
} names[] = {{"bresnet18", "bresnet18", 1},
             {"bresnet18_a2", "bresnet18", 2},
             {"bsqueezenet1_1", "bsqueezenet1_1", 1},
             {"bsqueezenet", "bsqueezenet1_1", 1},
             {"bsqueezenet1_1_a2", "bsqueezenet1_1", 2}};

bool tsl_zoo_binary_has(const char *name) {
  for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i].name, name) == 0) return true;
  return false;
}

tsl_status tsl_zoo_binary_build(const char *name, uint64_t seed, tsl_graph **out) {
  if (!name || !out) return tsl_error(TSL_ERR_INVALID, "zoo_binary: NULL argument");
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i].name, name) == 0) {
      tsl_zoo_binary_options o = {names[i].arch, names[i].abits, 1, 224, false, seed, false};
      return tsl_zoo_binary_build_ex(&o, out);
    }
  return tsl_error(TSL_ERR_NOT_FOUND, "zoo_binary: no model '%s' (bresnet18, bresnet18_a2, bsqueezenet1_1, "
                                      "bsqueezenet1_1_a2)", name);
}
