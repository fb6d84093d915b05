/* The Winograd schedule template (see winograd.h): knobs -> schedule steps, the default
 * heuristic, and the adapter to the generic template interface. */
#include "ops/conv2d/winograd_schedule.h"
#include "ops/tpl_util.h"

#include <stdio.h>
#include <string.h>

enum { NAME_LEN = 160 };
typedef char name_t[NAME_LEN];

static bool wide_register_file(const tsl_target *t) { return tsl_target_vector_registers(t) >= 32; }

/* Fewest tiles per block before re-streaming U costs more than it saves (see
 * tsl_winograd_default_knobs). */
enum { MIN_BLOCK_TILES = 32 };
/* Fewest blocks (over all images) for which the default puts blocks, not output
 * channels, on the thread pool: two rounds of blocks on 2 threads. */
enum { MIN_PAR_BLOCKS = 4 };
/* Parts of the output channels with parallel = channels: one per thread of a 2-core
 * machine; each part transforms the input of every block again. */
enum { CHANNEL_PARTS = 2 };

/* Reduction steps (X input channels each; all C at once for a layer whose last block is
 * partial, split_channels) ahead at which a weight-streaming GEMM prefetches U
 * (tsl_winograd_knobs.prefetch_u). */
enum { STREAM_PREFETCH_STEPS = 4 };
/* The fewest tiles one U value feeds for F(4x4) below 20x20 outputs to pay when U
 * comes from memory: 16 tiles = 32 FLOPs per 4-byte U load (tsl_winograd_default_m). */
enum { MIN_STREAM_TILES = 16 };
/* A U within this many times L2 stays in the last-level cache between calls
 * (tsl_winograd_default_m). */
enum { STREAM_U_L2S = 4 };
/* Most tiles one GEMM register block holds (the template's mr knob range). */
enum { MAX_MR = 16 };

/* Bytes of U, the transformed weights: alpha^2 x CP x KP floats. */
static int64_t u_bytes_of(const tsl_winograd_shape *s) { return (int64_t)s->alpha * s->alpha * s->CP * s->KP * 4; }

/* Whether the layer streams its weights: U (alpha^2 x CP x KP floats) larger than L2,
 * so every call reads it from L3 or memory, and a block of `tiles` tiles fits one
 * register block of one vector of output channels (the accumulators, one U vector and
 * one broadcast within the vector registers), so each U value is loaded once for all
 * tiles. */
static bool weight_streaming(const tsl_target *t, const tsl_winograd_shape *s, int64_t tiles, int64_t X) {
  int64_t u_bytes = u_bytes_of(s);
  int64_t regs = tsl_target_vector_registers(t), lanes = tsl_target_f32_lanes(t);
  return u_bytes > tpl_l2_bytes(t) && X == lanes && tiles > 1 && tiles <= tpl_min(MAX_MR, regs - 2);
}

/* The parts the output channels split into with parallel = channels: CHANNEL_PARTS when
 * each part is a whole number of GEMM register blocks (nkb channel blocks), else 1. */
static int64_t channel_parts(int64_t KB, int64_t nkb) {
  int64_t r = nkb > 0 ? nkb : 1;
  return KB % r == 0 && (KB / r) % CHANNEL_PARTS == 0 ? CHANNEL_PARTS : 1;
}

/* Rows of tiles per block for a budget of `rows` rows (< TH): a divisor of TH, since a
 * parallel block loop with a tail keeps its guard in every block's loops (SqueezeNet
 * 1.0's 54x54 32->128 F(4x4) layer in 5 + 5 + 4 rows: 1.0 ms on 1 thread, in 7 + 7:
 * 0.40 ms), giving an even number of blocks over the images (2 threads each take as
 * many), at most 1.5x the budget and at least half of it. Without one: the whole image
 * when it is at most 2x the budget and the output channels can go in parallel instead
 * (each thread then holds only its part of M), else the rows spread evenly over the
 * fewest blocks that hold them (14 rows in 7 + 7, not 13 + 1). */
static int64_t block_rows(int64_t N, int64_t TH, int64_t rows, bool channels_ok) {
  for (int pass = 0; pass < 2; pass++)
    for (int64_t d = tpl_min(TH - 1, rows + rows / 2); d >= 1 && 2 * d >= rows; d--)
      if (TH % d == 0 && (pass == 1 || (N * (TH / d)) % 2 == 0)) return d;
  if (channels_ok && TH <= 2 * rows) return TH;
  return tpl_ceil_div(TH, tpl_ceil_div(TH, rows));
}

/* Rows of tiles per block that give the threads blocks to share, for a layer whose
 * cache budget made one block of a whole image in an odd batch below MIN_PAR_BLOCKS
 * images (parallel = channels would follow, or one thread would idle where the channels
 * do not split; from 5 images the blocks are on the thread pool): the most rows
 * dividing TH with at least MIN_BLOCK_TILES tiles per block and an even block count,
 * when U is within L2 (every thread then reads all of U from its own L2).
 * 0 when there is none. Splitting the output channels instead makes each thread
 * transform the whole input again, which weighs most where K is small. resnet18's 56x56
 * 64 -> 64 F(4x4) (bench/winograd_layers --layers 56, Xeon, 2 MiB L2, 16 lanes, session
 * 56): one block with parallel = channels 322-364 GFLOP/s on 1 thread and 332-422 on 2;
 * 2 blocks of 7 rows 358-368 and 643-686; the same with the whole image's GEMM form
 * (gemm_at_tiles, mr 7) 400-414 and 735-818; at 8 lanes 188-216 -> 190-234 and 263-283
 * -> 400-406. At 28x28 128 -> 128 (U 2.4 MB, over L2) the channels stayed faster. */
static int64_t rows_for_threads(const tsl_target *t, const tsl_winograd_shape *s) {
  if (u_bytes_of(s) > tpl_l2_bytes(t) || s->N % 2 == 0 || s->N >= MIN_PAR_BLOCKS) return 0;
  for (int64_t d = s->TH - 1; d >= 1 && d * s->TW >= MIN_BLOCK_TILES; d--)
    if (s->TH % d == 0 && (s->N * (s->TH / d)) % 2 == 0) return d;
  return 0;
}

/* ---- the program ---------------------------------------------------------- */

static const tsl_te_op *find_stage(const tsl_te_program *p, const char *name) {
  int n = 0;
  tsl_te_op **ops = tsl_te_program_stages(p, &n);
  for (int i = 0; i < n; i++)
    if (strcmp(ops[i]->name, name) == 0) return ops[i];
  return NULL;
}

tsl_status tsl_winograd_program_shape(const tsl_te_program *p, tsl_winograd_shape *out) {
  if (!p || !out) return tsl_error(TSL_ERR_INVALID, "winograd template: NULL argument");
  const char *pname = p->name ? p->name : "?";
  if (p->noutputs != 1 || (p->ninputs != 3 && p->ninputs != 4))
    return tsl_error(TSL_ERR_INVALID, "winograd template: program %s has %d inputs and %d outputs (want 3 or 4, and 1)",
                     pname, p->ninputs, p->noutputs);
  static const char *const stages[] = {"padded", "tile_in", "Vr", "V", "M", "Ya", "tile_out", "Y"};
  for (size_t i = 0; i < sizeof stages / sizeof stages[0]; i++)
    if (!find_stage(p, stages[i]))
      return tsl_error(TSL_ERR_INVALID, "winograd template: program %s has no stage %s (not a conv2d_winograd program)",
                       pname, stages[i]);
  const tsl_te_op *v = find_stage(p, "V"), *m = find_stage(p, "M"), *o = p->outputs[0]->op;
  if (!v->tag || strcmp(v->tag, "winograd_input") != 0 || !m->tag || strcmp(m->tag, "winograd_gemm") != 0 ||
      m->nreduce != 1 || !o || strcmp(o->name, "out") != 0 || o->naxis != 5)
    return tsl_error(TSL_ERR_INVALID, "winograd template: the stages of %s are not those of conv2d_winograd", pname);
  const tsl_buffer *d = p->inputs[0]->buf, *u = p->inputs[1]->buf, *ob = p->outputs[0]->buf;
  if (d->ndim != 5 || u->ndim != 5 || ob->ndim != 5 || u->shape[0] != u->shape[1] || u->shape[0] < 3)
    return tsl_error(TSL_ERR_INVALID,
                     "winograd template: inputs of %s are not data[N, CB, H, W, X] and U[a, a, KB, CP, X]", pname);
  /* m is the extent of Ya's first axis (A^T's rows), so r = alpha - m + 1 whatever the
   * kernel size */
  const tsl_te_op *ya = find_stage(p, "Ya");
  if (!ya->output || ya->output->buf->ndim < 1 || ya->output->buf->shape[0] < 1 ||
      ya->output->buf->shape[0] > u->shape[0] - 1)
    return tsl_error(TSL_ERR_INVALID, "winograd template: stage Ya of %s is not m x alpha rows of A^T M", pname);
  memset(out, 0, sizeof *out);
  out->alpha = (int)u->shape[0];
  out->m = (int)ya->output->buf->shape[0];
  out->N = d->shape[0];
  out->CB = d->shape[1];
  out->H = d->shape[2];
  out->W = d->shape[3];
  out->X = d->shape[4];
  out->CP = u->shape[3];
  out->C = m->reduce_axis[0].extent;
  out->KP = u->shape[2] * u->shape[4];
  out->OH = ob->shape[2];
  out->OW = ob->shape[3];
  out->TH = tpl_ceil_div(out->OH, out->m);
  out->TW = tpl_ceil_div(out->OW, out->m);
  return TSL_OK;
}

/* ---- knobs ---------------------------------------------------------------- */

/* Fewest accumulator vectors (mr x nr / lanes) of a register block: two FMA pipes of about
 * four cycles' latency each need 8 independent chains. */
enum { MIN_ACCUMULATORS = 8 };

/* gemm_at_tiles by default at 16 lanes where the block's GEMM output M would leave L2
 * before the output transform reads it back, and U would not: the block's transformed
 * input and M (alpha^2 x tiles x (CP + KP) floats; the block the cache rule sized, before
 * any split of a whole image for the threads, rows_for_threads, which keeps this form:
 * measured faster so) exceed L2 while U (alpha^2 x CP x KP
 * floats, read once per group of mr tiles in this form) is within half of it. That is a
 * short reduction into many output channels over a large image: the phase stems (12
 * channels -> 64 or 96) and the 16- to 64-channel 3x3 layers at 54x54 and above. Each
 * group's M (alpha^2 x mr x nr floats) is kept within 3/4 of L1 (the stem ran as fast
 * with groups of up to 55 KiB at 48 KiB of L1, but slow at 73.5 KiB, the default
 * register block's; the margin is for U's stream), with at least MIN_ACCUMULATORS
 * accumulators, and mr divides the group loop where some such mr does. Measured with
 * bench/conv_layers (--models squeezenet1_0,squeezenet1_1,resnet18 and --layer) at 1
 * thread on an Intel Xeon (sapphirerapids, L1d 48 KiB, L2 2 MiB), GFLOP/s before ->
 * after: ResNet-18's phase stem 176 -> 364, SqueezeNet 1.0's 183 -> 398; 16 -> 64 at
 * 55x55 304 -> 384 and 54x54 293 -> 375; 32 -> 128 at 54x54 300 -> 420; 64 -> 64 at 56x56
 * 350 -> 385; the other Winograd layers of the three models (config unchanged) -1% to
 * +6%, the run-to-run noise. With the x86-64-avx512 preset's 1 MiB of L2 on the same
 * machine (smaller blocks: ResNet-18's stem then fits and keeps the GEMM per block),
 * SqueezeNet 1.0's stem 1.35-1.41 -> 1.13 ms and its 16 -> 64 layers 0.20 -> 0.17 ms in
 * the model. At 8 lanes the same rule lost 3-10% (16 -> 64 at 55x55: 190 -> 171): the
 * narrower FMAs hide M's round trip, so the rule keeps to 16 lanes. */
static void gemm_at_tiles_default(const tsl_target *t, int64_t lanes, const tsl_winograd_shape *s,
                                  tsl_winograd_knobs *k) {
  int64_t a2 = (int64_t)s->alpha * s->alpha, l2 = tpl_l2_bytes(t);
  int64_t u_bytes = u_bytes_of(s), block_bytes = a2 * k->nr_tiles * (s->CP + s->KP) * 4;
  if (lanes < 16 || u_bytes * 2 > l2 || block_bytes <= l2) return;
  /* the channels a register block holds (the schedule's nkb blocks of X: at most KP) in
   * native vectors of the target's lanes */
  int64_t nr = tpl_min(k->nr, s->KP), vecs = tpl_max(1, nr / tpl_max(lanes, 1));
  int64_t lo = tpl_ceil_div(MIN_ACCUMULATORS, vecs);
  int64_t hi = tpl_min(k->mr, tpl_l1_bytes(t) * 3 / 4 / tpl_max(a2 * nr * 4, 1));
  if (hi < lo) return;
  int64_t extent = k->nr_tiles >= s->TW ? s->TW : k->nr_tiles, mr = hi;
  for (int64_t m = hi; m >= lo; m--)
    if (extent % m == 0) {
      mr = m;
      break;
    }
  k->gemm_at_tiles = true;
  k->mr = mr;
}

tsl_winograd_knobs tsl_winograd_default_knobs(const tsl_target *t, const tsl_winograd_shape *s) {
  tsl_winograd_knobs k;
  int64_t lanes = tsl_target_f32_lanes(t), X = s && s->X > 0 ? s->X : lanes;
  /* 16 registers: 6 x 2 accumulators + 2 U vectors + 1 broadcast; 32: 12 x 2. Two
   * native vectors of output channels: nr / X blocks of the layout's x lanes. */
  k.mr = wide_register_file(t) ? 12 : 6;
  k.nr = X >= lanes ? X * tpl_max(1, 2 * lanes / X) : 2 * X;
  k.gemm_order = TSL_WINOGRAD_GEMM_K_OUTER;
  k.unroll_cx = false;
  k.pad_at = TSL_WINOGRAD_PAD_BLOCK;
  k.row_buffers = true;
  k.gemm_at_tiles = false;
  k.parallel = TSL_WINOGRAD_PAR_BLOCKS;
  k.prefetch_u = 0;
  /* Blocks: the block's transformed input and GEMM output (alpha^2 x tiles x (CP + KP)
   * floats) within twice L2, but at least MIN_BLOCK_TILES tiles (or the whole image),
   * because every block streams all of U (alpha^2 x CP x KP floats) once: smaller
   * blocks re-read U from L3 or memory, which measured 1.2-10x slower on deep layers
   * (docs/winograd.md). Whole rows of tiles when that is at least one row, else equal
   * parts of a row. The rows per block divide the rows evenly (block_rows): the blocks
   * are the parallel loop, and an uneven last block leaves a thread idle (SqueezeNet's
   * 55x55 F(4x4) layers ran 13 + 1 rows, no faster on 2 threads than on 1). */
  int64_t tiles = 32;
  int64_t KB = s && s->X > 0 ? s->KP / s->X : 0;
  bool channels_ok = KB > 0 && channel_parts(KB, tpl_max(1, tpl_min(k.nr / X, KB))) > 1;
  if (s && s->TW > 0 && s->TH > 0) {
    int64_t per_tile = (int64_t)s->alpha * s->alpha * (s->CP + s->KP) * 4;
    int64_t total = s->TH * s->TW;
    tiles = tpl_max(tpl_l2_bytes(t) * 2 / tpl_max(per_tile, 1), tpl_min(total, MIN_BLOCK_TILES));
    tiles = tpl_max(1, tpl_min(tiles, total));
    if (tiles >= s->TW) {
      int64_t rows = tiles / s->TW;
      tiles = (rows >= s->TH ? s->TH : block_rows(s->N, s->TH, rows, channels_ok)) * s->TW;
    } else tiles = tpl_ceil_div(s->TW, tpl_ceil_div(s->TW, tiles));
  }
  k.nr_tiles = tiles;
  if (s && weight_streaming(t, s, tiles, X)) {
    /* every tile of the block in one register block of one vector of output channels:
     * each U vector is loaded once and feeds all the tiles, and the next steps' U is
     * prefetched (the loads then overlap the FMAs) */
    k.mr = tiles;
    k.nr = X;
    k.prefetch_u = STREAM_PREFETCH_STEPS;
  } else if (s && s->TW > 0 && s->TH > 0) {
    gemm_at_tiles_default(t, lanes, s, &k);
  }
  if (s && s->TW > 0 && s->TH > 0 && tiles == s->TH * s->TW) {
    /* a whole image that the threads could not share: split it in rows, keeping the GEMM
     * form chosen for the whole image (gemm_at_tiles with its mr, a divisor of a row) */
    int64_t rows = rows_for_threads(t, s);
    if (rows > 0) tiles = k.nr_tiles = rows * s->TW;
  }
  if (s && s->TW > 0 && s->TH > 0) {
    /* output channels in parallel when the blocks over all images are too few to share
     * evenly: one, or an odd number below MIN_PAR_BLOCKS */
    int64_t blocks = tiles >= s->TW ? tpl_ceil_div(s->TH, tiles / s->TW) : s->TH * tpl_ceil_div(s->TW, tiles);
    int64_t nb = s->N * blocks;
    bool parts_ok = KB > 0 && channel_parts(KB, tpl_max(1, tpl_min(k.nr / X, KB))) > 1; /* k.nr as set above */
    if (nb < MIN_PAR_BLOCKS && nb % 2 == 1 && parts_ok) k.parallel = TSL_WINOGRAD_PAR_CHANNELS;
  }
  return k;
}

tsl_status tsl_winograd_knobs_check(const tsl_winograd_knobs *k) {
  if (!k) return tsl_error(TSL_ERR_INVALID, "winograd template: no knobs");
  const struct {
    const char *name;
    int64_t v;
  } pos[] = {{"nr_tiles", k->nr_tiles}, {"mr", k->mr}, {"nr", k->nr}};
  for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
    if (pos[i].v < 1)
      return tsl_error(TSL_ERR_INVALID, "winograd template: knob %s = %lld (must be >= 1)", pos[i].name,
                       (long long)pos[i].v);
  if (k->gemm_order != TSL_WINOGRAD_GEMM_K_OUTER && k->gemm_order != TSL_WINOGRAD_GEMM_T_OUTER)
    return tsl_error(TSL_ERR_INVALID, "winograd template: knob gemm_order = %d (0 or 1)", k->gemm_order);
  if (k->pad_at < TSL_WINOGRAD_PAD_INLINE || k->pad_at > TSL_WINOGRAD_PAD_ROOT)
    return tsl_error(TSL_ERR_INVALID, "winograd template: knob pad_at = %d (0 inline, 1 block, 2 root)", k->pad_at);
  if (k->prefetch_u < 0)
    return tsl_error(TSL_ERR_INVALID, "winograd template: knob prefetch_u = %lld (must be >= 0)",
                     (long long)k->prefetch_u);
  if (k->parallel < TSL_WINOGRAD_PAR_NONE || k->parallel > TSL_WINOGRAD_PAR_CHANNELS)
    return tsl_error(TSL_ERR_INVALID, "winograd template: knob parallel = %d (0 none, 1 blocks, 2 channels)",
                     k->parallel);
  return TSL_OK;
}

int64_t tsl_winograd_in_channels(const tsl_conv2d_layer *l) {
  /* the zero-padding channels of a partial last block are not reduced (3-channel
   * phases: 12 of 16; C = 20 of 32 at 28x28, 16 lanes: 0.037-0.041 ms against 0.050 ms
   * over all 32, split_channels) */
  int64_t X = l->block > 0 ? l->block : 1;
  return l->C % X != 0 ? l->C : 0;
}

tsl_winograd_shape tsl_winograd_layer_shape(const tsl_conv2d_layer *l, int m) {
  tsl_winograd_shape s;
  memset(&s, 0, sizeof s);
  int64_t X = l->block > 0 ? l->block : 1;
  s.m = m;
  s.alpha = m + (int)l->R - 1;
  s.N = l->N;
  s.X = X;
  s.CB = tpl_ceil_div(l->C, X);
  s.H = l->H;
  s.W = l->W;
  s.CP = s.CB * X;
  int64_t in = tsl_winograd_in_channels(l);
  s.C = in > 0 ? in : s.CP;
  s.KP = tpl_ceil_div(l->K, X) * X;
  s.OH = tsl_conv2d_layer_out_h(l);
  s.OW = tsl_conv2d_layer_out_w(l);
  s.TH = tpl_ceil_div(s.OH, m);
  s.TW = tpl_ceil_div(s.OW, m);
  return s;
}

int tsl_winograd_default_m(const tsl_target *t, const tsl_conv2d_layer *l) {
  if (!l) return 4;
  int64_t oh = tsl_conv2d_layer_out_h(l), ow = tsl_conv2d_layer_out_w(l);
  /* F(4x4) from 20x20 outputs: measured to win at 56x56 and 28x28 (resnet18, both lane
   * widths). */
  if (oh * ow >= 400) return 4;
  /* the rule below counts 3x3 tiles (16 and 36 multiplies a tile) */
  if (l->R != 3) return 2;
  /* The rule below was measured on x86-64 only (8 and 16 lanes); elsewhere (armv8,
   * unmeasured: no board here, qemu timings mean nothing) F(2x2) as before. */
  if (!t || t->arch != TSL_ARCH_X86_64) return 2;
  tsl_winograd_shape s2 = tsl_winograd_layer_shape(l, 2), s4 = tsl_winograd_layer_shape(l, 4);
  /* Below, F(4)'s border tiles waste work (14 -> 16 computed per side) and its U is 2.25x
   * F(2)'s, read from L3 or memory on every call in a model. F(4) still wins where it
   * does fewer multiplies and its U is either small (within STREAM_U_L2S x L2: it stays
   * in the last-level cache between calls) or streamed in the weight-streaming form with
   * at least MIN_STREAM_TILES tiles per U value (so the stream overlaps the FMAs instead
   * of adding to them). Measured in the models at 1 thread (docs/winograd.md, "m"):
   * resnet18's 14x14 256 -> 256 layers 0.54-0.65 ms with F(4) in that form (16 lanes)
   * against 0.65-0.77 with F(2), but 1.24-1.38 against 1.17-1.27 ms at 8 lanes (16
   * registers: no such form, U 9.4 MB); SqueezeNet 1.1's 13x13 48 -> 192 layers (U 1.3
   * MB) 10-20% faster with F(4) at 8 lanes; the 7x7 512 -> 512 layers (4 tiles a U
   * value) 1.34-1.61 ms with F(4) against 0.87 with F(2). */
  int64_t mul2 = 16 * s2.N * s2.TH * s2.TW, mul4 = 36 * s4.N * s4.TH * s4.TW;
  if (mul4 >= mul2) return 2;
  int64_t u4 = 36 * s4.CP * s4.KP * 4;
  if (u4 <= STREAM_U_L2S * tpl_l2_bytes(t)) return 4;
  /* the stream form (prefetch_u set) puts every tile of the block in one register block
   * (mr = nr_tiles <= MAX_MR = 16): at least 16 tiles means exactly 16 */
  tsl_winograd_knobs k4 = tsl_winograd_default_knobs(t, &s4);
  bool streamed = k4.prefetch_u > 0 && k4.nr_tiles >= MIN_STREAM_TILES;
  return streamed ? 4 : 2;
}

/* ---- schedule steps ------------------------------------------------------- */

typedef struct builder {
  tsl_schedule *s;
  tsl_status st;
} builder;

static bool cat(name_t out, const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la + lb + 1 > NAME_LEN) return false;
  memmove(out, a, la);
  memcpy(out + la, b, lb + 1);
  return true;
}

static void b_fail_name(builder *b, const char *a) {
  if (b->st == TSL_OK) b->st = tsl_error(TSL_ERR_INVALID, "winograd template: axis name %s... is too long", a);
}

/* split(stage, axis) -> axis.outer, axis.inner (names written to outer/inner) */
static void b_split(builder *b, const char *stage, const char *axis, int64_t factor, name_t outer, name_t inner) {
  name_t parent;
  if (!cat(parent, axis, "") || !cat(outer, parent, ".outer") || !cat(inner, parent, ".inner")) {
    b_fail_name(b, axis);
    return;
  }
  if (b->st == TSL_OK) b->st = tsl_schedule_split(b->s, stage, parent, factor);
}

static void b_reorder(builder *b, const char *stage, int n, const char *const *axes) {
  if (b->st == TSL_OK) b->st = tsl_schedule_reorder(b->s, stage, n, axes);
}
static void b_unroll(builder *b, const char *stage, const char *axis) {
  if (b->st == TSL_OK) b->st = tsl_schedule_unroll(b->s, stage, axis);
}
static void b_vectorize(builder *b, const char *stage, const char *axis) {
  if (b->st == TSL_OK) b->st = tsl_schedule_vectorize(b->s, stage, axis);
}
static void b_inline(builder *b, const char *stage) {
  if (b->st == TSL_OK) b->st = tsl_schedule_compute_inline(b->s, stage);
}
static void b_at(builder *b, const char *stage, const char *target, const char *axis) {
  if (b->st == TSL_OK) b->st = tsl_schedule_compute_at(b->s, stage, target, axis);
}

/* The GEMM's reduction over c < C input channels (V[.., c / X, c % X]) as a loop over
 * channel blocks (cb) and one over a block's channels (cx): blocks of X when X divides
 * C; else one loop over the C real channels (cb of extent 1), which skips the zero
 * padding of a partial last block: C <= X (one block: 12 of 16 for a 3-channel conv's
 * phases) or several blocks and a partial one (C = 20 of 32, or the phases' 12 in two
 * 8-lane blocks). V's flattened index (c / X) * X + c % X simplifies to c, so the single
 * loop has no division and no guard. Blocks of X with a partial last one would leave
 * a guarded or a peeled second loop, and the peeled form made LLVM store the
 * accumulators to memory on every step of the first (C = 20 of 32 at 28x28, 16 lanes:
 * 0.078 ms against 0.037-0.041 ms for the single loop and 0.050 ms over all 32). X = 1: one
 * channel a step, as the prefetch distance counts them. Returns whether cx holds at
 * most X channels (the loop unroll_cx may unroll). */
static bool split_channels(builder *b, int64_t C, int64_t X, name_t cb, name_t cx) {
  int64_t factor = C % X == 0 ? X : C;
  b_split(b, "M", "c", factor, cb, cx);
  return factor <= X;
}

/* The GEMM stage M[e, nu, n, t, kb, kx] = sum(c) under compute_at: register
 * blocks of mr tiles x nr output channels (nr / X blocks of the x lanes, each a vector). */
static void schedule_gemm(builder *b, const tsl_winograd_knobs *k, int64_t block_tiles, const tsl_winograd_shape *sh,
                          const char *u_name) {
  int64_t X = sh->X, KP = sh->KP;
  int64_t nkb = tpl_max(1, tpl_min(k->nr / X, KP / X));
  int64_t mr = tpl_min(k->mr, block_tiles);
  name_t to, ti, ko, ki, cb, cx;
  b_split(b, "M", "t", mr, to, ti);
  b_split(b, "M", "kb", nkb, ko, ki);
  bool unrollable = split_channels(b, sh->C, X, cb, cx);
  const char *order_k[] = {"e", "nu", "n", ko, to, cb, cx, ti, ki, "kx"};
  const char *order_t[] = {"e", "nu", "n", to, ko, cb, cx, ti, ki, "kx"};
  b_reorder(b, "M", 10, k->gemm_order == TSL_WINOGRAD_GEMM_T_OUTER ? order_t : order_k);
  b_unroll(b, "M", ti);
  b_unroll(b, "M", ki);
  if (X > 1) b_vectorize(b, "M", "kx");
  if (k->unroll_cx && X > 1 && unrollable) b_unroll(b, "M", cx);
  /* U's rows of the reduction step prefetch_u steps ahead: past a panel's last step the
   * addresses go on into the next panel (U's flat element offset is clamped at its end,
   * tsl_schedule_prefetch). With the single loop of a partial last block a step is all C
   * channels, so the distance is prefetch_u * C rows, issued at once. */
  if (k->prefetch_u > 0 && b->st == TSL_OK) b->st = tsl_schedule_prefetch(b->s, "M", u_name, cb, k->prefetch_u);
}

tsl_status tsl_winograd_schedule(const tsl_te_program *p, const tsl_target *t, const tsl_winograd_knobs *knobs,
                                 tsl_schedule **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "winograd template: NULL result");
  *out = NULL;
  tsl_winograd_shape sh;
  tsl_status st = tsl_winograd_program_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_winograd_knobs k = knobs ? *knobs : tsl_winograd_default_knobs(t, &sh);
  if ((st = tsl_winograd_knobs_check(&k)) != TSL_OK) return st;
  if (k.nr % sh.X != 0)
    return tsl_error(TSL_ERR_INVALID, "winograd template: knob nr = %lld is not a multiple of the block x = %lld",
                     (long long)k.nr, (long long)sh.X);
  builder b = {NULL, TSL_OK};
  if ((st = tsl_schedule_new(p, &b.s)) != TSL_OK) return st;

  /* the row transforms and index helpers are expressions of their consumers */
  b_inline(&b, "tile_in");
  b_inline(&b, "tile_out");
  b_inline(&b, "Y");
  if (!k.row_buffers) {
    b_inline(&b, "Vr");
    b_inline(&b, "Ya");
  }
  if (k.pad_at == TSL_WINOGRAD_PAD_INLINE) b_inline(&b, "padded");

  /* out[n, kb, oh, ow, kx]: tiles of m x m outputs, blocks of tiles */
  name_t oho, ohi, owo, owi, blk, rows_o, rows_i, cols_o, cols_i, kbo, kbi, go, gi;
  int m = sh.m;
  int64_t nkb = tpl_max(1, tpl_min(k.nr / sh.X, sh.KP / sh.X));
  b_split(&b, "out", "oh", m, oho, ohi);
  b_split(&b, "out", "ow", m, owo, owi);
  /* The block loop is not fused with n: bound inference then realizes exactly the
   * block's tiles (a fused loop's div/mod decoding widens the regions to every image). */
  int64_t block_tiles;
  const char *par = NULL, *tile_axis = NULL, *group_axis = NULL;
  /* parallel = channels: the output channels in parts, each part a loop outside the
   * blocks and the parallel loop: one launch per call, each thread transforms the
   * input of every block and streams its part of U (parallel loops per block over
   * tiles, then channels measured 0.095 ms on 1 thread and 0.36 ms on 2, SqueezeNet
   * 1.1's 27x27 32->128 layer; parts outside: 0.098 and 0.052 ms) */
  int64_t KB = sh.KP / sh.X;
  int64_t parts = k.parallel == TSL_WINOGRAD_PAR_CHANNELS ? channel_parts(KB, nkb) : 1;
  name_t kbpo = "", kbpi = "";
  const char *kb = "kb";
  if (parts > 1) {
    b_split(&b, "out", "kb", KB / parts, kbpo, kbpi);
    kb = kbpi;
  }
  bool rows_mode = k.nr_tiles >= sh.TW;
  const char *row_loop = rows_mode ? owo : cols_i; /* the tiles of one row in a block */
  if (rows_mode) {
    int64_t rows = tpl_min(k.nr_tiles / sh.TW, sh.TH);
    block_tiles = rows * sh.TW;
    b_split(&b, "out", oho, rows, rows_o, rows_i);
    cat(blk, rows_o, "");
    par = sh.TH > rows ? rows_o : "n";
  } else {
    block_tiles = k.nr_tiles;
    b_split(&b, "out", owo, k.nr_tiles, cols_o, cols_i);
    cat(blk, cols_o, "");
    par = oho;
  }
  if (parts > 1) par = kbpo;
  const char *order[12];
  int no = 0;
  order[no++] = "n";
  if (parts > 1) order[no++] = kbpo;
  if (k.gemm_at_tiles) {
    /* the GEMM per group of mr tiles of a row and nr channels, right before their
     * output transform: M is a register-block-sized buffer (alpha^2 x mr x nr) */
    int64_t mr = tpl_min(k.mr, rows_mode ? sh.TW : k.nr_tiles);
    b_split(&b, "out", kb, nkb, kbo, kbi);
    b_split(&b, "out", row_loop, mr, go, gi);
    const char *rest_rows[] = {rows_o, kbo, rows_i, go, kbi, gi, ohi, owi, "kx"};
    const char *rest_cols[] = {oho, cols_o, kbo, go, kbi, gi, ohi, owi, "kx"};
    for (int i = 0; i < 9; i++) order[no++] = rows_mode ? rest_rows[i] : rest_cols[i];
    tile_axis = gi;
    group_axis = go;
  } else {
    const char *rest_rows[] = {rows_o, kb, rows_i, owo, ohi, owi, "kx"};
    const char *rest_cols[] = {oho, cols_o, kb, cols_i, ohi, owi, "kx"};
    for (int i = 0; i < 7; i++) order[no++] = rows_mode ? rest_rows[i] : rest_cols[i];
    tile_axis = row_loop;
  }
  b_reorder(&b, "out", no, order);
  b_unroll(&b, "out", ohi);
  b_unroll(&b, "out", owi);
  if (sh.X > 1) b_vectorize(&b, "out", "kx");
  if (k.parallel != TSL_WINOGRAD_PAR_NONE && b.st == TSL_OK) b.st = tsl_schedule_parallel(b.s, "out", par);

  /* per tile: A^T M (alpha x m x X), in a small buffer or inlined */
  if (k.row_buffers) {
    b_at(&b, "Ya", "out", tile_axis);
    const char *ya_order[] = {"n", "t", "kb", "i", "nu", "kx"};
    b_reorder(&b, "Ya", 6, ya_order);
    b_unroll(&b, "Ya", "i");
    b_unroll(&b, "Ya", "nu");
    if (sh.X > 1) b_vectorize(&b, "Ya", "kx");
  }
  /* the GEMM (per block, or per tile group), the input transform feeding it per block,
   * the padded rows feeding that */
  if (k.gemm_at_tiles) {
    b_at(&b, "M", "out", group_axis);
    name_t gcb, gcx;
    bool unrollable = split_channels(&b, sh.C, sh.X, gcb, gcx);
    const char *gorder[] = {"e", "nu", "n", gcb, gcx, "t", "kb", "kx"};
    b_reorder(&b, "M", 8, gorder);
    b_unroll(&b, "M", "t");
    b_unroll(&b, "M", "kb");
    if (sh.X > 1) b_vectorize(&b, "M", "kx");
    if (k.unroll_cx && sh.X > 1 && unrollable) b_unroll(&b, "M", gcx);
  } else {
    b_at(&b, "M", "out", blk);
  }
  /* channel parts over a single block (one image): the input transform once, before
   * the parts, its tiles in parallel (a second launch), instead of once per part
   * (ResNet-18's 28x28 128 -> 128 F(4x4) layer on 1 thread: 0.38 ms per part, 0.34 ms
   * once) */
  bool v_root = parts > 1 && sh.N == 1 && block_tiles >= sh.TH * sh.TW;
  if (!v_root) b_at(&b, "V", "out", blk);
  if (!k.gemm_at_tiles) schedule_gemm(&b, &k, block_tiles, &sh, p->inputs[1]->buf->name);
  const char *vorder[] = {"n", "t", "cb", "e", "nu", "cx"};
  b_reorder(&b, "V", 6, vorder);
  if (v_root && b.st == TSL_OK) b.st = tsl_schedule_parallel(b.s, "V", "t");
  b_unroll(&b, "V", "e");
  b_unroll(&b, "V", "nu");
  if (sh.X > 1) b_vectorize(&b, "V", "cx");
  if (k.row_buffers) {
    /* B^T d of one tile and channel block: alpha x alpha x X floats in L1 (or in
     * registers once LLVM scalarizes the buffer) */
    b_at(&b, "Vr", "V", "cb");
    const char *vr_order[] = {"n", "t", "cb", "e", "j", "cx"};
    b_reorder(&b, "Vr", 6, vr_order);
    b_unroll(&b, "Vr", "e");
    b_unroll(&b, "Vr", "j");
    if (sh.X > 1) b_vectorize(&b, "Vr", "cx");
  }
  if (k.pad_at == TSL_WINOGRAD_PAD_BLOCK && !v_root) b_at(&b, "padded", "out", blk);
  if (k.pad_at != TSL_WINOGRAD_PAD_INLINE && sh.X > 1) b_vectorize(&b, "padded", "cx");

  if (b.st != TSL_OK) {
    st = b.st;
    tsl_schedule_free(b.s);
    return tsl_error(st, "winograd template: %s", tsl_last_error());
  }
  *out = b.s;
  return TSL_OK;
}

tsl_status tsl_winograd_weight_schedule(const tsl_te_program *p, const tsl_target *t, tsl_schedule **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "winograd weight template: NULL result");
  *out = NULL;
  if (!p || p->ninputs != 1 || p->noutputs != 1 || !find_stage(p, "Gw") || strcmp(p->outputs[0]->op->name, "U") != 0 ||
      p->outputs[0]->buf->ndim != 5)
    return tsl_error(TSL_ERR_INVALID, "winograd weight template: %s is not a winograd_weight program",
                     p && p->name ? p->name : "?");
  (void)t;
  int64_t X = p->outputs[0]->buf->shape[4];
  builder b = {NULL, TSL_OK};
  tsl_status st = tsl_schedule_new(p, &b.s);
  if (st != TSL_OK) return st;
  b_inline(&b, "Gw");
  const char *order[] = {"kb", "c", "e", "nu", "kx"};
  b_reorder(&b, "U", 5, order);
  b_unroll(&b, "U", "e");
  b_unroll(&b, "U", "nu");
  if (X > 1) b_vectorize(&b, "U", "kx");
  if (b.st != TSL_OK) {
    st = b.st;
    tsl_schedule_free(b.s);
    return tsl_error(st, "winograd weight template: %s", tsl_last_error());
  }
  *out = b.s;
  return TSL_OK;
}

/* ---- the generic interface ------------------------------------------------ */

/* knob order of the space */
enum { K_NR_TILES, K_MR, K_NR, K_GEMM_ORDER, K_UNROLL_CX, K_PAD_AT, K_ROW_BUFFERS, K_GEMM_AT_TILES, K_PARALLEL, K_PREFETCH_U, K_COUNT };

static void push(int64_t *list, int *n, int64_t v) {
  for (int i = 0; i < *n; i++)
    if (list[i] == v) return;
  if (*n < TSL_MAX_KNOB_VALUES) list[(*n)++] = v;
}

static tsl_status space_fn(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  tsl_winograd_shape sh;
  tsl_status st = tsl_winograd_program_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_winograd_knobs d = tsl_winograd_default_knobs(t, &sh);
  memset(out, 0, sizeof *out);
  int64_t v[TSL_MAX_KNOB_VALUES];
  int n = 0;
  /* parts of a row (TW / 4, TW / 2), then 1, 2, 4, ... rows up to the whole image */
  push(v, &n, d.nr_tiles);
  if (sh.TW >= 4) push(v, &n, tpl_ceil_div(sh.TW, 4));
  if (sh.TW >= 2) push(v, &n, tpl_ceil_div(sh.TW, 2));
  for (int64_t r = 1; r < sh.TH; r *= 2) push(v, &n, r * sh.TW);
  push(v, &n, sh.TH * sh.TW);
  if ((st = tsl_space_add_knob(out, "nr_tiles", TSL_KNOB_SPLIT, n, v)) != TSL_OK) return st;
  n = 0;
  static const int64_t mrs[] = {2, 3, 4, 5, 6, 8, 12, MAX_MR};
  for (size_t i = 0; i < sizeof mrs / sizeof mrs[0]; i++)
    if (mrs[i] <= (wide_register_file(t) ? MAX_MR : 8)) push(v, &n, mrs[i]);
  push(v, &n, d.mr);
  if ((st = tsl_space_add_knob(out, "mr", TSL_KNOB_SPLIT, n, v)) != TSL_OK) return st;
  n = 0;
  for (int64_t i = 1; i <= 3; i++) push(v, &n, i * sh.X);
  push(v, &n, d.nr);
  if ((st = tsl_space_add_knob(out, "nr", TSL_KNOB_SPLIT, n, v)) != TSL_OK) return st;
  static const int64_t bools[] = {0, 1}, pads[] = {0, 1, 2};
  if ((st = tsl_space_add_knob(out, "gemm_order", TSL_KNOB_REORDER, 2, bools)) != TSL_OK) return st;
  if ((st = tsl_space_add_knob(out, "unroll_cx", TSL_KNOB_ANNOTATE, 2, bools)) != TSL_OK) return st;
  if ((st = tsl_space_add_knob(out, "pad_at", TSL_KNOB_OTHER, 3, pads)) != TSL_OK) return st;
  if ((st = tsl_space_add_knob(out, "row_buffers", TSL_KNOB_OTHER, 2, bools)) != TSL_OK) return st;
  if ((st = tsl_space_add_knob(out, "gemm_at_tiles", TSL_KNOB_REORDER, 2, bools)) != TSL_OK) return st;
  static const int64_t pars[] = {TSL_WINOGRAD_PAR_NONE, TSL_WINOGRAD_PAR_BLOCKS, TSL_WINOGRAD_PAR_CHANNELS};
  if ((st = tsl_space_add_knob(out, "parallel", TSL_KNOB_ANNOTATE, 3, pars)) != TSL_OK) return st;
  n = 0;
  static const int64_t aheads[] = {0, 1, 2, 4};
  for (size_t i = 0; i < sizeof aheads / sizeof aheads[0]; i++) push(v, &n, aheads[i]);
  push(v, &n, d.prefetch_u);
  return tsl_space_add_knob(out, "prefetch_u", TSL_KNOB_ANNOTATE, n, v);
}

static tsl_status default_fn(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                             tsl_config *out) {
  tsl_winograd_shape sh;
  tsl_status st = tsl_winograd_program_shape(p, &sh);
  if (st != TSL_OK) return st;
  tsl_winograd_knobs d = tsl_winograd_default_knobs(t, &sh);
  const int64_t vals[K_COUNT] = {d.nr_tiles, d.mr,          d.nr,            d.gemm_order, d.unroll_cx,
                                 d.pad_at,   d.row_buffers, d.gemm_at_tiles, d.parallel,   d.prefetch_u};
  out->nknobs = s->nknobs;
  for (int i = 0; i < s->nknobs && i < K_COUNT; i++) out->values[i] = vals[i];
  return tsl_config_check(s, out);
}

static tsl_status apply_fn(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                           const tsl_config *c, tsl_schedule **out) {
  tsl_status st = tsl_config_check(s, c);
  if (st != TSL_OK) return st;
  tsl_winograd_knobs k;
  k.nr_tiles = tsl_config_get(s, c, "nr_tiles", 1);
  k.mr = tsl_config_get(s, c, "mr", 6);
  k.nr = tsl_config_get(s, c, "nr", 16);
  k.gemm_order = (int)tsl_config_get(s, c, "gemm_order", 0);
  k.unroll_cx = tsl_config_get(s, c, "unroll_cx", 0) != 0;
  k.pad_at = (int)tsl_config_get(s, c, "pad_at", TSL_WINOGRAD_PAD_BLOCK);
  k.row_buffers = tsl_config_get(s, c, "row_buffers", 1) != 0;
  k.gemm_at_tiles = tsl_config_get(s, c, "gemm_at_tiles", 0) != 0;
  k.parallel = (int)tsl_config_get(s, c, "parallel", TSL_WINOGRAD_PAR_BLOCKS);
  k.prefetch_u = tsl_config_get(s, c, "prefetch_u", 0);
  return tsl_winograd_schedule(p, t, &k, out);
}

/* Each template's full name is written out (found with grep from a records file). */
#define WINOGRAD_TEMPLATE(NAME, OP, DESC) {NAME, OP, DESC, 1, space_fn, default_fn, apply_fn}

const tsl_template tsl_winograd_templates[TSL_WINOGRAD_NTEMPLATES] = {
    WINOGRAD_TEMPLATE("conv2d_winograd_f2.blocked", "conv2d_winograd_f2",
                      "Winograd F(2x2,3x3): tile blocks, batched GEMM register blocks"),
    WINOGRAD_TEMPLATE("conv2d_winograd_f4.blocked", "conv2d_winograd_f4",
                      "Winograd F(4x4,3x3): tile blocks, batched GEMM register blocks"),
    WINOGRAD_TEMPLATE("conv2d_winograd_f6.blocked", "conv2d_winograd_f6",
                      "Winograd F(6x6,3x3): tile blocks, batched GEMM register blocks"),
    WINOGRAD_TEMPLATE("conv2d_winograd_f2_add.blocked", "conv2d_winograd_f2_add",
                      "Winograd F(2x2,3x3) + residual: tile blocks, batched GEMM"),
    WINOGRAD_TEMPLATE("conv2d_winograd_f4_add.blocked", "conv2d_winograd_f4_add",
                      "Winograd F(4x4,3x3) + residual: tile blocks, batched GEMM"),
    WINOGRAD_TEMPLATE("conv2d_winograd_f6_add.blocked", "conv2d_winograd_f6_add",
                      "Winograd F(6x6,3x3) + residual: tile blocks, batched GEMM"),
    WINOGRAD_TEMPLATE("conv2d_winograd_f2_r4.blocked", "conv2d_winograd_f2_r4",
                      "Winograd F(2x2,4x4): tile blocks, batched GEMM register blocks"),
    WINOGRAD_TEMPLATE("conv2d_winograd_f4_r4.blocked", "conv2d_winograd_f4_r4",
                      "Winograd F(4x4,4x4): tile blocks, batched GEMM register blocks"),
    WINOGRAD_TEMPLATE("conv2d_winograd_f2_r5.blocked", "conv2d_winograd_f2_r5",
                      "Winograd F(2x2,5x5): tile blocks, batched GEMM register blocks"),
    WINOGRAD_TEMPLATE("conv2d_winograd_f4_r5.blocked", "conv2d_winograd_f4_r5",
                      "Winograd F(4x4,5x5): tile blocks, batched GEMM register blocks"),
    WINOGRAD_TEMPLATE("conv2d_winograd_f2_r4_add.blocked", "conv2d_winograd_f2_r4_add",
                      "Winograd F(2x2,4x4) + residual: tile blocks, batched GEMM"),
    WINOGRAD_TEMPLATE("conv2d_winograd_f4_r4_add.blocked", "conv2d_winograd_f4_r4_add",
                      "Winograd F(4x4,4x4) + residual: tile blocks, batched GEMM"),
    WINOGRAD_TEMPLATE("conv2d_winograd_f2_r5_add.blocked", "conv2d_winograd_f2_r5_add",
                      "Winograd F(2x2,5x5) + residual: tile blocks, batched GEMM"),
    WINOGRAD_TEMPLATE("conv2d_winograd_f4_r5_add.blocked", "conv2d_winograd_f4_r5_add",
                      "Winograd F(4x4,5x5) + residual: tile blocks, batched GEMM"),
};
