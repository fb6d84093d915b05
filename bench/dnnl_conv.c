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

#define DNNL_TRY(call)                                                                 \
  do {                                                                                 \
    dnnl_status_t s_ = (call);                                                         \
    if (s_ != dnnl_success) {                                                          \
      fprintf(stderr, "bench: oneDNN %s failed (%d)\n", #call, (int)s_);               \
      return false;                                                                    \
    }                                                                                  \
  } while (0)

/* Reorders user memory (plain format, data at ptr) into a new memory of desc md. */
static bool reorder_in(dnnl_engine_t eng, dnnl_stream_t stream, const dnnl_memory_desc_t *user_md, void *ptr,
                       const dnnl_memory_desc_t *md, dnnl_memory_t *out) {
  dnnl_memory_t user;
  DNNL_TRY(dnnl_memory_create(&user, user_md, eng, ptr));
  DNNL_TRY(dnnl_memory_create(out, md, eng, DNNL_MEMORY_ALLOCATE));
  dnnl_primitive_desc_t rpd;
  DNNL_TRY(dnnl_reorder_primitive_desc_create(&rpd, user_md, eng, md, eng, NULL));
  dnnl_primitive_t r;
  DNNL_TRY(dnnl_primitive_create(&r, rpd));
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, *out}};
  DNNL_TRY(dnnl_primitive_execute(r, stream, 2, args));
  DNNL_TRY(dnnl_stream_wait(stream));
  dnnl_primitive_destroy(r);
  dnnl_primitive_desc_destroy(rpd);
  dnnl_memory_destroy(user);
  return true;
}

bool bench_dnnl_conv_setup(bench_dnnl_conv *c, const tsl_conv2d_layer *d, float *src, float *wei, float *bias) {
  memset(c, 0, sizeof *c);
  DNNL_TRY(dnnl_engine_create(&c->engine, dnnl_cpu, 0));
  DNNL_TRY(dnnl_stream_create(&c->stream, c->engine, dnnl_stream_default_flags));
  int64_t OH = tsl_conv2d_layer_out_h(d), OW = tsl_conv2d_layer_out_w(d), G = d->groups;
  dnnl_dims_t sd = {d->N, d->C, d->H, d->W}, dd = {d->N, d->K, OH, OW}, bd = {d->K};
  dnnl_dims_t wd = {d->K, d->C, d->R, d->S}, gwd = {G, d->K / G, d->C / G, d->R, d->S};
  dnnl_memory_desc_t src_md, wei_md, bia_md, dst_md, usrc, uwei, ubia;
  DNNL_TRY(dnnl_memory_desc_init_by_tag(&src_md, 4, sd, dnnl_f32, dnnl_format_tag_any));
  DNNL_TRY(dnnl_memory_desc_init_by_tag(&dst_md, 4, dd, dnnl_f32, dnnl_format_tag_any));
  DNNL_TRY(dnnl_memory_desc_init_by_tag(&bia_md, 1, bd, dnnl_f32, dnnl_x));
  if (G == 1) DNNL_TRY(dnnl_memory_desc_init_by_tag(&wei_md, 4, wd, dnnl_f32, dnnl_format_tag_any));
  else DNNL_TRY(dnnl_memory_desc_init_by_tag(&wei_md, 5, gwd, dnnl_f32, dnnl_format_tag_any));
  DNNL_TRY(dnnl_memory_desc_init_by_tag(&usrc, 4, sd, dnnl_f32, dnnl_nchw));
  if (G == 1) DNNL_TRY(dnnl_memory_desc_init_by_tag(&uwei, 4, wd, dnnl_f32, dnnl_oihw));
  else DNNL_TRY(dnnl_memory_desc_init_by_tag(&uwei, 5, gwd, dnnl_f32, dnnl_goihw));
  ubia = bia_md;
  dnnl_dims_t strides = {d->stride_h, d->stride_w}, dil = {d->dilation_h - 1, d->dilation_w - 1};
  dnnl_dims_t pl = {d->pad_top, d->pad_left}, pr = {d->pad_bottom, d->pad_right};
  dnnl_convolution_desc_t cd;
  DNNL_TRY(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct, &src_md,
                                                      &wei_md, &bia_md, &dst_md, strides, dil, pl, pr));
  dnnl_primitive_attr_t attr;
  DNNL_TRY(dnnl_primitive_attr_create(&attr));
  if (d->act) {
    dnnl_post_ops_t po;
    DNNL_TRY(dnnl_post_ops_create(&po));
    if (d->act == 1) DNNL_TRY(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f));
    else DNNL_TRY(dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, (float)d->clip_min, (float)d->clip_max));
    DNNL_TRY(dnnl_primitive_attr_set_post_ops(attr, po));
    dnnl_post_ops_destroy(po);
  }
  dnnl_primitive_desc_t pd;
  DNNL_TRY(dnnl_primitive_desc_create(&pd, &cd, attr, c->engine, NULL));
  dnnl_primitive_attr_destroy(attr);
  const dnnl_memory_desc_t *psrc = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
  const dnnl_memory_desc_t *pwei = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t *pdst = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  if (!reorder_in(c->engine, c->stream, &usrc, src, psrc, &c->src)) return false;
  if (!reorder_in(c->engine, c->stream, &uwei, wei, pwei, &c->wei)) return false;
  if (!reorder_in(c->engine, c->stream, &ubia, bias, &bia_md, &c->bia)) return false;
  DNNL_TRY(dnnl_memory_create(&c->dst, pdst, c->engine, DNNL_MEMORY_ALLOCATE));
  DNNL_TRY(dnnl_primitive_create(&c->prim, pd));
  dnnl_primitive_desc_destroy(pd);
  c->ok = true;
  return true;
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
  dnnl_memory_t user;
  DNNL_TRY(dnnl_memory_create(&user, &umd, c->engine, out));
  dnnl_primitive_desc_t rpd;
  DNNL_TRY(dnnl_reorder_primitive_desc_create(&rpd, md, c->engine, &umd, c->engine, NULL));
  dnnl_primitive_t r;
  DNNL_TRY(dnnl_primitive_create(&r, rpd));
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, c->dst}, {DNNL_ARG_TO, user}};
  DNNL_TRY(dnnl_primitive_execute(r, c->stream, 2, args));
  DNNL_TRY(dnnl_stream_wait(c->stream));
  dnnl_primitive_destroy(r);
  dnnl_primitive_desc_destroy(rpd);
  dnnl_memory_destroy(user);
  return true;
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

