/* The default schedule of graph kernels (default_schedule.h). */
#include "ops/nn/default_schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/binary/lutconv.h"
#include "ops/nn/nn_schedule.h"
#include "schedule/axis_access.h"
#include "tessel/tensor.h"

/* Loops shorter than this run serially: a launch on the pool costs about a microsecond. */
#define MIN_PARALLEL_ITERS 4
/* Stages doing fewer element operations than this (the product of their loop extents,
 * reductions included) run serially. Splitting pays when the serial time exceeds about
 * twice the pool's fork/join cost (two threads halve the work and add one launch).
 * Measured on the x86-64 host of this project (Zen 3 VM, AVX2): a launch on 2 threads
 * with the workers awake (as in a graph run's warm section) 0.6 us on a quiet machine,
 * 1.9 us while other processes load it (`bench/parallel_overhead`); an elementwise
 * kernel ~5.7 elements/ns on one thread (HardSwish over 200704 elements in 35 us,
 * `tunecli run ... --profile`): 2 x (0.6 .. 1.9 us) x 5.7/ns = 6800 .. 21600 elements;
 * 2^14 lies between. */
#define MIN_PARALLEL_WORK 16384
/* Shortest innermost axis that is vectorized when it is shorter than the lanes. */
#define MIN_VECTOR_EXTENT 4

/* Schedules one compute_root stage: reductions moved outside the innermost spatial axis
 * (the accumulators become vectors, as in the GEMM micro-kernel), that axis vectorized
 * by `lanes` (split when longer; lowering guards a tail) or, shorter than a register but
 * at least MIN_VECTOR_EXTENT long, as one partial vector (a 14-wide row at 16 lanes),
 * and the outer spatial axes fused into one parallel loop (the vector split's outer
 * loop when there is one spatial axis) unless the stage is too small to split. */
static tsl_status schedule_stage(tsl_schedule *s, int si, int64_t lanes);

/* A reduction whose innermost spatial axis is strided in memory (a row max, sum or norm
 * over the last axis: the rows lie apart) is vectorized along its contiguous reduction
 * axis `rd_axis` (at least `lanes` long) instead: the axis split by the lanes and
 * rfactor'ed on the inner half (schedule/schedule.h), whose stage "NAME.rf" keeps one
 * vector of partial results per output point (vector accumulators; its loops as any
 * stage's, that half innermost and vectorized), and the stage reduces those lanes.
 * When the schedule refuses the split or the rfactor (a reduction rfactor does not take)
 * the stage is scheduled as it stands, scalar. */
static tsl_status vectorize_reduction(tsl_schedule *s, const char *name, const char *rd_axis, int64_t lanes) {
  char stage[160], inner[200];
  snprintf(stage, sizeof stage, "%s", name);
  snprintf(inner, sizeof inner, "%s.inner", rd_axis);
  tsl_status r = tsl_schedule_split(s, stage, rd_axis, lanes);
  const char *rf = NULL;
  if (r == TSL_OK) r = tsl_schedule_rfactor(s, stage, inner, &rf);
  if (r == TSL_ERR_SCHEDULE) {
    tsl_clear_error();
    int si = tsl_schedule_stage_index(s, stage);
    return si >= 0 ? schedule_stage(s, si, lanes) : TSL_OK; /* (its reduction leaves are no roots now) */
  }
  if (r != TSL_OK) return r;
  char rfname[200];
  snprintf(rfname, sizeof rfname, "%s", rf);
  int ri = tsl_schedule_stage_index(s, rfname);
  if (ri < 0) return tsl_error(TSL_ERR_SCHEDULE, "default schedule: rfactor of %s made no stage %s", stage, rfname);
  /* the rf stage: `inner` is its innermost spatial axis, contiguous (schedule_stage
   * vectorizes it, the reduction's other half outside it) */
  return schedule_stage(s, ri, lanes);
}

static tsl_status schedule_stage(tsl_schedule *s, int si, int64_t lanes) {
  tsl_stage *st = s->stages[si];
  const char *name = st->name;
  int sp[TSL_MAX_NDIM + 4], nsp = 0, rd[16], nrd = 0;
  for (int i = 0; i < st->nleaf; i++) {
    int it = st->leaf[i];
    if (st->iters[it].is_reduce) {
      if (nrd < 16) rd[nrd++] = it;
    } else if (nsp < TSL_MAX_NDIM + 4) {
      sp[nsp++] = it;
    }
  }
  if (nsp == 0 || nsp + nrd != st->nleaf) return TSL_OK;
  int64_t work = 1;
  for (int i = 0; i < st->nleaf && work < MIN_PARALLEL_WORK; i++) work *= st->iters[st->leaf[i]].extent;
  bool split_work = work >= MIN_PARALLEL_WORK;
  tsl_status r = TSL_OK;
  int inner = sp[nsp - 1];
  int64_t inner_extent = st->iters[inner].extent;
  char inner_name[160];
  snprintf(inner_name, sizeof inner_name, "%s", st->iters[inner].name);
  bool vec = lanes > 1 && inner_extent >= (lanes < MIN_VECTOR_EXTENT ? lanes : MIN_VECTOR_EXTENT);
  if (nrd > 0) {
    /* a reduction: vectors only along memory (schedule/axis_access.h); a strided
     * innermost spatial axis leaves the vectors to a contiguous reduction axis */
    bool contig[TSL_AXIS_ACCESS_MAX];
    r = tsl_axis_contiguous(s, st, contig);
    if (r != TSL_OK) return r;
    if (vec && !(inner < TSL_AXIS_ACCESS_MAX && inner < st->nroot && contig[inner])) {
      vec = false;
      int best = -1;
      for (int i = 0; i < nrd; i++)
        if (rd[i] < TSL_AXIS_ACCESS_MAX && rd[i] < st->nroot && contig[rd[i]] && st->iters[rd[i]].extent >= lanes &&
            (best < 0 || st->iters[rd[i]].extent > st->iters[best].extent))
          best = rd[i];
      if (best >= 0 && lanes > 1) {
        char axis[160];
        snprintf(axis, sizeof axis, "%s", st->iters[best].name);
        return vectorize_reduction(s, name, axis, lanes);
      }
    }
  }
  if (vec && nrd > 0) {
    const char *order[32];
    int n = 0;
    for (int i = 0; i < nsp - 1; i++) order[n++] = st->iters[sp[i]].name;
    for (int i = 0; i < nrd; i++) order[n++] = st->iters[rd[i]].name;
    order[n++] = inner_name;
    r = tsl_schedule_reorder(s, name, n, order);
    st = s->stages[si];
  }
  if (r == TSL_OK && vec) {
    if (inner_extent <= lanes) {
      r = tsl_schedule_vectorize(s, name, inner_name);
    } else {
      r = tsl_schedule_split(s, name, inner_name, lanes);
      char vin[200], vout[200];
      snprintf(vin, sizeof vin, "%s.inner", inner_name);
      snprintf(vout, sizeof vout, "%s.outer", inner_name);
      /* one spatial axis under a reduction (a row reduction): the vector split's outer
       * loop, which is the parallel one, goes outside the reductions, else the thread
       * pool would be launched once per reduction step (measured: a row softmax
       * 4096x1000 at 216 ms, the naive loop nest 72 ms) */
      if (r == TSL_OK && nsp == 1 && nrd > 0) {
        const char *order[20];
        int n = 0;
        order[n++] = vout;
        for (int i = 0; i < nrd; i++) order[n++] = s->stages[si]->iters[rd[i]].name;
        order[n++] = vin;
        r = tsl_schedule_reorder(s, name, n, order);
      }
      if (r == TSL_OK) r = tsl_schedule_vectorize(s, name, vin);
    }
    st = s->stages[si];
  }
  if (r != TSL_OK) return r;
  /* the outer spatial axes (all but the vector one), fused while too short to split */
  int nouter = vec || nsp > 1 ? nsp - 1 : nsp;
  if (nouter == 0) {
    /* one spatial axis (a flattened elementwise kernel): its vector split's outer part
     * is the only parallelism there is */
    if (!vec || inner_extent <= lanes) return TSL_OK;
    char vout[200];
    snprintf(vout, sizeof vout, "%s.outer", inner_name);
    return split_work && (inner_extent + lanes - 1) / lanes >= MIN_PARALLEL_ITERS ? tsl_schedule_parallel(s, name, vout)
                                                                                 : TSL_OK;
  }
  char fused[512];
  snprintf(fused, sizeof fused, "%s", st->iters[sp[0]].name);
  int64_t extent = st->iters[sp[0]].extent;
  for (int i = 1; i < nouter && extent < 64; i++) {
    char next[160];
    snprintf(next, sizeof next, "%s", st->iters[sp[i]].name);
    if ((r = tsl_schedule_fuse(s, name, fused, next)) != TSL_OK) return r;
    st = s->stages[si];
    extent *= st->iters[sp[i]].extent;
    size_t len = strlen(fused);
    snprintf(fused + len, sizeof fused - len, ".%s.fused", next);
  }
  if (split_work && extent >= MIN_PARALLEL_ITERS) r = tsl_schedule_parallel(s, name, fused);
  return r;
}

/* A program of the operator library's packed dense form (tagged "dense_packed": a GEMV
 * over a packed weight, models/passes/pack_dense.h): the dense template's schedule. */
static bool is_dense_packed(const tsl_te_program *p) {
  for (int i = 0; i < p->noutputs; i++) {
    const tsl_te_op *op = p->outputs[i]->op;
    if (op->tag && strcmp(op->tag, "dense_packed") == 0) return true;
    for (int k = 0; op->kind == TSL_TE_COMPUTE && k < op->ninputs; k++) {
      const tsl_te_op *in = op->inputs[k]->op;
      if (in->kind == TSL_TE_COMPUTE && in->tag && strcmp(in->tag, "dense_packed") == 0) return true;
    }
  }
  return false;
}

/* At most this many output channel blocks of a blocked channel gather are unrolled. */
#define MAX_GATHER_UNROLL_BLOCKS 32

/* A blocked channel gather (ops/nn/generators.h, stage tagged "channel_gather", axes
 * n, cb, i, c): each output block's lanes read a fixed pattern of input lanes that only
 * the block cb sets. The block loop goes inside the spatial one and is unrolled, so that
 * every lane's index is a scalar plus a constant and codegen loads the few input windows
 * and shuffles them (codegen/llvm_lane_window.c) instead of gathering lane by lane
 * (ShuffleNet V2's interleave: 0.10 ms -> see the commit for 116 channels at 28x28).
 * *done is false (nothing changed) for another stage or too many blocks. */
static tsl_status schedule_channel_gather(tsl_schedule *s, int si, int64_t lanes, bool *done) {
  const tsl_stage *st = s->stages[si];
  *done = false;
  if (!st->op->tag || strcmp(st->op->tag, "channel_gather") != 0 || st->nleaf != 4) return TSL_OK;
  const char *axes[4] = {"n", "cb", "i", "c"};
  for (int k = 0; k < 4; k++)
    if (strcmp(st->iters[st->leaf[k]].name, axes[k]) != 0) return TSL_OK;
  int64_t blocks = st->iters[st->leaf[1]].extent, lanes_of_block = st->iters[st->leaf[3]].extent;
  int64_t work = st->iters[st->leaf[0]].extent * st->iters[st->leaf[2]].extent * blocks * lanes_of_block;
  if (blocks > MAX_GATHER_UNROLL_BLOCKS || lanes_of_block < 2 || lanes_of_block > lanes) return TSL_OK;
  char name[160];
  snprintf(name, sizeof name, "%s", st->name);
  const char *order[4] = {"n", "i", "cb", "c"};
  tsl_status r = tsl_schedule_reorder(s, name, 4, order);
  if (r == TSL_OK) r = tsl_schedule_vectorize(s, name, "c");
  if (r == TSL_OK) r = tsl_schedule_unroll(s, name, "cb");
  if (r == TSL_OK) r = tsl_schedule_fuse(s, name, "n", "i");
  if (r == TSL_OK && work >= MIN_PARALLEL_WORK) r = tsl_schedule_parallel(s, name, "n.i.fused");
  *done = r == TSL_OK;
  return r;
}

/* The squeeze-excitation gate (ops/nn/squeeze_excite.c, output tagged "squeeze_excite"). */
/* Whether p has one output and its stage carries tag. */
static bool output_tagged(const tsl_te_program *p, const char *tag) {
  return p->noutputs == 1 && p->outputs[0]->op->tag && strcmp(p->outputs[0]->op->tag, tag) == 0;
}

static bool is_squeeze_excite(const tsl_te_program *p) { return output_tagged(p, "squeeze_excite"); }

/* The lookup-table 1x1 conv of unipolar bit planes (ops/binary/lutconv.h, output tagged
 * "lutconv"). */
static bool is_lutconv(const tsl_te_program *p) { return output_tagged(p, "lutconv"); }

bool tsl_default_schedule_is_hand(const tsl_te_program *p) {
  return p && (is_dense_packed(p) || is_squeeze_excite(p) || is_lutconv(p));
}

/* At most this many parts of the squeeze-excitation gate's parallel loops (each runs a
 * slice of the blocks or of the hidden units, all of its reduction inside). */
#define SE_PARALLEL_PARTS 4

/* Parts of a loop of `extent` split for the threads: at most SE_PARALLEL_PARTS, none
 * empty (a split by nparts gives each part ceil(extent / parts) iterations, so 5 in 4
 * parts would leave the last part nothing: 3 parts of 2, 2, 1 instead). */
static int64_t se_parts(int64_t extent) {
  int64_t p = extent < SE_PARALLEL_PARTS ? extent : SE_PARALLEL_PARTS;
  if (p < 1) return 1;
  int64_t per = (extent + p - 1) / p;
  return (extent + per - 1) / per;
}

/* The extent of stage st's leaf `name`, 0 when it has none. */
static int64_t leaf_extent(const tsl_stage *st, const char *name) {
  for (int i = 0; i < st->nleaf; i++)
    if (strcmp(st->iters[st->leaf[i]].name, name) == 0) return st->iters[st->leaf[i]].extent;
  return 0;
}

/* The squeeze-excitation gate's sums (ops/nn/squeeze_excite.c: the pooled sums acc[n, cb, c]
 * over j, the first layer t1[n, s, c] over cb, the second g0[n, cb, c] over s): the
 * reduction loop outside the other spatial loop, so each step updates many independent
 * vector accumulators instead of one chain of dependent adds (latency-bound: 110 FMAs in
 * a row for RegNetY-400MF's S = 110) and reads the weights in storage order, the lanes
 * vectorized; a stage of MIN_PARALLEL_WORK element operations or more has that spatial
 * loop split in se_parts of it (at most SE_PARALLEL_PARTS, none empty) run in parallel
 * (with the images), its weight stream shared by the threads. (Splitting the pooled sums
 * of fewer blocks than parts over the rows, rfactor'ed per part, was tried: EfficientNet-B0's
 * first gate, 2 blocks x 112x112, took 2.98 ms at 2 threads against 0.013 ms split over the blocks only, so it is
 * not done.) *done is false for another stage. */
static tsl_status schedule_squeeze_excite_sum(tsl_schedule *s, int si, bool *done) {
  /* stage, its spatial loop (blocks or hidden units), its reduction */
  static const char *const stages[3][3] = {{"acc", "cb", "j"}, {"t1", "s", "cb"}, {"g0", "cb", "s"}};
  *done = false;
  const tsl_stage *st = s->stages[si];
  char name[160];
  snprintf(name, sizeof name, "%s", st->name);
  int64_t work = 1;
  for (int i = 0; i < st->nleaf; i++) work *= st->iters[st->leaf[i]].extent;
  for (int k = 0; k < 3; k++) {
    if (strcmp(name, stages[k][0]) != 0) continue;
    const char *sp = stages[k][1], *rd = stages[k][2];
    int64_t extent = leaf_extent(st, sp);
    tsl_status r;
    if (work >= MIN_PARALLEL_WORK && se_parts(extent) > 1) {
      char outer[64], inner[64], fused[96];
      snprintf(outer, sizeof outer, "%s.outer", sp);
      snprintf(inner, sizeof inner, "%s.inner", sp);
      snprintf(fused, sizeof fused, "n.%s.fused", outer);
      const char *order[5] = {"n", outer, rd, inner, "c"};
      r = tsl_schedule_split_nparts(s, name, sp, se_parts(extent));
      if (r == TSL_OK) r = tsl_schedule_reorder(s, name, 5, order);
      if (r == TSL_OK) r = tsl_schedule_vectorize(s, name, "c");
      if (r == TSL_OK) r = tsl_schedule_fuse(s, name, "n", outer);
      if (r == TSL_OK) r = tsl_schedule_parallel(s, name, fused);
    } else {
      const char *order[4] = {"n", rd, sp, "c"};
      r = tsl_schedule_reorder(s, name, 4, order);
      if (r == TSL_OK) r = tsl_schedule_vectorize(s, name, "c");
    }
    *done = r == TSL_OK;
    return r;
  }
  return TSL_OK;
}

tsl_status tsl_default_schedule(const tsl_te_program *p, const tsl_target *t, tsl_schedule **out) {
  if (p && is_dense_packed(p)) return tsl_dense_schedule(p, t, NULL, out);
  if (p && is_lutconv(p)) return tsl_lutconv_schedule(p, t, out);
  tsl_schedule *s = NULL;
  tsl_status st = tsl_schedule_create(p, &s);
  if (st != TSL_OK) return st;
  int64_t lanes = tsl_target_f32_lanes(t);
  /* by name: a row reduction's rfactor inserts a stage (scheduled with it) */
  int n = s->nstages;
  char(*names)[160] = calloc((size_t)(n ? n : 1), sizeof *names);
  if (!names) {
    tsl_schedule_free(s);
    return tsl_error(TSL_ERR_NOMEM, "default schedule: out of memory");
  }
  for (int i = 0; i < n; i++) snprintf(names[i], sizeof names[i], "%s", s->stages[i]->name);
  for (int i = 0; i < n && st == TSL_OK; i++) {
    int si = tsl_schedule_stage_index(s, names[i]);
    if (si < 0 || s->stages[si]->attach != TSL_ATTACH_ROOT) continue;
    bool done = false;
    st = schedule_channel_gather(s, si, lanes, &done);
    if (st == TSL_OK && !done && is_squeeze_excite(p)) st = schedule_squeeze_excite_sum(s, si, &done);
    if (st == TSL_OK && !done) st = schedule_stage(s, si, lanes);
  }
  free(names);
  if (st != TSL_OK) {
    tsl_schedule_free(s);
    return st;
  }
  *out = s;
  return TSL_OK;
}
