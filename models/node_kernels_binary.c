/* tsl.Binary nodes: shape inference, node kernels and schedules (node_kernels_binary.h). */
#include "models/node_kernels_binary.h"

#include <stdlib.h>
#include <string.h>

#include "ops/registry.h"
#include "ir/arena.h"
#include "ops/nn/default_schedule.h"
#include "ops/binary/bitserial.h"
#include "ops/binary/lutconv.h"
#include "models/passes/binary_channels_last.h"
#include "models/passes/bit_im2col.h"
#include "tuner/dispatch.h"

/* The registry operator of node n and its parameters (names in the registry's static
 * storage, so they outlive the node kernel). */
static tsl_status node_op(const tsl_graph *g, int node, const tsl_op_info **info, int *nparams,
                          tsl_dsl_param_value *params, int max) {
  const tsl_node *n = &g->nodes[node];
  const tsl_attr *k = tsl_node_attr(n, "kernel");
  if (!k || k->kind != TSL_ATTR_STRING)
    return tsl_error(TSL_ERR_INVALID, "graph: node '%s' (tsl.Binary) has no string attribute 'kernel'", n->name);
  if (tsl_op_lookup(k->s, info) != TSL_OK)
    return tsl_error(TSL_ERR_INVALID, "graph: node '%s' (tsl.Binary): no operator '%s'", n->name, k->s);
  if (strncmp((*info)->name, "bit", 3) != 0 && strncmp((*info)->name, "binary", 6) != 0 &&
      strncmp((*info)->name, "quantize_unipolar_i32", 21) != 0 && strncmp((*info)->name, "maxpool_packed", 14) != 0 &&
      strcmp((*info)->name, "concat_packed64") != 0 && strcmp((*info)->name, TSL_LUTCONV_OP) != 0)
    return tsl_error(TSL_ERR_INVALID, "graph: node '%s' (tsl.Binary): '%s' is not a binary-family operator", n->name,
                     k->s);
  *nparams = 0;
  for (int a = 0; a < n->n_attrs; a++) {
    const tsl_attr *at = &n->attrs[a];
    if (strcmp(at->name, "kernel") == 0) continue;
    const char *pname = NULL;
    for (int p = 0; p < (*info)->nparams; p++)
      if (strcmp((*info)->param_names[p], at->name) == 0) pname = (*info)->param_names[p];
    if (!pname || (at->kind != TSL_ATTR_INT && at->kind != TSL_ATTR_FLOAT))
      return tsl_error(TSL_ERR_INVALID, "graph: node '%s' (tsl.Binary %s): attribute '%s' is no int/float parameter",
                       n->name, (*info)->name, at->name);
    if (*nparams == max)
      return tsl_error(TSL_ERR_UNSUPPORTED, "graph: node '%s' (tsl.Binary): more than %d parameters", n->name, max);
    params[(*nparams)++] =
        at->kind == TSL_ATTR_INT ? tsl_dsl_int_param(pname, at->i) : tsl_dsl_float_param(pname, at->f);
  }
  return TSL_OK;
}

/* The shape operator `op` takes argument i (inputs first, then outputs) of node n in:
 * the value's storage (a blocked NCHW[x]c value as 5-D), except that the lookup-table
 * conv (ops/binary/lutconv.h) reads its data planes [N, B, CW, H, W] and writes its
 * blocked output [N, K/x, H, W, x] with the pixels as one axis H * W (the same bytes). */
static int arg_shape(const tsl_graph *g, const tsl_node *n, const char *op, int i, int64_t *shape) {
  int v = i < n->n_inputs ? n->inputs[i] : n->outputs[i - n->n_inputs];
  int nd = tsl_value_storage_shape(&g->values[v], shape);
  int merge = !op || strcmp(op, TSL_LUTCONV_OP) != 0 || nd != 5 ? -1 : i == 0 ? 3 : i >= n->n_inputs ? 2 : -1;
  if (merge < 0) return nd;
  shape[merge] *= shape[merge + 1];
  for (int d = merge + 1; d + 1 < nd; d++) shape[d] = shape[d + 1];
  return nd - 1;
}

/* Whether op writes a blocked NCHW[x]c output: the unpack's blocked twin (its logical
 * channels the attribute C) and the lookup-table conv (K). */
static bool writes_blocked(const char *op) { return tsl_binary_is_blocked_unpack(op) || strcmp(op, TSL_LUTCONV_OP) == 0; }

static tsl_dtype dtype_of(tsl_type t) {
  tsl_dtype d = {t.code, (uint8_t)(t.bits < 8 ? 8 : t.bits)};
  return d;
}

tsl_status tsl_binary_infer_node(tsl_graph *g, int node) {
  if (!g || node < 0 || node >= g->n_nodes) return tsl_error(TSL_ERR_INVALID, "binary infer: bad node id %d", node);
  const tsl_node *n = &g->nodes[node];
  const tsl_op_info *info;
  tsl_dsl_param_value params[16];
  int np;
  tsl_status st = node_op(g, node, &info, &np, params, 16);
  if (st != TSL_OK) return st;
  if (n->n_inputs != info->ninputs || n->n_inputs > TSL_NODE_KERNEL_MAX_ARGS)
    return tsl_error(TSL_ERR_INVALID, "graph: node '%s' (tsl.Binary %s): %d inputs (expected %d)", n->name,
                     info->name, n->n_inputs, info->ninputs);
  /* the operator reads the inputs' storage (a blocked NCHW[x]c input as 5-D) */
  int64_t storage[TSL_NODE_KERNEL_MAX_ARGS][TSL_MAX_NDIM];
  const int64_t *shapes[TSL_NODE_KERNEL_MAX_ARGS];
  int ndims[TSL_NODE_KERNEL_MAX_ARGS];
  for (int i = 0; i < n->n_inputs; i++) {
    const tsl_value *v = n->inputs[i] >= 0 ? &g->values[n->inputs[i]] : NULL;
    if (!v || v->ndim < 0)
      return tsl_error(TSL_ERR_INVALID, "graph: node '%s' (tsl.Binary): input %d has no known shape", n->name, i);
    ndims[i] = arg_shape(g, n, info->name, i, storage[i]);
    shapes[i] = storage[i];
  }
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_te_program *p = NULL;
  st = tsl_op_instantiate(info->name, n->n_inputs, shapes, ndims, np, params, &p);
  if (st == TSL_OK) {
    for (int i = 0; i < n->n_inputs && st == TSL_OK; i++) {
      tsl_dtype want = dtype_of(p->inputs[i]->buf->dtype), have = g->values[n->inputs[i]].dtype;
      if (!tsl_dtype_equal(want, have))
        st = tsl_error(TSL_ERR_INVALID, "graph: node '%s' (tsl.Binary %s): input %d is %s, the operator takes %s",
                       n->name, info->name, i, tsl_dtype_str(have), tsl_dtype_str(want));
    }
    if (st == TSL_OK && p->noutputs != n->n_outputs)
      st = tsl_error(TSL_ERR_INVALID, "graph: node '%s' (tsl.Binary %s): %d outputs, the operator has %d", n->name,
                     info->name, n->n_outputs, p->noutputs);
    bool lut = strcmp(info->name, TSL_LUTCONV_OP) == 0; /* writes [N, K/x, H*W, x] */
    for (int o = 0; o < n->n_outputs && st == TSL_OK; o++) {
      const tsl_buffer *b = p->outputs[o]->buf;
      tsl_value *v = &g->values[n->outputs[o]];
      v->dtype = dtype_of(b->dtype);
      memset(v->shape, 0, sizeof v->shape);
      if (v->layout.kind != TSL_LAYOUT_NCHWC && lut) {
        st = tsl_error(TSL_ERR_INVALID,
                       "graph: node '%s' (tsl.Binary %s): output %d must be blocked NCHW[x]c (the operator writes "
                       "[N, K/x, H*W, x])",
                       n->name, info->name, o);
        break;
      }
      if (v->layout.kind == TSL_LAYOUT_NCHWC && !writes_blocked(info->name)) {
        st = tsl_error(TSL_ERR_INVALID,
                       "graph: node '%s' (tsl.Binary %s): output %d is blocked, which only the unpack's blocked twin "
                       "(bitunpack_unipolar64_nchwc) and the lookup-table conv (" TSL_LUTCONV_OP ") write",
                       n->name, info->name, o);
        break;
      }
      if (v->layout.kind == TSL_LAYOUT_NCHWC) {
        /* a blocked output (an unpack's twin, passes/binary_read_blocked.h): the
         * operator writes the storage [N, C/x, H, W, x]; the value keeps the logical
         * [N, C, H, W] with C the node's attribute */
        int64_t x = v->layout.block, C = tsl_node_attr_int(n, lut ? "K" : "C", -1);
        /* [N, C/x, H, W, x]; the lookup-table conv's pixels are one axis H * W */
        int64_t bs[5] = {0, 0, 0, 0, 0};
        const tsl_value *data = &g->values[n->inputs[0]];
        if (lut && b->ndim == 4 && data->ndim == 5 && b->shape[2] == data->shape[3] * data->shape[4]) {
          int64_t unflat[5] = {b->shape[0], b->shape[1], data->shape[3], data->shape[4], b->shape[3]};
          memcpy(bs, unflat, sizeof bs);
        } else if (!lut && b->ndim == 5) {
          memcpy(bs, b->shape, sizeof bs);
        }
        if (bs[0] < 1 || bs[4] != x || C < 1 || C > bs[1] * x || C <= (bs[1] - 1) * x) {
          st = tsl_error(TSL_ERR_INVALID,
                         "graph: node '%s' (tsl.Binary %s): output %d is blocked by %lld channels, the operator does "
                         "not write [N, C/%lld, H, W, %lld] for its C = %lld",
                         n->name, info->name, o, (long long)x, (long long)x, (long long)x, (long long)C);
          break;
        }
        int64_t logical[4] = {bs[0], C, bs[2], bs[3]};
        v->ndim = 4;
        for (int d = 0; d < 4; d++) v->shape[d] = logical[d];
        continue;
      }
      v->ndim = b->ndim;
      for (int d = 0; d < b->ndim; d++) v->shape[d] = b->shape[d];
    }
  } else {
    char why[512];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    st = tsl_error(st, "graph: node '%s' (tsl.Binary %s): %s", n->name, info->name, why);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return st;
}

tsl_status tsl_nk_make_binary(const tsl_graph *g, int node, tsl_node_kernel *k, tsl_text_buf *b) {
  const tsl_node *n = &g->nodes[node];
  const tsl_op_info *info;
  int np;
  tsl_status st = node_op(g, node, &info, &np, k->params, 16);
  if (st != TSL_OK) return st;
  if (n->n_inputs + n->n_outputs > TSL_NODE_KERNEL_MAX_ARGS)
    return tsl_nk_node_err(g, node, TSL_ERR_UNSUPPORTED, "too many arguments");
  k->registry_op = info->name;
  k->nparams = np;
  tsl_text_put(b, "binary %s(", info->name);
  for (int i = 0; i < n->n_inputs + n->n_outputs; i++) {
    int v = i < n->n_inputs ? n->inputs[i] : n->outputs[i - n->n_inputs];
    int64_t shape[TSL_MAX_NDIM];
    int nd = arg_shape(g, n, info->name, i, shape);
    tsl_nk_add_arg(k, v, nd, shape);
    tsl_text_put(b, "%s%s[", i ? ", " : "", tsl_dtype_str(g->values[v].dtype));
    for (int d = 0; d < nd; d++) tsl_text_put(b, "%s%lld", d ? "x" : "", (long long)shape[d]);
    tsl_text_put(b, "]");
  }
  k->ninputs = n->n_inputs;
  tsl_text_put(b, ")");
  for (int p = 0; p < np; p++) {
    if (k->params[p].kind == TSL_DSL_PARAM_INT)
      tsl_text_put(b, " %s=%lld", k->params[p].name, (long long)k->params[p].i);
    else
      tsl_text_put(b, " %s=%.17g", k->params[p].name, k->params[p].f);
  }
  tsl_text_put(b, "\n");
  snprintf(k->label, sizeof k->label, "%s", info->name);
  snprintf(k->op_name, sizeof k->op_name, "binary");
  return TSL_OK;
}

bool tsl_binary_is_bitserial(const char *op) { return op && strncmp(op, "bitserial_conv2d_", 17) == 0; }

bool tsl_binary_is_stream_glue(const char *op) {
  return op && (strcmp(op, "bitpack_unipolar64_i32_nhwc") == 0 || strcmp(op, "binary_global_avgpool_i32_nhwc") == 0);
}

bool tsl_binary_is_blocked_pack(const char *op) {
  size_t n = op ? strlen(op) : 0;
  return n > 6 && strncmp(op, "bitpack_", 8) == 0 && strcmp(op + n - 6, "_nchwc") == 0;
}

bool tsl_binary_is_blocked_unpack(const char *op) { return op && strcmp(op, "bitunpack_unipolar64_nchwc") == 0; }

static bool is_bit_im2col(const char *op) { return op && strcmp(op, "bit_im2col_unipolar64") == 0; }

bool tsl_binary_has_hand_schedule(const char *op) {
  return tsl_binary_is_stream_glue(op) || tsl_binary_is_blocked_pack(op) || tsl_binary_is_blocked_unpack(op) ||
         is_bit_im2col(op);
}

/* The blocked unpack's schedule (tsl_binary_glue_schedule): q (the level of each lane,
 * summed over the bit planes p) computed per pixel of out with p outside its lanes cx,
 * both stages' cx vectorized (one word broadcast, a per-lane shift); out's channel
 * blocks in parallel. */
static tsl_status blocked_unpack_schedule(tsl_schedule *s, const tsl_te_program *p) {
  const char *out = p->outputs[0]->op->name;
  tsl_stage *qs = tsl_schedule_stage(s, "q"), *os = tsl_schedule_stage(s, out);
  if (!qs || !os || tsl_stage_iter_index(qs, "p") < 0 || tsl_stage_iter_index(qs, "cx") < 0 ||
      tsl_stage_iter_index(os, "cb") < 0 || tsl_stage_iter_index(os, "cx") < 0)
    return tsl_error(TSL_ERR_SCHEDULE, "blocked unpack schedule: the op has no stage q(.., cx; p) or out(n, cb, .., cx)");
  static const char *const pcx[] = {"p", "cx"};
  tsl_status st = tsl_schedule_reorder(s, "q", 2, pcx);
  if (st == TSL_OK) st = tsl_schedule_compute_at(s, "q", out, "x");
  if (st == TSL_OK) st = tsl_schedule_vectorize(s, "q", "cx");
  if (st == TSL_OK) st = tsl_schedule_vectorize(s, out, "cx");
  if (st == TSL_OK) st = tsl_schedule_parallel(s, out, "cb");
  return st;
}

/* A blocked pack's schedule (tsl_binary_glue_schedule): part computed per pixel of out,
 * its k loop outside j and j (the block's lanes, contiguous) vectorized; out's rows in
 * parallel, its sum over j left to LLVM (a horizontal add of one vector). */
static tsl_status blocked_pack_schedule(tsl_schedule *s, const tsl_te_program *p) {
  const char *out = p->outputs[0]->op->name;
  tsl_stage *ps = tsl_schedule_stage(s, "part"), *os = tsl_schedule_stage(s, out);
  if (!ps || !os || tsl_stage_iter_index(ps, "k") < 0 || tsl_stage_iter_index(ps, "j") < 0 ||
      tsl_stage_iter_index(os, "y") < 0 || tsl_stage_iter_index(os, "n") < 0)
    return tsl_error(TSL_ERR_SCHEDULE, "blocked pack schedule: the op has no stage part(.., j; k) or out(n, .., y, x)");
  static const char *const kj[] = {"k", "j"}, *const yn[] = {"y", "n"};
  tsl_status st = tsl_schedule_reorder(s, "part", 2, kj);
  if (st == TSL_OK) st = tsl_schedule_compute_at(s, "part", out, "x");
  if (st == TSL_OK) st = tsl_schedule_vectorize(s, "part", "j");
  if (st == TSL_OK) st = tsl_schedule_reorder(s, out, 2, yn);
  if (st == TSL_OK) st = tsl_schedule_parallel(s, out, "y");
  return st;
}

/* The bit im2col's schedule (tsl_binary_glue_schedule; passes/bit_im2col.h): rows in
 * parallel; per row, tiles of two vectors of 64-bit lanes along x, the window's taps
 * (r, s) unrolled inside each output word j, j unrolled too when the tile's body stays
 * small (<= 256 taps), so that the test of which word a tap goes to folds away and each
 * tap is one load, mask, shift and add of the tile's vectors. */
static tsl_status bit_im2col_schedule(tsl_schedule *s, const tsl_te_program *p, const tsl_target *t) {
  const char *out = p->outputs[0]->op->name;
  const tsl_buffer *ob = p->outputs[0]->buf;
  tsl_stage *os = tsl_schedule_stage(s, out);
  if (!os || ob->ndim != 5 || tsl_stage_iter_index(os, "j") < 0 || tsl_stage_iter_index(os, "r") < 0 ||
      tsl_stage_iter_index(os, "s") < 0 || tsl_stage_iter_index(os, "x") < 0)
    return tsl_error(TSL_ERR_SCHEDULE, "bit im2col schedule: the op has no stage out(n, b, j, y, x; r, s)");
  int64_t lanes = tsl_target_f32_lanes(t) / 2, words = ob->shape[2], taps = 1;
  for (int i = 0; i < os->niters; i++)
    if (strcmp(os->iters[i].name, "r") == 0 || strcmp(os->iters[i].name, "s") == 0) taps *= os->iters[i].extent;
  int64_t ow = ob->shape[4], tile = 2 * (lanes < 1 ? 1 : lanes);
  if (tile > ow) tile = ow; /* a narrow output: one tile of the whole row */
  static const char *const order[] = {"y", "n", "b", "x.outer", "j", "r", "s", "x.inner"};
  tsl_status st = tsl_schedule_split(s, out, "x", tile);
  if (st == TSL_OK) st = tsl_schedule_reorder(s, out, 8, order);
  if (st == TSL_OK && tile >= 2) st = tsl_schedule_vectorize(s, out, "x.inner");
  if (st == TSL_OK && taps <= 64) st = tsl_schedule_unroll(s, out, "r");
  if (st == TSL_OK && taps <= 64) st = tsl_schedule_unroll(s, out, "s");
  if (st == TSL_OK && taps <= 64 && words * taps <= 256) st = tsl_schedule_unroll(s, out, "j");
  if (st == TSL_OK) st = tsl_schedule_parallel(s, out, "y");
  return st;
}

tsl_status tsl_binary_node_schedule(const tsl_records *db, const tsl_target *t, const tsl_node_kernel *nk,
                                    FILE *warn, tsl_te_program **prog, tsl_schedule **s, bool *tuned) {
  *tuned = false;
  *prog = NULL;
  *s = NULL;
  const int64_t *shapes[TSL_NODE_KERNEL_MAX_ARGS];
  for (int i = 0; i < nk->ninputs; i++) shapes[i] = nk->shapes[i];
  if (db && tsl_binary_is_bitserial(nk->registry_op)) {
    tsl_workload w;
    tsl_dispatch_info info;
    tsl_status st = tsl_workload_init(&w, nk->registry_op, nk->ninputs, shapes, nk->ndims, nk->nparams, nk->params);
    if (st == TSL_OK) st = tsl_dispatch_schedule(db, t, &w, warn, prog, s, &info);
    if (st == TSL_OK) *tuned = info.tuned;
    return st;
  }
  tsl_status st = tsl_op_instantiate(nk->registry_op, nk->ninputs, shapes, nk->ndims, nk->nparams, nk->params, prog);
  if (st != TSL_OK) return st;
  return tsl_binary_is_bitserial(nk->registry_op) ? tsl_bitserial_schedule(*prog, t, NULL, s)
                                                  : tsl_default_schedule(*prog, t, s);
}

int tsl_binary_model_workloads(const tsl_graph *g0, tsl_workload *out, int *nodes, int max) {
  int n = 0;
  /* the operators the compiler runs: the residual streams channels-last, narrow convs over
   * their packed taps (passes/bit_im2col.h); nodes[] are the ids in g0 of the convs' names */
  tsl_graph *copy = NULL;
  if (g0 && tsl_graph_clone(g0, &copy) == TSL_OK &&
      (tsl_pass_binary_channels_last(copy, NULL) != TSL_OK || tsl_pass_bit_im2col(copy, NULL) != TSL_OK)) {
    tsl_graph_free(copy);
    copy = NULL;
  }
  tsl_clear_error();
  const tsl_graph *g = copy ? copy : g0;
  for (int i = 0; g && i < g->n_nodes && n < max; i++) {
    if (g->nodes[i].op != TSL_OP_BINARY) continue;
    tsl_node_kernel nk;
    memset(&nk, 0, sizeof nk);
    if (tsl_node_kernel_make(g, i, &nk) != TSL_OK) continue;
    const int64_t *shapes[TSL_NODE_KERNEL_MAX_ARGS];
    for (int a = 0; a < nk.ninputs; a++) shapes[a] = nk.shapes[a];
    bool dup = false;
    if (tsl_binary_is_bitserial(nk.registry_op) &&
        tsl_workload_init(&out[n], nk.registry_op, nk.ninputs, shapes, nk.ndims, nk.nparams, nk.params) == TSL_OK) {
      char *key = NULL, *other = NULL;
      if (tsl_workload_key_of(&out[n], &key) == TSL_OK)
        for (int k = 0; k < n && !dup; k++) {
          if (tsl_workload_key_of(&out[k], &other) == TSL_OK) dup = strcmp(other, key) == 0;
          free(other);
          other = NULL;
        }
      free(key);
      /* the node of g0 of that name: the im2col pass re-creates the conv under its name */
      int at = -1;
      for (int j = 0; j < g0->n_nodes && at < 0; j++)
        if (g0->nodes[j].name && g->nodes[i].name && strcmp(g0->nodes[j].name, g->nodes[i].name) == 0) at = j;
      if (!dup && at >= 0) nodes[n++] = at;
    }
    tsl_node_kernel_clear(&nk);
  }
  tsl_graph_free(copy);
  return n;
}

tsl_status tsl_binary_glue_schedule(const char *op, const tsl_te_program *p, const tsl_target *t,
                                    tsl_schedule **out) {
  *out = NULL;
  bool blocked = tsl_binary_is_blocked_pack(op), unpack = tsl_binary_is_blocked_unpack(op), im2col = is_bit_im2col(op);
  if (!blocked && !unpack && !im2col && (!op || strcmp(op, "bitpack_unipolar64_i32_nhwc") != 0))
    return tsl_default_schedule(p, t, out);
  tsl_schedule *s = NULL;
  tsl_status st = tsl_schedule_create(p, &s);
  if (st == TSL_OK && im2col) {
    st = bit_im2col_schedule(s, p, t);
  } else if (st == TSL_OK && unpack) {
    st = blocked_unpack_schedule(s, p);
  } else if (st == TSL_OK && blocked) {
    st = blocked_pack_schedule(s, p);
  } else if (st == TSL_OK) {
    const char *name = p->outputs[0]->op->name;
    tsl_stage *os = tsl_schedule_stage(s, name);
    if (os && tsl_stage_iter_index(os, "y") >= 0 && tsl_stage_iter_index(os, "n") >= 0) {
      static const char *const order[] = {"y", "n"};
      st = tsl_schedule_reorder(s, name, 2, order);
      if (st == TSL_OK) st = tsl_schedule_parallel(s, name, "y");
    }
  }
  if (st != TSL_OK) {
    tsl_schedule_free(s);
    return st;
  }
  *out = s;
  return TSL_OK;
}
