/* Composition of channel selections into tsl.ChannelGather nodes (channel_gather.h). */
#include "models/passes/channel_gather.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "models/passes/uses.h"
#include "ops/nn/generators.h"

/* The most pieces a composed gather may take. A piece that picks lanes costs about one
 * gather per output vector, so composing a chain further than a few selections costs
 * more than writing the intermediate: on ShuffleNet V2 (AVX2, 1 thread, sum of the
 * profiled data-movement steps) 1.61 ms at 2 pieces, 1.53 at 3, 1.49 at 4, 2.04 at 8,
 * against 3.31 ms uncomposed. */
#define COMPOSE_MAX_PIECES 4

/* Where each output channel of a selection comes from: value src[k], its channel ch[k]. */
typedef struct chan_map {
  int n;
  int *src;
  int64_t *ch;
} chan_map;

static void map_free(chan_map *m) {
  free(m->src);
  free(m->ch);
  m->src = NULL;
  m->ch = NULL;
}

static bool is_image(const tsl_value *v) {
  return v->ndim == 4 && !v->constant && tsl_dtype_equal(v->dtype, TSL_DTYPE_F32);
}

/* The start of a Slice that keeps every axis but the channels whole (steps 1), else -1. */
static int64_t channel_slice_start(const tsl_graph *g, const tsl_node *n) {
  const tsl_value *x = &g->values[n->inputs[0]], *y = &g->values[n->outputs[0]];
  int ns, na, nst;
  const int64_t *starts = tsl_node_attr_ints(n, "starts", &ns), *axes = tsl_node_attr_ints(n, "axes", &na),
                *steps = tsl_node_attr_ints(n, "steps", &nst);
  if (!starts || (axes && na != ns) || (steps && nst != ns)) return -1;
  for (int d = 0; d < 4; d++)
    if (d != 1 && x->shape[d] != y->shape[d]) return -1;
  int64_t s = 0;
  for (int i = 0; i < ns; i++) {
    int64_t ax = axes ? axes[i] : i;
    if (steps && steps[i] != 1) return -1;
    if (ax != 1 && ax != -3) continue;
    s = starts[i] < 0 ? starts[i] + x->shape[1] : starts[i];
    s = s < 0 ? 0 : s > x->shape[1] ? x->shape[1] : s;
  }
  return s + y->shape[1] <= x->shape[1] ? s : -1;
}

/* Whether gather pieces q[0..np) hold each of the C output channels once, from inputs
 * 0..nin-1 (a gather that leaves channels 0 or overlaps is not composed). */
static bool covers(const int64_t *q, int np, int64_t C, int nin) {
  int64_t total = 0;
  bool *seen = calloc((size_t)C, sizeof *seen), ok = seen != NULL;
  for (int p = 0; p < np && ok; p++, q += 6)
    for (int64_t k = 0; k < q[3] && ok; k++) {
      int64_t o = q[1] + k * q[2];
      ok = q[0] >= 0 && q[0] < nin && o >= 0 && o < C && !seen[o];
      if (ok) seen[o] = true;
      total++;
    }
  free(seen);
  return ok && total == C;
}

/* Whether node i picks channels of images: its map over its own inputs in *m (NULL: the
 * answer only). Errors: TSL_ERR_NOMEM. */
static tsl_status selection_map(const tsl_graph *g, int i, bool *is, chan_map *m) {
  const tsl_node *n = &g->nodes[i];
  *is = false;
  if (n->n_outputs != 1 || n->n_inputs < 1 || !is_image(&g->values[n->outputs[0]])) return TSL_OK;
  for (int k = 0; k < n->n_inputs; k++)
    if (n->inputs[k] < 0 || !is_image(&g->values[n->inputs[k]])) return TSL_OK;
  const tsl_value *y = &g->values[n->outputs[0]];
  int64_t C = y->shape[1], sl = 0, grp = 1;
  int np = 0;
  const int64_t *pieces = NULL;
  switch (n->op) {
  case TSL_OP_CONCAT: {
    int64_t ax = tsl_node_attr_int(n, "axis", 0);
    if (ax != 1 && ax != -3) return TSL_OK;
    break;
  }
  case TSL_OP_SLICE:
    if (n->n_inputs != 1 || (sl = channel_slice_start(g, n)) < 0) return TSL_OK;
    break;
  case TSL_OP_CHANNEL_SHUFFLE:
    grp = tsl_node_attr_int(n, "group", 1);
    if (grp < 1 || C % grp) return TSL_OK;
    break;
  case TSL_OP_CHANNEL_GATHER:
    pieces = tsl_node_attr_ints(n, "pieces", &np);
    if (!pieces || np % 6 || !covers(pieces, np / 6, C, n->n_inputs)) return TSL_OK;
    break;
  default: return TSL_OK;
  }
  *is = true;
  if (!m) return TSL_OK;
  m->n = (int)C;
  m->src = malloc((size_t)C * sizeof *m->src);
  m->ch = malloc((size_t)C * sizeof *m->ch);
  if (!m->src || !m->ch) {
    map_free(m);
    return tsl_error(TSL_ERR_NOMEM, "channel_gather: out of memory");
  }
  for (int64_t k = 0; k < C; k++) {
    m->src[k] = n->inputs[0];
    m->ch[k] = 0; /* channels no gather piece covers: read as 0 by the gather (not by this pass) */
  }
  if (n->op == TSL_OP_CONCAT) {
    int64_t at = 0;
    for (int k = 0; k < n->n_inputs; k++)
      for (int64_t c = 0; c < g->values[n->inputs[k]].shape[1] && at < C; c++, at++) {
        m->src[at] = n->inputs[k];
        m->ch[at] = c;
      }
  } else if (n->op == TSL_OP_SLICE) {
    for (int64_t k = 0; k < C; k++) m->ch[k] = sl + k;
  } else if (n->op == TSL_OP_CHANNEL_SHUFFLE) {
    for (int64_t k = 0; k < C; k++) m->ch[k] = (k % grp) * (C / grp) + k / grp; /* ops/nn/channel_shuffle.c */
  } else {
    for (int p = 0; p < np / 6; p++) {
      const int64_t *q = pieces + 6 * p;
      for (int64_t k = q[3] - 1; k >= 0; k--) { /* the first piece wins: written last */
        int64_t o = q[1] + k * q[2];
        if (q[0] < 0 || q[0] >= n->n_inputs || o < 0 || o >= C) continue;
        m->src[o] = n->inputs[q[0]];
        m->ch[o] = q[4] + k * q[5];
      }
    }
  }
  return TSL_OK;
}

/* Whether value v is a selection's output that its readers can compose: every reader a
 * selection, not a graph output. */
static tsl_status composable(const tsl_graph *g, int v, bool *out) {
  *out = false;
  const tsl_value *x = &g->values[v];
  if (x->producer < 0 || tsl_pass_is_graph_output(g, v)) return TSL_OK;
  bool is, any = false;
  tsl_status st = selection_map(g, x->producer, &is, NULL);
  if (st != TSL_OK || !is) return st;
  for (int i = 0; i < g->n_nodes; i++)
    for (int k = 0; k < g->nodes[i].n_inputs; k++) {
      if (g->nodes[i].inputs[k] != v) continue;
      if ((st = selection_map(g, i, &is, NULL)) != TSL_OK || !is) return st;
      any = true;
    }
  *out = any;
  return TSL_OK;
}

/* The map as affine pieces (input index into ins, out_start, out_step, count, in_start,
 * in_step), runs of each source in output order; false when they exceed max pieces. */
static bool to_pieces(const chan_map *m, int *ins, int *nin, int64_t *pieces, int *np, int max) {
  *nin = 0;
  *np = 0;
  for (int k = 0; k < m->n; k++) {
    int a = 0;
    while (a < *nin && ins[a] != m->src[k]) a++;
    if (a == max) return false; /* more sources than pieces */
    if (a == *nin) ins[(*nin)++] = m->src[k];
  }
  for (int a = 0; a < *nin; a++) {
    int64_t *q = NULL; /* the open piece of this source */
    for (int k = 0; k < m->n; k++) {
      if (m->src[k] != ins[a]) continue;
      if (q && q[3] == 1) { /* a second channel sets the steps */
        q[2] = k - q[1];
        q[5] = m->ch[k] - q[4];
        q[3] = 2;
        continue;
      }
      if (q && k == q[1] + q[3] * q[2] && m->ch[k] == q[4] + q[3] * q[5]) {
        q[3]++;
        continue;
      }
      if (*np == max) return false;
      q = pieces + 6 * (*np)++;
      int64_t fresh[6] = {a, k, 1, 1, m->ch[k], 1};
      memcpy(q, fresh, sizeof fresh);
    }
  }
  return true;
}

/* Whether the pieces are every input whole, one after the other: a Concat, which the
 * plan builder can elide (its producers writing into its buffer, plan_build.h). */
static bool is_concatenation(const tsl_graph *g, const int *ins, int nin, const int64_t *pieces, int np) {
  int64_t at = 0;
  for (int p = 0; p < np; p++, pieces += 6) {
    if (np != nin || pieces[0] != p || pieces[1] != at || pieces[4] != 0 ||
        pieces[3] != g->values[ins[p]].shape[1] || (pieces[3] > 1 && (pieces[2] != 1 || pieces[5] != 1)))
      return false;
    at += pieces[3];
  }
  return true;
}

/* Rewrites node i (a selection whose composed map is m) as a tsl.ChannelGather when m fits
 * COMPOSE_MAX_PIECES pieces; *done says whether it did; *y the value that now holds the output. */
static tsl_status rewrite(tsl_graph *g, int i, const chan_map *m, bool *done, int *y) {
  int ins[COMPOSE_MAX_PIECES], nin, np, node;
  int64_t pieces[6 * COMPOSE_MAX_PIECES];
  *done = false;
  *y = g->nodes[i].outputs[0];
  if (!to_pieces(m, ins, &nin, pieces, &np, COMPOSE_MAX_PIECES)) return TSL_OK;
  int old = g->nodes[i].outputs[0];
  bool cat = is_concatenation(g, ins, nin, pieces, np);
  tsl_status st = tsl_pass_add_replacement(g, old, cat ? "concatenated" : "gathered",
                                           cat ? TSL_OP_CONCAT : TSL_OP_CHANNEL_GATHER, nin, ins, &node, y);
  if (st == TSL_OK && cat) st = tsl_graph_set_attr_int(g, node, "axis", 1);
  if (st == TSL_OK && !cat) st = tsl_graph_set_attr_int(g, node, "channels", m->n);
  if (st == TSL_OK && !cat) st = tsl_graph_set_attr_ints(g, node, "pieces", 6 * np, pieces);
  if (st != TSL_OK) return st;
  tsl_value *v = &g->values[*y];
  v->dtype = g->values[old].dtype;
  v->ndim = 4;
  memcpy(v->shape, g->values[old].shape, sizeof v->shape);
  *done = true;
  return TSL_OK;
}

tsl_status tsl_pass_channel_gather(tsl_graph *g, int *found) {
  if (found) *found = 0;
  if (!g) return tsl_error(TSL_ERR_INVALID, "channel_gather: NULL graph");
  int n0 = g->n_nodes, cap = g->n_values + n0 + 1, count = 0;
  chan_map *memo = calloc((size_t)cap, sizeof *memo); /* per value: the map of its selection */
  if (!memo) return tsl_error(TSL_ERR_NOMEM, "channel_gather: out of memory");
  tsl_status st = TSL_OK;
  for (int i = 0; i < n0 && st == TSL_OK; i++) {
    bool is, composed = false, comp = false;
    chan_map base = {0}, m = {0};
    if ((st = selection_map(g, i, &is, &base)) != TSL_OK || !is) continue;
    m.n = base.n;
    m.src = malloc((size_t)base.n * sizeof *m.src);
    m.ch = malloc((size_t)base.n * sizeof *m.ch);
    if (!m.src || !m.ch) st = tsl_error(TSL_ERR_NOMEM, "channel_gather: out of memory");
    int last = -1; /* the source whose composability comp holds */
    for (int k = 0; k < base.n && st == TSL_OK; k++) {
      int s = base.src[k];
      m.src[k] = s;
      m.ch[k] = base.ch[k];
      if (s >= cap || !memo[s].src) continue;
      if (s != last && (st = composable(g, s, &comp)) != TSL_OK) break;
      last = s;
      if (!comp) continue;
      m.src[k] = memo[s].src[base.ch[k]];
      m.ch[k] = memo[s].ch[base.ch[k]];
      composed = true;
    }
    int y = g->nodes[i].outputs[0];
    bool done = false;
    if (st == TSL_OK && composed) st = rewrite(g, i, &m, &done, &y);
    count += done;
    if (st == TSL_OK && y < cap) {
      memo[y] = done ? m : base;
      if (done) map_free(&base);
      else map_free(&m);
    } else {
      map_free(&base);
      map_free(&m);
    }
  }
  for (int v = 0; v < cap; v++) map_free(&memo[v]);
  free(memo);
  if (st == TSL_OK && count > 0) st = tsl_graph_toposort(g);
  if (st == TSL_OK && count > 0) st = tsl_graph_prune(g);
  if (st == TSL_OK && found) *found = count;
  return st;
}
