/* A channel gather (generators.h): output channels picked from several images by affine
 * pieces; what a chain of channel Concat, Slice and ChannelShuffle composes to
 * (models/passes/channel_gather.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "ops/nn/generators.h"
#include "ops/op_text.h"

/* The attribute names of the pieces: the generators' attribute names are static strings. */
static const char *const piece_names[TSL_CHANNEL_GATHER_MAX_PIECES] = {"piece0", "piece1", "piece2", "piece3",
                                                                      "piece4", "piece5", "piece6", "piece7"};

const char *tsl_channel_gather_piece_name(int p) {
  return p >= 0 && p < TSL_CHANNEL_GATHER_MAX_PIECES ? piece_names[p] : NULL;
}

typedef struct piece {
  int64_t input, out_start, out_step, count, in_start, in_step;
} piece;

/* The pieces of the call, each checked against the arguments' channel counts. */
static tsl_status read_pieces(const tsl_op_call *c, piece *ps, int *np) {
  int64_t n = tsl_op_call_int(c, "npieces", 0), Cout = c->args[c->ninputs].shape[1];
  if (n < 1 || n > TSL_CHANNEL_GATHER_MAX_PIECES)
    return tsl_error(TSL_ERR_INVALID, "channel_gather: %lld pieces (1..%d)", (long long)n, TSL_CHANNEL_GATHER_MAX_PIECES);
  for (int p = 0; p < (int)n; p++) {
    int m;
    const int64_t *v = tsl_op_call_ints(c, piece_names[p], &m);
    if (!v || m != 6)
      return tsl_error(TSL_ERR_INVALID, "channel_gather: attribute %s must hold 6 integers (input, out_start, "
                       "out_step, count, in_start, in_step)", piece_names[p]);
    piece q = {v[0], v[1], v[2], v[3], v[4], v[5]};
    bool ok = q.input >= 0 && q.input < c->ninputs && q.out_step >= 1 && q.count >= 1 && q.out_start >= 0 &&
              q.out_start + (q.count - 1) * q.out_step < Cout;
    int64_t last = q.in_start + (q.count - 1) * q.in_step;
    ok = ok && q.in_start >= 0 && last >= 0 && q.in_start < c->args[q.input].shape[1] &&
         last < c->args[q.input].shape[1];
    if (!ok)
      return tsl_error(TSL_ERR_INVALID, "channel_gather: %s (%lld, %lld, %lld, %lld, %lld, %lld) leaves the %d inputs "
                       "or the %lld output channels", piece_names[p], (long long)q.input, (long long)q.out_start,
                       (long long)q.out_step, (long long)q.count, (long long)q.in_start, (long long)q.in_step,
                       c->ninputs, (long long)Cout);
    ps[p] = q;
  }
  *np = (int)n;
  return TSL_OK;
}

/* "k" of piece q at output channel `ch` (an expression), clamped into 0..count-1 so that
 * every lane reads inside its input. */
static void put_k(tsl_text_buf *b, const piece *q, const char *ch) {
  if (q->out_step == 1) tsl_text_put(b, "min(max(%s - %lld, 0), %lld)", ch, (long long)q->out_start, (long long)(q->count - 1));
  else
    tsl_text_put(b, "min(max((%s - %lld) / %lld, 0), %lld)", ch, (long long)q->out_start, (long long)q->out_step,
                 (long long)(q->count - 1));
}

/* Whether output channel `ch` (an expression) belongs to piece q. */
static void put_member(tsl_text_buf *b, const piece *q, const char *ch) {
  tsl_text_put(b, "%s >= %lld && %s < %lld", ch, (long long)q->out_start, ch,
               (long long)(q->out_start + (q->count - 1) * q->out_step + 1));
  if (q->out_step > 1) tsl_text_put(b, " && (%s - %lld) %% %lld == 0", ch, (long long)q->out_start, (long long)q->out_step);
}

/* Whole blocks in NCHW[x]c: starts on block boundaries, unit steps, and a count of
 * whole blocks or one that ends both the output and the input (whose padding lanes are
 * the output's). Such a piece is a copy of blocks: dense vectors, no per-lane index. */
static bool whole_blocks(const tsl_op_call *c, const piece *q, int64_t X) {
  int64_t Cout = c->args[c->ninputs].shape[1], Cin = c->args[q->input].shape[1];
  return q->out_step == 1 && q->in_step == 1 && q->out_start % X == 0 && q->in_start % X == 0 &&
         (q->count % X == 0 || (q->out_start + q->count == Cout && q->in_start + q->count == Cin));
}

static void put_blocked_piece(tsl_text_buf *b, const tsl_op_call *c, const piece *q, int64_t X) {
  if (whole_blocks(c, q, X)) {
    int64_t ob = q->out_start / X, ib = q->in_start / X, nb = (q->count + X - 1) / X;
    tsl_text_put(b, "cb >= %lld && cb < %lld, x%lld[n, min(max(cb - %lld, %lld), %lld), i, c]", (long long)ob,
                 (long long)(ob + nb), (long long)q->input, (long long)(ob - ib), (long long)ib, (long long)(ib + nb - 1));
    return;
  }
  char ch[64];
  snprintf(ch, sizeof ch, "(cb*%lld + c)", (long long)X);
  put_member(b, q, ch);
  /* src = in_start + k*in_step, read at block src / x, lane src % x */
  tsl_text_buf src = {0};
  tsl_text_put(&src, "(%lld + ", (long long)q->in_start);
  put_k(&src, q, ch);
  tsl_text_put(&src, " * %lld)", (long long)q->in_step);
  const char *s = src.s ? src.s : "0";
  tsl_text_put(b, ", x%lld[n, %s / %lld, i, %s %% %lld]", (long long)q->input, s, (long long)X, s, (long long)X);
  free(src.s);
}

static void put_plain_piece(tsl_text_buf *b, const piece *q) {
  put_member(b, q, "ch");
  tsl_text_put(b, ", x%lld[n, %lld + ", (long long)q->input, (long long)q->in_start);
  put_k(b, q, "ch");
  tsl_text_put(b, " * %lld, i]", (long long)q->in_step);
}

tsl_status tsl_channel_gather_text(const tsl_op_call *c, tsl_op_text *t) {
  tsl_status st = tsl_op_check_counts(c, "channel_gather", -1, 1);
  if (st != TSL_OK) return st;
  int nin = c->ninputs;
  const tsl_op_tensor *y = &c->args[nin];
  for (int a = 0; a < c->nargs; a++) {
    const tsl_op_tensor *x = &c->args[a];
    if (x->ndim != 4 || x->shape[0] != y->shape[0] || x->shape[2] != y->shape[2] || x->shape[3] != y->shape[3])
      return tsl_error(TSL_ERR_INVALID, "channel_gather: argument %d is not an image [N, C, H, W] of the output's N, H, "
                       "W (%lld, %lld, %lld)", a, (long long)y->shape[0], (long long)y->shape[2], (long long)y->shape[3]);
  }
  piece ps[TSL_CHANNEL_GATHER_MAX_PIECES];
  int np = 0;
  if ((st = read_pieces(c, ps, &np)) != TSL_OK) return st;
  bool blocked = y->block > 0;
  int64_t X = 0;
  if (blocked) {
    if ((st = tsl_op_check_blocked(c, "channel_gather", 0, c->nargs, &X)) != TSL_OK) return st;
    tsl_op_text_views_blocked(t, c, 0, c->nargs);
  } else {
    for (int a = 0; a < c->nargs; a++) {
      if ((st = tsl_op_check_plain(c, "channel_gather", a)) != TSL_OK) return st;
      int64_t v[3] = {c->args[a].shape[0], c->args[a].shape[1], c->args[a].shape[2] * c->args[a].shape[3]};
      tsl_op_text_view(t, a, 3, v);
    }
  }
  snprintf(t->label, sizeof t->label, "channel_gather%d_p%d%s", nin, np, blocked ? "_nchwc" : "");
  tsl_op_text_header(t, nin);
  tsl_text_buf *b = &t->text;
  /* the blocked form's tag selects its schedule (ops/nn/default_schedule.c) */
  tsl_text_put(b, blocked ? "  @tag(\"channel_gather\")\n  out[n, cb, i, c] = " : "  out[n, ch, i] = ");
  /* the first piece holding the channel, else 0 (channels no piece covers, padding lanes) */
  for (int p = 0; p < np; p++) {
    tsl_text_put(b, "select(");
    if (blocked) put_blocked_piece(b, c, &ps[p], X);
    else put_plain_piece(b, &ps[p]);
    tsl_text_put(b, ", ");
  }
  tsl_text_put(b, "0.0");
  for (int p = 0; p < np; p++) tsl_text_put(b, ")");
  const int64_t *v = t->views[nin];
  if (blocked)
    tsl_text_put(b, "\n    where n < %lld, cb < %lld, i < %lld, c < %lld\n", (long long)v[0], (long long)v[1],
                 (long long)v[2], (long long)v[3]);
  else
    tsl_text_put(b, "\n    where n < %lld, ch < %lld, i < %lld\n", (long long)v[0], (long long)v[1], (long long)v[2]);
  return TSL_OK;
}
