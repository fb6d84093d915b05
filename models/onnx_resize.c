/* ONNX Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9) as the canonical Resize
 * node of graph.h: the constant scales or sizes become attributes, every output extent is
 * written out ("sizes"), and the opset-10 / Upsample behaviour (asymmetric coordinates,
 * floor when upsampling and ceil when downsampling for nearest, as ONNX Runtime's
 * Upsample) is spelled with coordinate_transformation_mode and nearest_mode.
 * Semantics per opset: onnx/docs/Changelog.md. What tessel does not compute is refused
 * here, naming the variant: mode "cubic", coordinate_transformation_mode
 * "tf_crop_and_resize", antialias = 1, keep_aspect_ratio_policy other than "stretch". */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/onnx_internal.h"

static bool one_of(const char *s, const char *const *list) {
  for (; *list; list++)
    if (strcmp(s, *list) == 0) return true;
  return false;
}

/* A constant float input k (Resize's scales): *n = -1 when omitted or empty. */
static tsl_status const_floats(onnx_ctx *c, int k, double *v, int max, int *n) {
  int id;
  tsl_status st = onnx_input(c, k, &id);
  *n = -1;
  if (st != TSL_OK || id < 0) return st;
  const tsl_tensor *t = c->g->values[id].constant;
  if (!t) return onnx_err(c, TSL_ERR_UNSUPPORTED, "scales input '%s' must be a constant", c->g->values[id].name);
  if (t->dtype.code != TSL_DT_FLOAT || t->ndim > 1)
    return onnx_err(c, TSL_ERR_INVALID, "scales must be a 1-D float tensor (%s, rank %d)", tsl_dtype_str(t->dtype),
                    t->ndim);
  int64_t numel = tsl_tensor_numel(t);
  if (numel == 0) return TSL_OK;
  if (numel > max) return onnx_err(c, TSL_ERR_INVALID, "%lld scales", (long long)numel);
  for (int64_t i = 0; i < numel; i++) v[i] = tsl_tensor_get_f64(t, i);
  *n = (int)numel;
  return TSL_OK;
}

/* The modes (and their checks) of one node; legacy: opset-10 Resize and Upsample. */
static tsl_status read_modes(onnx_ctx *c, bool legacy, char *mode, char *coord, char *nearest, size_t n) {
  static const char *const coords[] = {"half_pixel",           "pytorch_half_pixel", "align_corners",
                                       "asymmetric",           "tf_half_pixel_for_nn", "half_pixel_symmetric",
                                       NULL};
  static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", NULL};
  tsl_status st = onnx_attr_string(c, "mode", "nearest", mode, n);
  if (st != TSL_OK) return st;
  if (strcmp(mode, "cubic") == 0)
    return onnx_err(c, TSL_ERR_UNSUPPORTED, "mode 'cubic' is not supported (nearest and linear are)");
  if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0)
    return onnx_err(c, TSL_ERR_INVALID, "mode '%s' (expected nearest, linear or cubic)", mode);
  if (legacy) {
    snprintf(coord, n, "asymmetric");
    snprintf(nearest, n, "simple");
    return TSL_OK;
  }
  if ((st = onnx_attr_string(c, "coordinate_transformation_mode", "half_pixel", coord, n)) != TSL_OK) return st;
  if ((st = onnx_attr_string(c, "nearest_mode", "round_prefer_floor", nearest, n)) != TSL_OK) return st;
  if (strcmp(coord, "tf_crop_and_resize") == 0)
    return onnx_err(c, TSL_ERR_UNSUPPORTED, "coordinate_transformation_mode 'tf_crop_and_resize' is not supported");
  if (!one_of(coord, coords)) return onnx_err(c, TSL_ERR_INVALID, "coordinate_transformation_mode '%s'", coord);
  if (!one_of(nearest, nearests)) return onnx_err(c, TSL_ERR_INVALID, "nearest_mode '%s'", nearest);
  int64_t antialias = 0;
  char policy[32];
  if ((st = onnx_attr_int(c, "antialias", 0, &antialias)) != TSL_OK) return st;
  if (antialias) return onnx_err(c, TSL_ERR_UNSUPPORTED, "antialias = %lld is not supported (0 is)", (long long)antialias);
  if ((st = onnx_attr_string(c, "keep_aspect_ratio_policy", "stretch", policy, sizeof policy)) != TSL_OK) return st;
  if (strcmp(policy, "stretch") != 0)
    return onnx_err(c, TSL_ERR_UNSUPPORTED, "keep_aspect_ratio_policy '%s' is not supported (stretch is)", policy);
  return TSL_OK;
}

/* Scatters the per-listed-axis values v[0..n) (opset 18's axes, else every axis) into
 * full[0..r), the rest keeping their value. */
static tsl_status scatter_axes(onnx_ctx *c, const char *what, int r, int n, const double *v, double *full) {
  int na = 0;
  const int64_t *axes = NULL;
  tsl_status st = onnx_attr_ints(c, "axes", &na, &axes);
  if (st != TSL_OK) return st;
  if (!axes) {
    if (n != r) return onnx_err(c, TSL_ERR_INVALID, "%d %s for an input of rank %d", n, what, r);
    for (int d = 0; d < r; d++) full[d] = v[d];
    return TSL_OK;
  }
  if (n != na) return onnx_err(c, TSL_ERR_INVALID, "%d %s for %d axes", n, what, na);
  bool seen[TSL_MAX_NDIM] = {0};
  for (int i = 0; i < na; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
    if (a < 0 || a >= r || seen[a])
      return onnx_err(c, TSL_ERR_INVALID, "axis %lld out of range or repeated for rank %d", (long long)axes[i], r);
    seen[a] = true;
    full[a] = v[i];
  }
  return TSL_OK;
}

/* The common part: X is input 0, scales (n_scales >= 0) or sizes (n_sizes >= 0) given. */
static tsl_status emit_resize(onnx_ctx *c, bool legacy, const double *scales, int n_scales, const int64_t *sizes,
                              int n_sizes) {
  char mode[32], coord[32], nearest[32];
  tsl_status st = read_modes(c, legacy, mode, coord, nearest, sizeof mode);
  int x;
  if (st == TSL_OK) st = onnx_required_input(c, 0, &x);
  if (st != TSL_OK) return st;
  if ((n_scales >= 0) == (n_sizes >= 0))
    return onnx_err(c, TSL_ERR_INVALID, "exactly one of scales and sizes must be given (%s)",
                    n_scales >= 0 ? "both are" : "neither is");
  const tsl_value *xv = &c->g->values[x];
  int r = xv->ndim;
  int64_t out[TSL_MAX_NDIM], in[TSL_MAX_NDIM];
  double full_scales[TSL_MAX_NDIM], full_sizes[TSL_MAX_NDIM], given[TSL_MAX_NDIM];
  for (int d = 0; d < r; d++) {
    in[d] = xv->shape[d];
    full_scales[d] = 1.0;
    full_sizes[d] = (double)in[d];
  }
  if (n_scales >= 0) {
    if ((st = scatter_axes(c, "scales", r, n_scales, scales, full_scales)) != TSL_OK) return st;
    for (int d = 0; d < r; d++) {
      if (!(full_scales[d] > 0.0) || !isfinite(full_scales[d]))
        return onnx_err(c, TSL_ERR_INVALID, "scale %g on axis %d (must be positive)", full_scales[d], d);
      /* ONNX: floor(input extent * scale), the float32 scale taken exactly */
      double e = floor((double)in[d] * full_scales[d]);
      if (e > (double)TSL_GRAPH_MAX_NUMEL)
        return onnx_err(c, TSL_ERR_INVALID, "scale %g makes axis %d too long", full_scales[d], d);
      out[d] = (int64_t)e;
    }
  } else {
    for (int i = 0; i < n_sizes && i < TSL_MAX_NDIM; i++) given[i] = (double)sizes[i];
    if ((st = scatter_axes(c, "sizes", r, n_sizes, given, full_sizes)) != TSL_OK) return st;
    for (int d = 0; d < r; d++) out[d] = (int64_t)full_sizes[d];
  }
  int node;
  if ((st = onnx_emit_simple(c, TSL_OP_RESIZE, 1, &node)) != TSL_OK) return st;
  st = tsl_graph_set_attr_ints(c->g, node, "sizes", r, out);
  if (st == TSL_OK && n_scales >= 0) st = tsl_graph_set_attr_floats(c->g, node, "scales", r, full_scales);
  if (st == TSL_OK) st = tsl_graph_set_attr_string(c->g, node, "mode", strcmp(mode, "linear") == 0 ? "linear" : "nearest");
  if (st == TSL_OK) st = tsl_graph_set_attr_string(c->g, node, "coordinate_transformation_mode", coord);
  if (st == TSL_OK) st = tsl_graph_set_attr_string(c->g, node, "nearest_mode", nearest);
  if (st != TSL_OK) return onnx_wrap(c, st);
  return onnx_finish_node(c, node);
}

tsl_status onnx_import_resize(onnx_ctx *c) {
  static const char *const v10[] = {"mode", NULL};
  static const char *const v11[] = {"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
                                    "extrapolation_value",            "mode",          "nearest_mode",
                                    NULL};
  static const char *const v18[] = {"antialias",   "axes", "coordinate_transformation_mode", "cubic_coeff_a",
                                    "exclude_outside", "extrapolation_value", "keep_aspect_ratio_policy", "mode",
                                    "nearest_mode", NULL};
  if (c->opset < 10) return onnx_err(c, TSL_ERR_UNSUPPORTED, "Resize is defined from opset 10 on");
  bool legacy = c->opset < 11;
  tsl_status st = onnx_check_attrs(c, legacy ? v10 : c->opset < 18 ? v11 : v18);
  int n = onnx_n_inputs(c);
  int lo = legacy ? 2 : c->opset < 13 ? 3 : 1, hi = legacy ? 2 : 4;
  if (st == TSL_OK && (n < lo || n > hi)) st = onnx_err(c, TSL_ERR_INVALID, "%d inputs (expected %d..%d)", n, lo, hi);
  if (st != TSL_OK) return st;
  /* roi (input 1 from opset 11) only matters for tf_crop_and_resize, which is refused */
  double scales[TSL_MAX_NDIM];
  int64_t sizes[TSL_MAX_NDIM];
  int ns = -1, nz = -1;
  st = const_floats(c, legacy ? 1 : 2, scales, TSL_MAX_NDIM, &ns);
  if (st == TSL_OK && !legacy) st = onnx_const_ints(c, 3, "sizes", sizes, TSL_MAX_NDIM, &nz);
  if (st == TSL_OK && nz == 0) nz = -1; /* an empty sizes tensor stands for "not given" */
  return st == TSL_OK ? emit_resize(c, legacy, scales, ns, sizes, nz) : st;
}

tsl_status onnx_import_upsample(onnx_ctx *c) {
  static const char *const v7[] = {"mode", "scales", NULL};
  static const char *const v9[] = {"mode", NULL};
  if (c->opset < 7)
    return onnx_err(c, TSL_ERR_UNSUPPORTED, "the opset-%lld definition of Upsample is not supported (accepted from 7)",
                    (long long)c->opset);
  bool attr = c->opset < 9;
  tsl_status st = onnx_check_attrs(c, attr ? v7 : v9);
  int n = onnx_n_inputs(c);
  if (st == TSL_OK && n != (attr ? 1 : 2))
    st = onnx_err(c, TSL_ERR_INVALID, "%d inputs (expected %d)", n, attr ? 1 : 2);
  if (st != TSL_OK) return st;
  double scales[TSL_MAX_NDIM];
  int ns = -1;
  if (attr) {
    const Onnx__AttributeProto *a = onnx_attr(c, "scales");
    if (!a) return onnx_err(c, TSL_ERR_INVALID, "attribute 'scales' is required");
    if (a->n_floats > TSL_MAX_NDIM) return onnx_err(c, TSL_ERR_INVALID, "%zu scales", a->n_floats);
    for (size_t i = 0; i < a->n_floats; i++) scales[i] = a->floats[i];
    ns = (int)a->n_floats;
  } else if ((st = const_floats(c, 1, scales, TSL_MAX_NDIM, &ns)) != TSL_OK) {
    return st;
  }
  /* Upsample only enlarges: every scale >= 1 */
  for (int i = 0; i < ns; i++)
    if (!(scales[i] >= 1.0)) return onnx_err(c, TSL_ERR_INVALID, "scale %g on axis %d (Upsample needs >= 1)", scales[i], i);
  return emit_resize(c, true, scales, ns < 0 ? 0 : ns, NULL, -1);
}
