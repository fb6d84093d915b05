/* The model zoo: torchvision 0.14's CNNs rebuilt layer by layer (see zoo.h). Each
 * builder follows the corresponding torchvision/models/<net>.py forward() in order. */
#include "models/zoo.h"
#include "models/zoo_binary.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A builder: the graph, the weight seed and the first error (later calls do nothing
 * once an error is recorded, so the net descriptions below read straight). */
typedef struct zb {
  tsl_graph *g;
  uint64_t seed;
  tsl_status st;
  const char *out_name; /* name for the next value instead of the node's name */
} zb;

static void chk(zb *b, tsl_status st) {
  if (b->st == TSL_OK) b->st = st;
}

/* A per-tensor seed from the model seed and the tensor's name (FNV-1a, then the
 * splitmix64 finalizer), so weights do not depend on build order. */
static uint64_t tensor_seed(const zb *b, const char *name) {
  uint64_t h = 1469598103934665603ull;
  for (const char *s = name; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  h ^= b->seed * 0x9E3779B97F4A7C15ull;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

static int param(zb *b, const char *owner, const char *what, int ndim, const int64_t *shape, double lo, double hi) {
  if (b->st != TSL_OK) return -1;
  char name[256];
  snprintf(name, sizeof name, "%s.%s", owner, what);
  tsl_tensor *t;
  tsl_status st = tsl_tensor_new(TSL_DTYPE_F32, ndim, shape, &t);
  if (st == TSL_OK) {
    st = tsl_tensor_fill_random(t, tensor_seed(b, name), lo, hi);
    if (st != TSL_OK) tsl_tensor_free(t);
  }
  int id = -1;
  if (st == TSL_OK) st = tsl_graph_add_constant(b->g, name, t, &id);
  chk(b, st);
  return id;
}

/* Adds node `name` reading `in`, writing a new value; *node receives its id. */
static int begin(zb *b, tsl_op op, const char *name, int n_in, const int *in, int *node) {
  *node = -1;
  if (b->st != TSL_OK) return -1;
  int out;
  tsl_status st = tsl_graph_add_value(b->g, b->out_name ? b->out_name : name, &out);
  b->out_name = NULL;
  if (st == TSL_OK) st = tsl_graph_add_node(b->g, op, name, n_in, in, 1, &out, node);
  chk(b, st);
  return b->st == TSL_OK ? out : -1;
}

static int end(zb *b, int node, int out) {
  if (b->st == TSL_OK) chk(b, tsl_graph_infer_node(b->g, node));
  return b->st == TSL_OK ? out : -1;
}

static void set_ints(zb *b, int node, const char *name, int n, const int64_t *v) {
  if (b->st == TSL_OK) chk(b, tsl_graph_set_attr_ints(b->g, node, name, n, v));
}

static void set_int(zb *b, int node, const char *name, int64_t v) {
  if (b->st == TSL_OK) chk(b, tsl_graph_set_attr_int(b->g, node, name, v));
}

static void set_float(zb *b, int node, const char *name, double v) {
  if (b->st == TSL_OK) chk(b, tsl_graph_set_attr_float(b->g, node, name, v));
}

static int64_t channels(const zb *b, int x) { return x >= 0 ? b->g->values[x].shape[1] : 0; }

/* ---- layers ---- */

/* A convolution; `relu_next` says a ReLU follows (after a batch norm, maybe), which
 * halves the second moment, so the weights get He's gain 2 instead of 1. */
static int conv(zb *b, const char *name, int x, int64_t out_c, int64_t k, int64_t stride, int64_t pad,
                int64_t group, bool bias, bool relu_next) {
  if (b->st != TSL_OK) return -1;
  int64_t in_c = channels(b, x), fan_in = in_c / group * k * k;
  int64_t wshape[4] = {out_c, in_c / group, k, k}, bshape[1] = {out_c};
  double a = sqrt((relu_next ? 6.0 : 3.0) / (double)fan_in); /* uniform: variance a^2 / 3 */
  int in[3] = {x, param(b, name, "weight", 4, wshape, -a, a), -1};
  if (bias) in[2] = param(b, name, "bias", 1, bshape, -0.1, 0.1);
  int node, out = begin(b, TSL_OP_CONV, name, bias ? 3 : 2, in, &node);
  int64_t ks[2] = {k, k}, st[2] = {stride, stride}, pads[4] = {pad, pad, pad, pad}, dil[2] = {1, 1};
  set_ints(b, node, "kernel_shape", 2, ks);
  set_ints(b, node, "strides", 2, st);
  set_ints(b, node, "pads", 4, pads);
  set_ints(b, node, "dilations", 2, dil);
  set_int(b, node, "group", group);
  return end(b, node, out);
}

static int bn(zb *b, const char *name, int x) {
  int64_t c[1] = {channels(b, x)};
  int in[5] = {x, param(b, name, "weight", 1, c, 0.5, 1.5), param(b, name, "bias", 1, c, -0.25, 0.25),
               param(b, name, "running_mean", 1, c, -0.25, 0.25), param(b, name, "running_var", 1, c, 0.5, 1.5)};
  int node, out = begin(b, TSL_OP_BATCH_NORM, name, 5, in, &node);
  set_float(b, node, "epsilon", 1e-5);
  return end(b, node, out);
}

static int unary(zb *b, tsl_op op, const char *name, int x) {
  int node, out = begin(b, op, name, 1, &x, &node);
  return end(b, node, out);
}

static int relu6(zb *b, const char *name, int x) {
  int node, out = begin(b, TSL_OP_CLIP, name, 1, &x, &node);
  set_float(b, node, "min", 0.0);
  set_float(b, node, "max", 6.0);
  return end(b, node, out);
}

static int maxpool(zb *b, const char *name, int x, int64_t k, int64_t stride, int64_t pad, bool ceil_mode) {
  int node, out = begin(b, TSL_OP_MAX_POOL, name, 1, &x, &node);
  int64_t ks[2] = {k, k}, st[2] = {stride, stride}, pads[4] = {pad, pad, pad, pad};
  set_ints(b, node, "kernel_shape", 2, ks);
  set_ints(b, node, "strides", 2, st);
  set_ints(b, node, "pads", 4, pads);
  set_int(b, node, "ceil_mode", ceil_mode);
  return end(b, node, out);
}

static int add(zb *b, const char *name, int x, int y) {
  int in[2] = {x, y}, node, out = begin(b, TSL_OP_ADD, name, 2, in, &node);
  return end(b, node, out);
}

static int concat2(zb *b, const char *name, int x, int y) {
  int in[2] = {x, y}, node, out = begin(b, TSL_OP_CONCAT, name, 2, in, &node);
  set_int(b, node, "axis", 1);
  return end(b, node, out);
}

static int flatten(zb *b, const char *name, int x) {
  int node, out = begin(b, TSL_OP_FLATTEN, name, 1, &x, &node);
  set_int(b, node, "axis", 1);
  return end(b, node, out);
}

/* torch.nn.Linear as ONNX exports it: Gemm(x, W[out, in], b) with transB = 1. */
static int linear(zb *b, const char *name, int x, int64_t out_f) {
  if (b->st != TSL_OK) return -1;
  int64_t in_f = x >= 0 ? b->g->values[x].shape[1] : 0, wshape[2] = {out_f, in_f}, bshape[1] = {out_f};
  double a = 1.0 / sqrt((double)in_f);
  int in[3] = {x, param(b, name, "weight", 2, wshape, -a, a), param(b, name, "bias", 1, bshape, -a, a)};
  int node, out = begin(b, TSL_OP_GEMM, name, 3, in, &node);
  set_float(b, node, "alpha", 1.0);
  set_float(b, node, "beta", 1.0);
  set_int(b, node, "transB", 1);
  return end(b, node, out);
}

static int slice_c(zb *b, const char *name, int x, int64_t start, int64_t stop) {
  int node, out = begin(b, TSL_OP_SLICE, name, 1, &x, &node);
  int64_t s[1] = {start}, e[1] = {stop}, axes[1] = {1};
  set_ints(b, node, "starts", 1, s);
  set_ints(b, node, "ends", 1, e);
  set_ints(b, node, "axes", 1, axes);
  return end(b, node, out);
}

/* ---- SqueezeNet ---- */

static int fire(zb *b, const char *name, int x, int64_t squeeze, int64_t e1, int64_t e3) {
  char n[128], m[128];
  snprintf(n, sizeof n, "%s.squeeze", name);
  snprintf(m, sizeof m, "%s.squeeze_activation", name);
  int s = unary(b, TSL_OP_RELU, m, conv(b, n, x, squeeze, 1, 1, 0, 1, true, true));
  snprintf(n, sizeof n, "%s.expand1x1", name);
  snprintf(m, sizeof m, "%s.expand1x1_activation", name);
  int a = unary(b, TSL_OP_RELU, m, conv(b, n, s, e1, 1, 1, 0, 1, true, true));
  snprintf(n, sizeof n, "%s.expand3x3", name);
  snprintf(m, sizeof m, "%s.expand3x3_activation", name);
  int c = unary(b, TSL_OP_RELU, m, conv(b, n, s, e3, 3, 1, 1, 1, true, true));
  return concat2(b, name, a, c);
}

static int squeezenet(zb *b, int x, bool v1_1) {
  /* (feature index, squeeze, expand) of each Fire module; 0 squeeze marks a max pool. */
  static const int64_t v10[][3] = {{3, 16, 64}, {4, 16, 64}, {5, 32, 128}, {6, 0, 0}, {7, 32, 128}, {8, 48, 192},
                                   {9, 48, 192}, {10, 64, 256}, {11, 0, 0}, {12, 64, 256}};
  static const int64_t v11[][3] = {{3, 16, 64}, {4, 16, 64}, {5, 0, 0}, {6, 32, 128}, {7, 32, 128}, {8, 0, 0},
                                   {9, 48, 192}, {10, 48, 192}, {11, 64, 256}, {12, 64, 256}};
  x = conv(b, "features.0", x, v1_1 ? 64 : 96, v1_1 ? 3 : 7, 2, 0, 1, true, true);
  x = unary(b, TSL_OP_RELU, "features.1", x);
  x = maxpool(b, "features.2", x, 3, 2, 0, true);
  for (int i = 0; i < 10; i++) {
    const int64_t *f = v1_1 ? v11[i] : v10[i];
    char name[32];
    snprintf(name, sizeof name, "features.%d", (int)f[0]);
    x = f[1] ? fire(b, name, x, f[1], f[2], f[2]) : maxpool(b, name, x, 3, 2, 0, true);
  }
  x = unary(b, TSL_OP_DROPOUT, "classifier.0", x);
  x = conv(b, "classifier.1", x, 1000, 1, 1, 0, 1, true, true);
  x = unary(b, TSL_OP_RELU, "classifier.2", x);
  x = unary(b, TSL_OP_GLOBAL_AVERAGE_POOL, "classifier.3", x);
  b->out_name = "output";
  return flatten(b, "flatten", x);
}

/* ---- ResNet ---- */

static int resnet_block(zb *b, const char *name, int x, int64_t planes, int64_t stride, bool bottleneck) {
  char n[128], r[128];
  int64_t expansion = bottleneck ? 4 : 1, in_c = channels(b, x);
  int out = x;
  int n_convs = bottleneck ? 3 : 2;
  for (int i = 1; i <= n_convs; i++) {
    /* Basic: 3x3(stride), 3x3. Bottleneck: 1x1, 3x3(stride), 1x1 to planes * 4. */
    int64_t k = bottleneck && i != 2 ? 1 : 3, s = (bottleneck ? i == 2 : i == 1) ? stride : 1;
    int64_t oc = i == n_convs ? planes * expansion : planes;
    snprintf(n, sizeof n, "%s.conv%d", name, i);
    out = conv(b, n, out, oc, k, s, k / 2, 1, false, i < n_convs);
    snprintf(n, sizeof n, "%s.bn%d", name, i);
    out = bn(b, n, out);
    if (i < n_convs) {
      if (i == 1) snprintf(r, sizeof r, "%s.relu", name);
      else snprintf(r, sizeof r, "%s.relu_%d", name, i - 1);
      out = unary(b, TSL_OP_RELU, r, out);
    }
  }
  int identity = x;
  if (stride != 1 || in_c != planes * expansion) {
    snprintf(n, sizeof n, "%s.downsample.0", name);
    identity = conv(b, n, x, planes * expansion, 1, stride, 0, 1, false, false);
    snprintf(n, sizeof n, "%s.downsample.1", name);
    identity = bn(b, n, identity);
  }
  snprintf(n, sizeof n, "%s.add", name);
  out = add(b, n, out, identity);
  snprintf(r, sizeof r, "%s.relu_%d", name, n_convs - 1);
  return unary(b, TSL_OP_RELU, r, out);
}

static int resnet(zb *b, int x, const int *blocks, bool bottleneck) {
  x = conv(b, "conv1", x, 64, 7, 2, 3, 1, false, true);
  x = bn(b, "bn1", x);
  x = unary(b, TSL_OP_RELU, "relu", x);
  x = maxpool(b, "maxpool", x, 3, 2, 1, false);
  for (int l = 0; l < 4; l++)
    for (int i = 0; i < blocks[l]; i++) {
      char name[32];
      snprintf(name, sizeof name, "layer%d.%d", l + 1, i);
      x = resnet_block(b, name, x, (int64_t)64 << l, i == 0 && l > 0 ? 2 : 1, bottleneck);
    }
  x = unary(b, TSL_OP_GLOBAL_AVERAGE_POOL, "avgpool", x);
  x = flatten(b, "flatten", x);
  b->out_name = "output";
  return linear(b, "fc", x, 1000);
}

/* ---- MobileNetV2 ---- */

/* Conv2dNormActivation: conv (no bias), batch norm, ReLU6, as "<name>.0/.1/.2". */
static int conv_bn_relu6(zb *b, const char *name, int x, int64_t out_c, int64_t k, int64_t stride, int64_t group) {
  char n[128];
  snprintf(n, sizeof n, "%s.0", name);
  x = conv(b, n, x, out_c, k, stride, (k - 1) / 2, group, false, true);
  snprintf(n, sizeof n, "%s.1", name);
  x = bn(b, n, x);
  snprintf(n, sizeof n, "%s.2", name);
  return relu6(b, n, x);
}

static int inverted_residual(zb *b, const char *name, int x, int64_t oup, int64_t stride, int64_t t) {
  char n[128];
  int64_t inp = channels(b, x), hidden = inp * t;
  int layer = 0, y = x;
  if (t != 1) {
    snprintf(n, sizeof n, "%s.conv.%d", name, layer++);
    y = conv_bn_relu6(b, n, y, hidden, 1, 1, 1);
  }
  snprintf(n, sizeof n, "%s.conv.%d", name, layer++);
  y = conv_bn_relu6(b, n, y, hidden, 3, stride, hidden);
  snprintf(n, sizeof n, "%s.conv.%d", name, layer++);
  y = conv(b, n, y, oup, 1, 1, 0, 1, false, false);
  snprintf(n, sizeof n, "%s.conv.%d", name, layer);
  y = bn(b, n, y);
  if (stride == 1 && inp == oup) {
    snprintf(n, sizeof n, "%s.add", name);
    y = add(b, n, x, y);
  }
  return y;
}

static int mobilenet_v2(zb *b, int x) {
  static const int64_t settings[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                         {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  x = conv_bn_relu6(b, "features.0", x, 32, 3, 2, 1);
  int idx = 1;
  for (int s = 0; s < 7; s++)
    for (int i = 0; i < settings[s][2]; i++) {
      char name[32];
      snprintf(name, sizeof name, "features.%d", idx++);
      x = inverted_residual(b, name, x, settings[s][1], i == 0 ? settings[s][3] : 1, settings[s][0]);
    }
  x = conv_bn_relu6(b, "features.18", x, 1280, 1, 1, 1);
  x = unary(b, TSL_OP_GLOBAL_AVERAGE_POOL, "adaptive_avg_pool2d", x);
  x = flatten(b, "flatten", x);
  x = unary(b, TSL_OP_DROPOUT, "classifier.0", x);
  b->out_name = "output";
  return linear(b, "classifier.1", x, 1000);
}

/* ---- ShuffleNetV2 ---- */

static int channel_shuffle(zb *b, const char *name, int x) {
  if (b->st != TSL_OK) return -1;
  const tsl_value *v = &b->g->values[x];
  int64_t n = v->shape[0], c = v->shape[1], h = v->shape[2], w = v->shape[3];
  int64_t split[5] = {n, 2, c / 2, h, w}, perm[5] = {0, 2, 1, 3, 4}, back[4] = {n, -1, h, w};
  char nm[128];
  int node, out;
  snprintf(nm, sizeof nm, "%s.shuffle_view", name);
  out = begin(b, TSL_OP_RESHAPE, nm, 1, &x, &node);
  set_ints(b, node, "shape", 5, split);
  x = end(b, node, out);
  snprintf(nm, sizeof nm, "%s.shuffle_transpose", name);
  out = begin(b, TSL_OP_TRANSPOSE, nm, 1, &x, &node);
  set_ints(b, node, "perm", 5, perm);
  x = end(b, node, out);
  snprintf(nm, sizeof nm, "%s.shuffle", name);
  out = begin(b, TSL_OP_RESHAPE, nm, 1, &x, &node);
  set_ints(b, node, "shape", 4, back);
  return end(b, node, out);
}

/* One branch as "<name>.<i>" modules: a list of (kind, out channels, kernel, stride,
 * depthwise) steps where kind is 'c' conv, 'b' batch norm, 'r' ReLU. */
static int shuffle_branch(zb *b, const char *name, int x, const char *kinds, const int64_t (*conv_args)[3]) {
  char n[128];
  int ci = 0;
  for (int i = 0; kinds[i]; i++) {
    snprintf(n, sizeof n, "%s.%d", name, i);
    if (kinds[i] == 'c') {
      const int64_t *a = conv_args[ci++];
      bool relu_next = kinds[i + 1] == 'b' && kinds[i + 2] == 'r';
      x = conv(b, n, x, a[0] ? a[0] : channels(b, x), a[1], a[2], a[1] / 2, a[0] ? 1 : channels(b, x), false,
               relu_next);
    } else if (kinds[i] == 'b') {
      x = bn(b, n, x);
    } else {
      x = unary(b, TSL_OP_RELU, n, x);
    }
  }
  return x;
}

static int shuffle_unit(zb *b, const char *name, int x, int64_t oup, int64_t stride) {
  char n[128];
  int64_t bf = oup / 2, c = channels(b, x);
  int left, right;
  /* conv args: {out channels (0: depthwise, same channels), kernel, stride} */
  const int64_t b1[2][3] = {{0, 3, stride}, {bf, 1, 1}};
  const int64_t b2[3][3] = {{bf, 1, 1}, {0, 3, stride}, {bf, 1, 1}};
  if (stride == 1) {
    snprintf(n, sizeof n, "%s.chunk_0", name);
    left = slice_c(b, n, x, 0, c / 2);
    snprintf(n, sizeof n, "%s.chunk_1", name);
    right = slice_c(b, n, x, c / 2, c);
  } else {
    snprintf(n, sizeof n, "%s.branch1", name);
    left = shuffle_branch(b, n, x, "cbcbr", b1);
    right = x;
  }
  snprintf(n, sizeof n, "%s.branch2", name);
  right = shuffle_branch(b, n, right, "cbrcbcbr", b2);
  snprintf(n, sizeof n, "%s.cat", name);
  return channel_shuffle(b, name, concat2(b, n, left, right));
}

static int shufflenet_v2(zb *b, int x) {
  static const int64_t out_c[3] = {116, 232, 464};
  static const int repeats[3] = {4, 8, 4};
  x = conv(b, "conv1.0", x, 24, 3, 2, 1, 1, false, true);
  x = bn(b, "conv1.1", x);
  x = unary(b, TSL_OP_RELU, "conv1.2", x);
  x = maxpool(b, "maxpool", x, 3, 2, 1, false);
  for (int s = 0; s < 3; s++)
    for (int i = 0; i < repeats[s]; i++) {
      char name[32];
      snprintf(name, sizeof name, "stage%d.%d", s + 2, i);
      x = shuffle_unit(b, name, x, out_c[s], i == 0 ? 2 : 1);
    }
  x = conv(b, "conv5.0", x, 1024, 1, 1, 0, 1, false, true);
  x = bn(b, "conv5.1", x);
  x = unary(b, TSL_OP_RELU, "conv5.2", x);
  int node, out = begin(b, TSL_OP_REDUCE_MEAN, "mean", 1, &x, &node);
  int64_t axes[2] = {2, 3};
  set_ints(b, node, "axes", 2, axes);
  set_int(b, node, "keepdims", 0);
  x = end(b, node, out);
  b->out_name = "output";
  return linear(b, "fc", x, 1000);
}

/* ---- entry points ---- */

/* The full-precision models: zoo_names[i] is case i of tsl_zoo_build's switch. */
static const char *const zoo_names[] = {"squeezenet1_0", "squeezenet1_1",     "resnet18", "resnet50",
                                        "mobilenet_v2",  "shufflenet_v2_x1_0", NULL};

/* Every name tsl_zoo_build takes (aliases aside): the full-precision models, then the
 * binarized ones (models/zoo_binary.h). */
static const char *const all_names[] = {"squeezenet1_0",   "squeezenet1_1",     "resnet18",
                                        "resnet50",        "mobilenet_v2",      "shufflenet_v2_x1_0",
                                        "bsqueezenet1_1",  "bsqueezenet1_1_a2", "bresnet18",
                                        "bresnet18_a2",    NULL};

const char *const *tsl_zoo_list(void) { return all_names; }

tsl_status tsl_zoo_build(const char *name, uint64_t seed, tsl_graph **out) {
  if (!name || !out) return tsl_error(TSL_ERR_INVALID, "zoo: NULL argument");
  if (strcmp(name, "squeezenet") == 0) name = "squeezenet1_1"; /* the short name, as `tunecli tune` takes it */
  if (tsl_zoo_binary_has(name)) return tsl_zoo_binary_build(name, seed, out); /* models/zoo_binary.h */
  int which = -1;
  for (int i = 0; zoo_names[i]; i++)
    if (strcmp(zoo_names[i], name) == 0) which = i;
  if (which < 0)
    return tsl_error(TSL_ERR_NOT_FOUND,
                     "zoo: no model '%s' (known: squeezenet1_0, squeezenet1_1, resnet18, resnet50, mobilenet_v2, "
                     "shufflenet_v2_x1_0; binarized: bsqueezenet1_1, bsqueezenet1_1_a2, bresnet18, bresnet18_a2)",
                     name);
  zb b = {NULL, seed, TSL_OK, NULL};
  tsl_status st = tsl_graph_new(name, &b.g);
  if (st != TSL_OK) return st;
  int64_t shape[4] = {1, 3, 224, 224};
  int x, y = -1;
  chk(&b, tsl_graph_add_input(b.g, "input", TSL_DTYPE_F32, 4, shape, &x));
  static const int r18[4] = {2, 2, 2, 2}, r50[4] = {3, 4, 6, 3};
  switch (which) {
  case 0: y = squeezenet(&b, x, false); break;
  case 1: y = squeezenet(&b, x, true); break;
  case 2: y = resnet(&b, x, r18, false); break;
  case 3: y = resnet(&b, x, r50, true); break;
  case 4: y = mobilenet_v2(&b, x); break;
  default: y = shufflenet_v2(&b, x); break;
  }
  if (b.st == TSL_OK) chk(&b, tsl_graph_add_output(b.g, y));
  if (b.st == TSL_OK) chk(&b, tsl_graph_check(b.g));
  if (b.st != TSL_OK) {
    tsl_graph_free(b.g);
    return b.st;
  }
  *out = b.g;
  return TSL_OK;
}
