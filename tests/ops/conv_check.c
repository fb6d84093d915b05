/* conv_check (conv_check.h). */
#include "ops/conv_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "ir/arena.h"
#include "ops/ops_util.h"
#include "ref/ref_activation.h"
#include "ref/ref_ops2.h"
#include "tessel/runtime.h"

tsl_conv2d_layer conv_case_layer(const conv_case *c, int64_t x) {
  tsl_conv2d_layer d;
  memset(&d, 0, sizeof d);
  d.N = c->N;
  d.C = c->C;
  d.H = c->H;
  d.W = c->W;
  d.K = c->K;
  d.R = c->R;
  d.S = c->S;
  d.stride_h = c->sh ? c->sh : 1;
  d.stride_w = c->sw ? c->sw : 1;
  d.pad_top = c->pt;
  d.pad_left = c->pl;
  d.pad_bottom = c->pb;
  d.pad_right = c->pr;
  d.dilation_h = c->dh ? c->dh : 1;
  d.dilation_w = c->dw ? c->dw : 1;
  d.groups = c->groups ? c->groups : 1;
  d.act = c->act;
  d.clip_min = c->act == 2 ? c->lo : 0.0;
  d.clip_max = c->act == 2 ? c->hi : 6.0;
  d.has_residual = c->residual;
  d.block = x;
  return d;
}

conv_check_opts conv_opts(int nrandom, uint64_t seed) {
  conv_check_opts o;
  memset(&o, 0, sizeof o);
  o.nrandom = nrandom;
  o.seed = seed;
  return o;
}

int conv_check_all(const conv_case *cases, size_t n, const tsl_conv2d_algo *algos, int na, int nrandom,
                   uint64_t seed) {
  int failed = 0;
  for (size_t i = 0; i < n; i++)
    for (int a = 0; a < na; a++) {
      conv_check_opts o = conv_opts(nrandom, seed + 10 * i + (uint64_t)a);
      failed += !conv_check(&cases[i], algos[a], &o);
    }
  return failed;
}

static ref2_conv ref_of(const tsl_conv2d_layer *d) {
  ref2_conv r = {d->N,        d->C,       d->H,       d->W,         d->K,        d->R,          d->S,
                 d->stride_h, d->stride_w, d->pad_top, d->pad_left, d->pad_bottom, d->pad_right, d->dilation_h,
                 d->dilation_w, d->groups, d->act,    d->clip_min, d->clip_max};
  return r;
}

static int64_t numel(const tsl_buffer *b) {
  int64_t n = 1;
  for (int i = 0; i < b->ndim; i++) n *= b->shape[i];
  return n;
}

/* Runs one schedule and compares; returns false on any failure. */
static bool run_one(const tsl_te_program *conv, tsl_schedule *s, const tsl_conv2d_layer *d, float **bufs,
                    const int64_t *points, int64_t npoints, const double *want, const char *what,
                    const conv_check_opts *o) {
  int nin = conv->ninputs;
  int64_t x = d->block, OH = tsl_conv2d_layer_out_h(d), OW = tsl_conv2d_layer_out_w(d);
  int64_t KB = (d->K + x - 1) / x, nout = numel(conv->outputs[0]->buf);
  float *out = bufs[nin];
  for (int64_t i = 0; i < nout; i++) out[i] = NAN; /* every element must be written */
  int prev_threads = tsl_get_num_threads();
  if (o->threads) tsl_set_num_threads(o->threads);
  bool ok = ops_build_run(s, what, bufs);
  if (o->threads) tsl_set_num_threads(prev_threads);
  if (!ok) return false;
  for (int i = 0; i <= nin; i++)
    if (!ops_check_guard(bufs[i])) {
      printf("\n  %s: the bytes after buffer %d were written\n", what, i);
      return false;
    }
  float *nchw = malloc(sizeof(float) * (size_t)(d->N * d->K * OH * OW));
  float *got = malloc(sizeof(float) * (size_t)(npoints > 0 ? npoints : 1));
  ref2_from_nchwc(out, d->N, d->K, OH, OW, x, nchw);
  for (int64_t i = 0; i < npoints; i++) got[i] = nchw[points[i]];
  double err = ops_rel_error(got, want, npoints);
  if (!(err <= 2e-5)) {
    printf("\n  %s: error %g vs the reference\n", what, err);
    for (int64_t i = 0, shown = 0; i < npoints && shown < 4; i++)
      if (!(fabs(got[i] - want[i]) <= 2e-5 * fmax(1.0, fabs(want[i]))) && !(isnan(got[i]) && isnan(want[i]))) {
        printf("    flat %lld: got %.7g want %.7g\n", (long long)points[i], got[i], want[i]);
        shown++;
      }
    ok = false;
  }
  /* the padding lanes of the last output block hold act(0); 0 under an epilogue function */
  if (ok && d->K % x) {
    double z = d->act == 2 && !d->epilogue.fn ? fmin(fmax(0.0, d->clip_min), d->clip_max) : 0.0;
    for (int64_t n = 0; n < d->N && ok; n++)
      for (int64_t i = 0; i < OH * OW && ok; i++)
        for (int64_t l = d->K % x; l < x && ok; l++) {
          float v = out[((n * KB + KB - 1) * OH * OW + i) * x + l];
          if (v != (float)z) {
            printf("\n  %s: padding lane %lld holds %g, not %g\n", what, (long long)l, v, z);
            ok = false;
          }
        }
  }
  if (ok && o->out_nchw) memcpy(o->out_nchw, nchw, sizeof(float) * (size_t)(d->N * d->K * OH * OW));
  free(nchw);
  free(got);
  return ok;
}

bool conv_check(const conv_case *c, tsl_conv2d_algo a, const conv_check_opts *o) {
  int64_t x = o->block ? o->block : ops_lanes();
  tsl_conv2d_layer d = conv_case_layer(c, x);
  /* the epilogue's attributes as a node's, for the reference (ONNX names from the table) */
  tsl_attr fattrs[2];
  tsl_node fnode = {0};
  if (o->function) {
    if (tsl_epilogue_make(o->function, o->nfattrs, o->fattrs, 0, &d.epilogue) != TSL_OK) {
      printf("\n  epilogue %s: %s\n", o->function, tsl_last_error());
      return false;
    }
    for (int i = 0; i < o->nfattrs; i++)
      fattrs[i] = (tsl_attr){.name = (char *)d.epilogue.fn->attr[i], .kind = TSL_ATTR_FLOAT, .f = o->fattrs[i]};
    fnode.n_attrs = o->nfattrs;
    fnode.attrs = fattrs;
  }
  const char *why = "";
  if (!tsl_conv2d_algo_applies(&d, a, &why)) {
    printf("\n  %s does not apply: %s\n", tsl_conv2d_algo_name(a), why);
    return false;
  }
  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_te_program *conv = NULL, *wprog = NULL;
  bool winograd = tsl_conv2d_algo_is_winograd(a, NULL);
  tsl_status st = tsl_conv2d_algo_instantiate(&d, a, ops_target(), &conv, winograd ? &wprog : NULL);
  if (st != TSL_OK) {
    printf("\n  instantiate %s: %s\n", tsl_conv2d_algo_name(a), tsl_last_error());
    tsl_arena_set_current(prev);
    tsl_arena_free(arena);
    return false;
  }
  int64_t OH = tsl_conv2d_layer_out_h(&d), OW = tsl_conv2d_layer_out_w(&d), cg = d.C / d.groups;
  int64_t nin = d.N * d.C * d.H * d.W, nw = d.K * cg * d.R * d.S, nres = d.N * d.K * OH * OW;
  float *in = malloc(sizeof(float) * (size_t)nin), *w = aligned_alloc(64, (sizeof(float) * (size_t)nw + 63) / 64 * 64); /* a kernel argument (Winograd) */
  float *bias = malloc(sizeof(float) * (size_t)d.K), *res = malloc(sizeof(float) * (size_t)nres);
  uint64_t seed = o->seed ? o->seed : 1234;
  float lo = o->lo != o->hi ? o->lo : -1.0f, hi = o->lo != o->hi ? o->hi : 1.0f;
  if (o->data) memcpy(in, o->data, sizeof(float) * (size_t)nin);
  else ops_fill(in, nin, seed, lo, hi);
  float ws = 1.0f / sqrtf((float)(cg * d.R * d.S));
  if (o->weight) memcpy(w, o->weight, sizeof(float) * (size_t)nw);
  else ops_fill(w, nw, seed + 1, -ws, ws);
  if (o->bias) memcpy(bias, o->bias, sizeof(float) * (size_t)d.K);
  else ops_fill(bias, d.K, seed + 2, -0.5f, 0.5f);
  ops_fill(res, nres, seed + 3, -1.0f, 1.0f);

  /* the reference at every output, or at a sample of them for large layers */
  ref2_conv rc = ref_of(&d);
  int64_t total = d.N * d.K * OH * OW;
  double macs = (double)total * (double)(cg * d.R * d.S);
  int64_t npoints = macs <= 4e6 ? total : 4096 + 4 * d.N * d.K;
  int64_t *points = malloc(sizeof(int64_t) * (size_t)npoints);
  double *want = malloc(sizeof(double) * (size_t)npoints);
  if (npoints == total) {
    for (int64_t i = 0; i < total; i++) points[i] = i;
  } else {
    int64_t np = 0;
    for (int64_t nk = 0; nk < d.N * d.K; nk++) {
      int64_t base = nk * OH * OW;
      points[np++] = base;
      points[np++] = base + OW - 1;
      points[np++] = base + (OH - 1) * OW;
      points[np++] = base + OH * OW - 1;
    }
    uint64_t s = seed + 99;
    while (np < npoints) {
      uint64_t z = (s += 0x9e3779b97f4a7c15ull);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      points[np++] = (int64_t)((z ^ (z >> 31)) % (uint64_t)total);
    }
  }
  bool ref_known = true;
  for (int64_t i = 0; i < npoints; i++) {
    int64_t p = points[i], xo = p % OW, yo = p / OW % OH, k = p / (OH * OW) % d.K, n = p / (OH * OW * d.K);
    want[i] = ref2_conv_point(&rc, in, w, bias, c->residual ? res : NULL, n, k, yo, xo);
    if (o->function && !ref_activation(o->function, &fnode, want[i], &want[i])) {
      printf("\n  the reference does not know %s\n", o->function);
      ref_known = false;
      break;
    }
  }

  /* the kernel's arguments, in the algorithm's layouts */
  int nargs = conv->ninputs + conv->noutputs;
  float *bufs[8] = {0};
  for (int i = 0; i < nargs; i++)
    bufs[i] = ops_alloc(numel(i < conv->ninputs ? conv->inputs[i]->buf : conv->outputs[0]->buf));
  ref2_to_nchwc(in, d.N, d.C, d.H, d.W, x, 0.0f, bufs[0]);
  switch (a) {
  case TSL_CONV2D_DIRECT:
  case TSL_CONV2D_GEMM_1X1: ref2_weight_nchwc(w, d.K, d.C, d.R, d.S, x, x, bufs[1]); break;
  case TSL_CONV2D_IM2COL:
  case TSL_CONV2D_GROUPED: ref2_weight_oblocked(w, d.K, cg, d.R, d.S, x, bufs[1]); break;
  case TSL_CONV2D_DEPTHWISE: ref2_weight_depthwise(w, d.C, d.R, d.S, x, bufs[1]); break;
  case TSL_CONV2D_BLOCKDIAG:
    /* the band: the weight's axis 1 (the layout's statement, ref2_weight_blockdiag) */
    ref2_weight_blockdiag(w, d.K, d.C, d.groups, d.R, d.S, x, conv->inputs[1]->buf->shape[1], bufs[1]);
    break;
  default: {
    /* Winograd: its own kernel transform (ops/conv2d/winograd.h), run once */
    tsl_schedule *ws_sched = NULL;
    float *wb[2] = {w, bufs[1]};
    bool ok = tsl_schedule_create(wprog, &ws_sched) == TSL_OK && ops_build_run(ws_sched, "ops_winograd_weights", wb);
    tsl_schedule_free(ws_sched);
    if (!ok) printf("\n  winograd weight transform failed\n");
  }
  }
  ref2_vector_blocks(bias, d.K, x, bufs[2]);
  if (c->residual) ref2_to_nchwc(res, d.N, d.K, OH, OW, x, 0.0f, bufs[3]);

  bool ok = ref_known;
  const tsl_template *tpl = winograd ? NULL : ops_template(conv->name, NULL);
  char what[256];
  if (ok && !o->skip_default) {
    tsl_schedule *s = NULL;
    if (tsl_conv2d_algo_schedule(conv, a, ops_target(), &s) != TSL_OK) {
      printf("\n  default schedule of %s: %s\n", tsl_conv2d_algo_name(a), tsl_last_error());
      ok = false;
    } else {
      snprintf(what, sizeof what, "%s default", tsl_conv2d_algo_name(a));
      ok = run_one(conv, s, &d, bufs, points, npoints, want, what, o);
    }
    tsl_schedule_free(s);
  }
  if (ok && o->knobs && tpl) {
    tsl_config cfg;
    tsl_schedule *s = ops_config_with(tpl, conv, o->knobs, &cfg) ? ops_schedule_config(tpl, conv, &cfg) : NULL;
    snprintf(what, sizeof what, "%s knobs %s", tsl_conv2d_algo_name(a), o->knobs);
    if (!s) printf("\n  %s: cannot apply\n", what);
    ok = s && run_one(conv, s, &d, bufs, points, npoints, want, what, o);
    tsl_schedule_free(s);
  }
  if (ok && o->nrandom > 0 && tpl) {
    tsl_config cfgs[16];
    int n = ops_random_configs(tpl, conv, seed * 7 + 5, o->nrandom < 16 ? o->nrandom : 16,
                               o->max_tile ? o->max_tile : 24, cfgs);
    tsl_config_space space;
    tpl->space(conv, ops_target(), &space);
    for (int i = 0; i < n && ok; i++) {
      tsl_schedule *s = ops_schedule_config(tpl, conv, &cfgs[i]);
      char cbuf[200];
      snprintf(what, sizeof what, "%s config %s", tsl_conv2d_algo_name(a),
               tsl_config_str(&space, &cfgs[i], cbuf, sizeof cbuf));
      ok = s && run_one(conv, s, &d, bufs, points, npoints, want, what, o);
      tsl_schedule_free(s);
    }
  }
  if (!ok)
    printf("  layer N%lld C%lld %lldx%lld K%lld %lldx%lld s%lld,%lld p%lld,%lld,%lld,%lld d%lld,%lld g%lld act%d%s "
           "x%lld\n",
           (long long)d.N, (long long)d.C, (long long)d.H, (long long)d.W, (long long)d.K, (long long)d.R,
           (long long)d.S, (long long)d.stride_h, (long long)d.stride_w, (long long)d.pad_top, (long long)d.pad_left,
           (long long)d.pad_bottom, (long long)d.pad_right, (long long)d.dilation_h, (long long)d.dilation_w,
           (long long)d.groups, d.act, c->residual ? " residual" : "", (long long)x);
  if (!ok && o->function) printf("  epilogue %s\n", o->function);
  for (int i = 0; i < nargs; i++) ops_free(bufs[i]);
  free(in);
  free(w);
  free(bias);
  free(res);
  free(points);
  free(want);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  return ok;
}
