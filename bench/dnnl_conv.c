/* oneDNN's direct convolution for the benchmarks (see dnnl_conv.h). */
#include "bench/dnnl_conv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

float *bench_conv_alloc_floats(int64_t n) {
  size_t bytes = ((size_t)(n > 0 ? n : 1) * sizeof(float) + 63) & ~(size_t)63;
  float *p = aligned_alloc(64, bytes);
  if (p) memset(p, 0, bytes);
  return p;
}

void bench_conv_fill(float *x, int64_t count, uint64_t seed, double scale) {
  for (int64_t i = 0; i < count; i++) {
    uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    x[i] = (float)(((double)(z >> 11) * 0x1p-53 * 2.0 - 1.0) * scale);
  }
}

/* Whether s is success; otherwise a message naming the call on stderr. */
static bool dnnl_ok(dnnl_status_t s, const char *call) {
  if (s == dnnl_success) return true;
  fprintf(stderr, "bench: oneDNN %s failed (%d)\n", call, (int)s);
  return false;
}

#define DNNL_TRY(call)                                                                 \
  do {                                                                                 \
    if (!dnnl_ok((call), #call)) return false;                                         \
  } while (0)

/* Copies memory `from` (desc from_md) into memory `to` (desc to_md) with a reorder,
 * waiting for it; the reorder's handles are freed on every path. */
static bool run_reorder(dnnl_engine_t eng, dnnl_stream_t stream, const dnnl_memory_desc_t *from_md, dnnl_memory_t from,
                        const dnnl_memory_desc_t *to_md, dnnl_memory_t to) {
  dnnl_primitive_desc_t rpd = NULL;
  dnnl_primitive_t r = NULL;
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  bool ok = dnnl_ok(dnnl_reorder_primitive_desc_create(&rpd, from_md, eng, to_md, eng, NULL),
                    "dnnl_reorder_primitive_desc_create") &&
            dnnl_ok(dnnl_primitive_create(&r, rpd), "dnnl_primitive_create(reorder)") &&
            dnnl_ok(dnnl_primitive_execute(r, stream, 2, args), "dnnl_primitive_execute(reorder)") &&
            dnnl_ok(dnnl_stream_wait(stream), "dnnl_stream_wait");
  if (r) dnnl_primitive_destroy(r);
  if (rpd) dnnl_primitive_desc_destroy(rpd);
  return ok;
}

/* Reorders user memory (plain format, data at ptr) into a new memory of desc md (*out;
 * NULL after a failure, every handle made here freed). */
static bool reorder_in(dnnl_engine_t eng, dnnl_stream_t stream, const dnnl_memory_desc_t *user_md, void *ptr,
                       const dnnl_memory_desc_t *md, dnnl_memory_t *out) {
  dnnl_memory_t user = NULL;
  *out = NULL;
  bool ok = dnnl_ok(dnnl_memory_create(&user, user_md, eng, ptr), "dnnl_memory_create(user)") &&
            dnnl_ok(dnnl_memory_create(out, md, eng, DNNL_MEMORY_ALLOCATE), "dnnl_memory_create") &&
            run_reorder(eng, stream, user_md, user, md, *out);
  if (user) dnnl_memory_destroy(user);
  if (!ok && *out) {
    dnnl_memory_destroy(*out);
    *out = NULL;
  }
  return ok;
}

/* The convolution's primitive descriptor for layer d (formats `any`, the activation as a
 * post-op) into *pd; the attribute handles are freed on every path. A descriptor oneDNN
 * has no implementation of (dnnl_unimplemented: Winograd off AVX-512) is false without
 * a message. */
static bool conv_desc(dnnl_engine_t eng, const tsl_conv2d_layer *d, dnnl_alg_kind_t alg,
                      const dnnl_memory_desc_t *src_md, const dnnl_memory_desc_t *wei_md,
                      const dnnl_memory_desc_t *bia_md, const dnnl_memory_desc_t *dst_md, dnnl_primitive_desc_t *pd) {
  dnnl_dims_t strides = {d->stride_h, d->stride_w}, dil = {d->dilation_h - 1, d->dilation_w - 1};
  dnnl_dims_t pl = {d->pad_top, d->pad_left}, pr = {d->pad_bottom, d->pad_right};
  dnnl_convolution_desc_t cd;
  DNNL_TRY(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, alg, src_md, wei_md, bia_md, dst_md,
                                                      strides, dil, pl, pr));
  dnnl_primitive_attr_t attr = NULL;
  dnnl_post_ops_t po = NULL;
  bool ok = dnnl_ok(dnnl_primitive_attr_create(&attr), "dnnl_primitive_attr_create");
  if (ok && d->act) {
    ok = dnnl_ok(dnnl_post_ops_create(&po), "dnnl_post_ops_create");
    if (ok && d->act == 1)
      ok = dnnl_ok(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f),
                   "dnnl_post_ops_append_eltwise");
    else if (ok)
      ok = dnnl_ok(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, (float)d->clip_min, (float)d->clip_max),
                   "dnnl_post_ops_append_eltwise");
    if (ok) ok = dnnl_ok(dnnl_primitive_attr_set_post_ops(attr, po), "dnnl_primitive_attr_set_post_ops");
  }
  if (ok) {
    dnnl_status_t st = dnnl_primitive_desc_create(pd, &cd, attr, eng, NULL);
    ok = st == dnnl_unimplemented ? false : dnnl_ok(st, "dnnl_primitive_desc_create");
  }
  if (po) dnnl_post_ops_destroy(po);
  if (attr) dnnl_primitive_attr_destroy(attr);
  return ok;
}

bool bench_dnnl_conv_setup(bench_dnnl_conv *c, const tsl_conv2d_layer *d, float *src, float *wei, float *bias) {
  return bench_dnnl_conv_setup_alg(c, d, dnnl_convolution_direct, src, wei, bias);
}

bool bench_dnnl_conv_setup_alg(bench_dnnl_conv *c, const tsl_conv2d_layer *d, dnnl_alg_kind_t alg, float *src,
                               float *wei, float *bias) {
  memset(c, 0, sizeof *c);
  DNNL_TRY(dnnl_engine_create(&c->engine, dnnl_cpu, 0));
  DNNL_TRY(dnnl_stream_create(&c->stream, c->engine, dnnl_stream_default_flags));
  int64_t OH = tsl_conv2d_layer_out_h(d), OW = tsl_conv2d_layer_out_w(d), G = d->groups;
  dnnl_dims_t sd = {d->N, d->C, d->H, d->W}, dd = {d->N, d->K, OH, OW}, bd = {d->K};
  dnnl_dims_t wd = {d->K, d->C, d->R, d->S}, gwd = {G, d->K / G, d->C / G, d->R, d->S};
  dnnl_memory_desc_t src_md, wei_md, bia_md, dst_md, usrc, uwei;
  DNNL_TRY(dnnl_memory_desc_init_by_tag(&src_md, 4, sd, dnnl_f32, dnnl_format_tag_any));
  DNNL_TRY(dnnl_memory_desc_init_by_tag(&dst_md, 4, dd, dnnl_f32, dnnl_format_tag_any));
  DNNL_TRY(dnnl_memory_desc_init_by_tag(&bia_md, 1, bd, dnnl_f32, dnnl_x));
  if (G == 1) DNNL_TRY(dnnl_memory_desc_init_by_tag(&wei_md, 4, wd, dnnl_f32, dnnl_format_tag_any));
  else DNNL_TRY(dnnl_memory_desc_init_by_tag(&wei_md, 5, gwd, dnnl_f32, dnnl_format_tag_any));
  DNNL_TRY(dnnl_memory_desc_init_by_tag(&usrc, 4, sd, dnnl_f32, dnnl_nchw));
  if (G == 1) DNNL_TRY(dnnl_memory_desc_init_by_tag(&uwei, 4, wd, dnnl_f32, dnnl_oihw));
  else DNNL_TRY(dnnl_memory_desc_init_by_tag(&uwei, 5, gwd, dnnl_f32, dnnl_goihw));
  dnnl_primitive_desc_t pd = NULL;
  if (!conv_desc(c->engine, d, alg, &src_md, &wei_md, &bia_md, &dst_md, &pd)) return false;
  const dnnl_memory_desc_t *psrc = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *pwei = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t *pdst = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  bool ok = reorder_in(c->engine, c->stream, &usrc, src, psrc, &c->src) &&
            reorder_in(c->engine, c->stream, &uwei, wei, pwei, &c->wei) &&
            reorder_in(c->engine, c->stream, &bia_md, bias, &bia_md, &c->bia) &&
            dnnl_ok(dnnl_memory_create(&c->dst, pdst, c->engine, DNNL_MEMORY_ALLOCATE), "dnnl_memory_create(dst)") &&
            dnnl_ok(dnnl_primitive_create(&c->prim, pd), "dnnl_primitive_create");
  dnnl_primitive_desc_destroy(pd);
  return c->ok = ok;
}

int32_t bench_dnnl_conv_run(void *ctx) {
  bench_dnnl_conv *c = ctx;
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, c->src}, {DNNL_ARG_WEIGHTS, c->wei}, {DNNL_ARG_BIAS, c->bia},
                             {DNNL_ARG_DST, c->dst}};
  if (dnnl_primitive_execute(c->prim, c->stream, 4, args) != dnnl_success) return 1;
  return dnnl_stream_wait(c->stream) == dnnl_success ? 0 : 1;
}

bool bench_dnnl_conv_output_nchw(bench_dnnl_conv *c, const tsl_conv2d_layer *d, float *out) {
  int64_t OH = tsl_conv2d_layer_out_h(d), OW = tsl_conv2d_layer_out_w(d);
  dnnl_dims_t dd = {d->N, d->K, OH, OW};
  dnnl_memory_desc_t umd;
  DNNL_TRY(dnnl_memory_desc_init_by_tag(&umd, 4, dd, dnnl_f32, dnnl_nchw));
  const dnnl_memory_desc_t *md;
  DNNL_TRY(dnnl_memory_get_memory_desc(c->dst, &md));
  dnnl_memory_t user = NULL;
  DNNL_TRY(dnnl_memory_create(&user, &umd, c->engine, out));
  bool ok = run_reorder(c->engine, c->stream, md, c->dst, &umd, user);
  dnnl_memory_destroy(user);
  return ok;
}

void bench_dnnl_conv_free(bench_dnnl_conv *c) {
  if (c->prim) dnnl_primitive_destroy(c->prim);
  if (c->src) dnnl_memory_destroy(c->src);
  if (c->wei) dnnl_memory_destroy(c->wei);
  if (c->bia) dnnl_memory_destroy(c->bia);
  if (c->dst) dnnl_memory_destroy(c->dst);
  if (c->stream) dnnl_stream_destroy(c->stream);
  if (c->engine) dnnl_engine_destroy(c->engine);
}

