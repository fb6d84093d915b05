/* The convolution layer description, the window formula and the layer's DSL parameters
 * (conv2d_layer.h). */
#include "ops/conv2d/conv2d_layer.h"

#include <stddef.h>
#include <string.h>

static tsl_status window_args(const char *who, int64_t in, int64_t kernel, int64_t stride, int64_t dilation) {
  if (in < 1 || kernel < 1 || stride < 1 || dilation < 1)
    return tsl_error(TSL_ERR_INVALID, "%s: input %lld, kernel %lld, stride %lld and dilation %lld must be >= 1", who,
                     (long long)in, (long long)kernel, (long long)stride, (long long)dilation);
  return TSL_OK;
}

/* dilation * (kernel - 1) + 1, the input elements one window spans; false on overflow */
static bool window_span(int64_t kernel, int64_t dilation, int64_t *span) {
  int64_t s;
  if (__builtin_mul_overflow(dilation, kernel - 1, &s) || __builtin_add_overflow(s, 1, &s)) return false;
  *span = s;
  return true;
}

tsl_status tsl_window_out_extent(int64_t in, int64_t pad_before, int64_t pad_after, int64_t kernel, int64_t stride,
                                 int64_t dilation, bool ceil_mode, int64_t *out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "window: NULL result");
  tsl_status st = window_args("window", in, kernel, stride, dilation);
  if (st != TSL_OK) return st;
  if (pad_before < 0 || pad_after < 0)
    return tsl_error(TSL_ERR_INVALID, "window: pads %lld+%lld must be >= 0", (long long)pad_before,
                     (long long)pad_after);
  int64_t span, padded, room;
  if (!window_span(kernel, dilation, &span) || __builtin_add_overflow(in, pad_before, &padded) ||
      __builtin_add_overflow(padded, pad_after, &padded))
    return tsl_error(TSL_ERR_INVALID, "window: kernel %lld dilation %lld over input %lld + pads %lld+%lld overflows",
                     (long long)kernel, (long long)dilation, (long long)in, (long long)pad_before,
                     (long long)pad_after);
  room = padded - span;
  if (room < 0)
    return tsl_error(TSL_ERR_INVALID,
                     "window: a window of %lld taps (kernel %lld, dilation %lld) is larger than the padded input "
                     "%lld + %lld + %lld",
                     (long long)span, (long long)kernel, (long long)dilation, (long long)in, (long long)pad_before,
                     (long long)pad_after);
  /* room <= INT64_MAX - 1 and stride >= 1: neither sum below overflows */
  int64_t n = (ceil_mode ? room / stride + (room % stride != 0) : room / stride) + 1;
  /* ceil mode's partial window must start inside the input or its leading padding */
  if (ceil_mode && (n - 1) * stride >= in + pad_before) n--;
  *out = n;
  return TSL_OK;
}

tsl_status tsl_window_same_pads(int64_t in, int64_t kernel, int64_t stride, int64_t dilation, bool upper,
                                int64_t *pad_before, int64_t *pad_after) {
  if (!pad_before || !pad_after) return tsl_error(TSL_ERR_INVALID, "same pads: NULL result");
  tsl_status st = window_args("same pads", in, kernel, stride, dilation);
  if (st != TSL_OK) return st;
  int64_t out = in / stride + (in % stride != 0), span, total;
  if (!window_span(kernel, dilation, &span) || __builtin_mul_overflow(out - 1, stride, &total) ||
      __builtin_add_overflow(total, span, &total))
    return tsl_error(TSL_ERR_INVALID, "same pads: kernel %lld dilation %lld stride %lld over input %lld overflows",
                     (long long)kernel, (long long)dilation, (long long)stride, (long long)in);
  total -= in;
  if (total < 0) total = 0;
  *pad_before = upper ? total / 2 : total - total / 2;
  *pad_after = total - *pad_before;
  return TSL_OK;
}

/* the floor-mode extent of one axis, 0 when the window does not fit */
static int64_t axis_out(int64_t in, int64_t pad_before, int64_t pad_after, int64_t kernel, int64_t stride,
                        int64_t dilation) {
  int64_t o = 0;
  return tsl_window_out_extent(in, pad_before, pad_after, kernel, stride, dilation, false, &o) == TSL_OK ? o : 0;
}

int64_t tsl_conv2d_layer_out_h(const tsl_conv2d_layer *l) {
  return l ? axis_out(l->H, l->pad_top, l->pad_bottom, l->R, l->stride_h, l->dilation_h) : 0;
}

int64_t tsl_conv2d_layer_out_w(const tsl_conv2d_layer *l) {
  return l ? axis_out(l->W, l->pad_left, l->pad_right, l->S, l->stride_w, l->dilation_w) : 0;
}

double tsl_conv2d_layer_flops(const tsl_conv2d_layer *l) {
  return 2.0 * (double)l->N * (double)l->K * (double)tsl_conv2d_layer_out_h(l) * (double)tsl_conv2d_layer_out_w(l) *
         (double)(l->C / (l->groups > 0 ? l->groups : 1)) * (double)l->R * (double)l->S;
}

tsl_status tsl_conv2d_layer_check(const tsl_conv2d_layer *l) {
  if (!l) return tsl_error(TSL_ERR_INVALID, "conv2d: no layer description");
  if (l->N < 1 || l->C < 1 || l->H < 1 || l->W < 1 || l->K < 1 || l->R < 1 || l->S < 1)
    return tsl_error(TSL_ERR_INVALID, "conv2d: sizes N%lld C%lld H%lld W%lld K%lld R%lld S%lld must be >= 1",
                     (long long)l->N, (long long)l->C, (long long)l->H, (long long)l->W, (long long)l->K,
                     (long long)l->R, (long long)l->S);
  if (l->stride_h < 1 || l->stride_w < 1 || l->dilation_h < 1 || l->dilation_w < 1)
    return tsl_error(TSL_ERR_INVALID, "conv2d: strides %lldx%lld and dilations %lldx%lld must be >= 1",
                     (long long)l->stride_h, (long long)l->stride_w, (long long)l->dilation_h,
                     (long long)l->dilation_w);
  if (l->pad_top < 0 || l->pad_left < 0 || l->pad_bottom < 0 || l->pad_right < 0)
    return tsl_error(TSL_ERR_INVALID, "conv2d: negative padding");
  if (l->groups < 1 || l->C % l->groups || l->K % l->groups)
    return tsl_error(TSL_ERR_INVALID, "conv2d: groups %lld must divide C %lld and K %lld", (long long)l->groups,
                     (long long)l->C, (long long)l->K);
  if (l->act < TSL_CONV2D_ACT_NONE || l->act > TSL_CONV2D_ACT_CLIP)
    return tsl_error(TSL_ERR_INVALID, "conv2d: act %d (must be 0, 1 or 2)", l->act);
  if (l->epilogue.fn && l->act != TSL_CONV2D_ACT_NONE)
    return tsl_error(TSL_ERR_INVALID, "conv2d: act %d and the epilogue function %s (one activation)", l->act,
                     l->epilogue.fn->onnx_op);
  if (l->block < 1) return tsl_error(TSL_ERR_INVALID, "conv2d: block %lld (must be >= 1)", (long long)l->block);
  if (l->data_block != 0 && l->data_block != 1 && l->data_block != l->block)
    return tsl_error(TSL_ERR_INVALID, "conv2d: data block %lld (must be 0, 1 or the block %lld)",
                     (long long)l->data_block, (long long)l->block);
  int64_t o;
  tsl_status st = tsl_window_out_extent(l->H, l->pad_top, l->pad_bottom, l->R, l->stride_h, l->dilation_h, false, &o);
  if (st == TSL_OK)
    st = tsl_window_out_extent(l->W, l->pad_left, l->pad_right, l->S, l->stride_w, l->dilation_w, false, &o);
  if (st != TSL_OK) return tsl_error(TSL_ERR_INVALID, "conv2d: the kernel does not fit: %s", tsl_last_error());
  return TSL_OK;
}

int64_t tsl_conv2d_layer_data_block(const tsl_conv2d_layer *l) { return l->data_block ? l->data_block : l->block; }

int tsl_conv2d_layer_params(const tsl_conv2d_layer *l, unsigned parts, tsl_dsl_param_value *p) {
  int n = 0;
  if (parts & TSL_CONV2D_PARAMS_WINDOW) {
    p[n++] = tsl_dsl_int_param("stride_h", l->stride_h);
    p[n++] = tsl_dsl_int_param("stride_w", l->stride_w);
    p[n++] = tsl_dsl_int_param("pad_top", l->pad_top);
    p[n++] = tsl_dsl_int_param("pad_left", l->pad_left);
    p[n++] = tsl_dsl_int_param("pad_bottom", l->pad_bottom);
    p[n++] = tsl_dsl_int_param("pad_right", l->pad_right);
    p[n++] = tsl_dsl_int_param("dilation_h", l->dilation_h);
    p[n++] = tsl_dsl_int_param("dilation_w", l->dilation_w);
  }
  if (parts & TSL_CONV2D_PARAMS_EPILOGUE) {
    p[n++] = tsl_dsl_int_param("act", l->act);
    if (l->act == TSL_CONV2D_ACT_CLIP) {
      p[n++] = tsl_dsl_float_param("clip_min", l->clip_min);
      p[n++] = tsl_dsl_float_param("clip_max", l->clip_max);
    }
  }
  if (parts & TSL_CONV2D_PARAMS_GROUPS) {
    p[n++] = tsl_dsl_int_param("groups", l->groups);
    p[n++] = tsl_dsl_int_param("out_channels", l->K);
  }
  if (parts & TSL_CONV2D_PARAMS_IN_CHANNELS) p[n++] = tsl_dsl_int_param("in_channels", l->C);
  return n;
}

static const tsl_dsl_param_value *find_param(int n, const tsl_dsl_param_value *p, const char *name) {
  for (int i = 0; i < n; i++)
    if (p[i].name && strcmp(p[i].name, name) == 0) return &p[i];
  return NULL;
}

bool tsl_conv2d_params_have_window(int n, const tsl_dsl_param_value *p) {
  return p && find_param(n, p, "stride_h") != NULL;
}

tsl_status tsl_conv2d_layer_read_params(int n, const tsl_dsl_param_value *p, tsl_conv2d_layer *l) {
  if (!l || (n > 0 && !p)) return tsl_error(TSL_ERR_INVALID, "conv2d: NULL parameters or layer");
  static const struct {
    const char *name;
    int64_t dflt;
    size_t off;
  } ints[] = {
      {"stride_h", 1, offsetof(tsl_conv2d_layer, stride_h)},     {"stride_w", 1, offsetof(tsl_conv2d_layer, stride_w)},
      {"pad_top", 0, offsetof(tsl_conv2d_layer, pad_top)},       {"pad_left", 0, offsetof(tsl_conv2d_layer, pad_left)},
      {"pad_bottom", 0, offsetof(tsl_conv2d_layer, pad_bottom)}, {"pad_right", 0, offsetof(tsl_conv2d_layer, pad_right)},
      {"dilation_h", 1, offsetof(tsl_conv2d_layer, dilation_h)}, {"dilation_w", 1, offsetof(tsl_conv2d_layer, dilation_w)},
      {"groups", 1, offsetof(tsl_conv2d_layer, groups)},
  };
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
    const tsl_dsl_param_value *v = find_param(n, p, ints[i].name);
    if (v && v->kind != TSL_DSL_PARAM_INT)
      return tsl_error(TSL_ERR_INVALID, "conv2d: parameter %s is not an int", ints[i].name);
    *(int64_t *)(void *)((char *)l + ints[i].off) = v ? v->i : ints[i].dflt;
  }
  const tsl_dsl_param_value *act = find_param(n, p, "act"), *k = find_param(n, p, "out_channels"),
                            *c = find_param(n, p, "in_channels");
  if ((act && act->kind != TSL_DSL_PARAM_INT) || (k && k->kind != TSL_DSL_PARAM_INT) ||
      (c && c->kind != TSL_DSL_PARAM_INT))
    return tsl_error(TSL_ERR_INVALID, "conv2d: parameter act, out_channels or in_channels is not an int");
  l->act = act ? (int)act->i : TSL_CONV2D_ACT_NONE;
  if (k) l->K = k->i;
  if (c) l->C = c->i;
  const char *bounds[2] = {"clip_min", "clip_max"};
  double *dst[2] = {&l->clip_min, &l->clip_max}, dflt[2] = {0.0, 6.0};
  for (int i = 0; i < 2; i++) {
    const tsl_dsl_param_value *v = find_param(n, p, bounds[i]);
    *dst[i] = !v ? dflt[i] : v->kind == TSL_DSL_PARAM_FLOAT ? v->f : (double)v->i;
  }
  return TSL_OK;
}

tsl_epilogue tsl_conv2d_layer_epilogue(const tsl_conv2d_layer *l) {
  tsl_epilogue e = l->epilogue;
  e.channels = e.fn && l->block > 0 && l->K % l->block ? l->K : 0;
  return e;
}
