/* A static cost model: the seconds a candidate kernel would take on a target CPU,
 * estimated from LLVM's scheduling model of that CPU without running it (tuning for a
 * board that is not on the network: issue 18). docs/cost_static.md gives the formula,
 * the sources of the CPU figures and the limits.
 *
 * For lowered kernel f (schedule/lower.h) on target t:
 *   1. f is compiled for t (the O3 pipeline, t's -mcpu) to assembly with LLVM's loop
 *      comments, and the trip count of every loop of the optimized IR is read from its
 *      latch (codegen/machine.h tsl_codegen_asm_loops, codegen/loop_trips.h).
 *   2. Compute: the innermost loops of the assembly go through one llvm-mca run for
 *      t's CPU, one code region each (tuner/mca.h tsl_mca_blocks_cycles): cycles per
 *      iteration c_i. A CPU LLVM times with another CPU's model (znver5: Zen 4's) gets
 *      its blocks rewritten for that proxy first (tuner/mca_proxy.h). Its executions n_i are the product of
 *      the trip counts of it and its enclosing loops; a trip count the IR does not give
 *      (a parallel task's chunk [begin, end)) is the extent of the loop IR's loop of that
 *      name (the parallel loop: all chunks together). C = sum c_i n_i cycles.
 *   3. Memory (a roofline after Williams, Waterman and Patterson, "Roofline", CACM 2009,
 *      with the traffic of each cache level from the footprints of the loop levels,
 *      tuner/ir_features.h bytes(L)): per loop nest of the loop IR and per cache of
 *      capacity S (t's L1d, L2), with L the largest level with bytes(L) <= S / 2 (what
 *      one run of the innermost L loops touches is loaded once per run; half the
 *      capacity for other data and associativity), the traffic into that cache is per
 *      buffer its bytes over L times the iterations of the loops outside L, except a
 *      loop the buffer does not depend on whose one iteration fits S / 2 (the buffer is
 *      reused across it: Wolf and Lam, PLDI 1991; tsl_cost_static_fill_bytes).
 *      M = max(traffic into L1 / (L2 bytes per cycle x f x cores used),
 *      traffic into L2 / DRAM bandwidth).
 *   4. Per nest the time is max(compute, memory), the nest's compute being the cycles
 *      of the assembly loops mapped to it (by their loop names) over the clock f and
 *      the parallel split: a parallel loop of P iterations on K cores takes
 *      ceil(P / K) / P of the serial time. Loops mapped to no nest add their compute.
 *
 * Cached per candidate (the lowered IR's text, target and cores) and per assembly
 * block (mca.h), within the process.
 */
#ifndef TESSEL_TUNER_COST_STATIC_H
#define TESSEL_TUNER_COST_STATIC_H

#include <stdbool.h>

#include "ir/ir.h"
#include "target/target.h"
#include "tuner/ir_features.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The model's version, recorded with every estimate (records' "cost_model"). */
#define TSL_COST_STATIC_MODEL "tessel-static-6"

/* A pick from static estimates (lookup, tuner/dispatch.h) replaces the default schedule
 * (the dispatcher's default algorithm at its default config) only when its estimate is
 * below (1 - margin) x the default's: of the candidate pairs of 7 squeezenet1_1 layers
 * measured on a Zen 5 host, 31% of those the model orders at all and 25% of those it
 * puts 10% or more apart are measured the other way (docs/cost_static.md, "Pick
 * margin"). */
#define TSL_COST_STATIC_PICK_MARGIN 0.10

/* The figures of one CPU the model uses (docs/cost_static.md lists their sources). */
typedef struct tsl_cpu_figures {
  const char *cpu;          /* LLVM CPU name; "" for the architecture's fallback */
  double ghz;               /* sustained clock, GHz */
  int cores;                /* cores of the typical board or machine */
  double l2_bytes_per_cycle; /* L2 -> L1 bandwidth per core, bytes per cycle */
  double dram_gbs;          /* sustained (STREAM-like) DRAM bandwidth of all cores, GB/s */
  const char *machine;      /* the board or machine the figures are of */
} tsl_cpu_figures;

/* The figures for t's CPU (a table of cortex-a53/a55/a72/a76, neoverse-n1, znver3/4/5,
 * x86-64-v3/v4; an unknown CPU gets its architecture's fallback row, cpu ""). For the
 * host the cores are the machine's online CPUs. Never NULL. */
const tsl_cpu_figures *tsl_cost_static_figures(const tsl_target *t, int *cores);

/* Whether the model can estimate for t here: llvm-mca runs and has a scheduling model
 * of t's CPU (tsl_mca_check). Errors: TSL_ERR_UNSUPPORTED naming the CPU and the
 * reason, TSL_ERR_INVALID (NULL t). */
tsl_status tsl_cost_static_check(const tsl_target *t);

/* What one estimate is made of. */
typedef struct tsl_cost_static_detail {
  double seconds;        /* the estimate */
  double compute_s;      /* sum over the loops of cycles / clock, after the split */
  double memory_s;       /* sum over the nests of the memory term */
  double cycles;         /* C: compute cycles of all the work, one core */
  double l1_fill_bytes;  /* traffic into L1 (from L2), all nests */
  double l2_fill_bytes;  /* traffic into L2 (from L3/DRAM), all nests */
  int loops;             /* innermost assembly loops analysed */
  int loops_guessed;     /* of them, with a trip count from neither the IR latch nor a loop name */
  int loops_unmapped;    /* of them, mapped to no nest of the loop IR */
  int loops_unproxied;   /* of them, timed as they are because the tool refused their
                            form for the CPU's proxy model (tuner/mca_proxy.h) */
  double parallel;       /* iterations of the outermost parallel loop (1: none) */
  int cores;             /* cores the split assumes */
  bool cached;           /* taken from the per-candidate cache */
} tsl_cost_static_detail;

/* The estimate for lowered kernel f on t with `cores` cores (0: the figures' count).
 * Errors: TSL_ERR_INVALID (NULL arguments, cores < 0), those of tsl_cost_static_check,
 * tsl_codegen_asm_loops and tsl_mca_block_cycles (the message names the loop), and
 * TSL_ERR_NOMEM. */
tsl_status tsl_cost_static_func(const tsl_func *f, const tsl_target *t, int cores, tsl_cost_static_detail *out);

/* Cycles per iteration of one assembly block on t's CPU (tsl_mca_block_cycles with the
 * model's iteration count and timeout): the tests' and the docs' hand-computed cases. */
tsl_status tsl_cost_static_block_cycles(const tsl_target *t, const char *block, double *cycles);

/* The bytes nest n (tsl_ir_nests) brings into a cache of `capacity` bytes, the memory
 * term's traffic (docs/cost_static.md, "Formula" 3): per buffer its footprint at the
 * largest level that fits half the cache, times the iterations of every loop outside
 * it, except a loop the buffer does not depend on whose one iteration fits half the
 * cache (the buffer is reused across it: charged once). Bytes; n must not be NULL. */
double tsl_cost_static_fill_bytes(const tsl_ir_nest *n, double capacity);

/* Spearman's rank correlation of a[0..n) and b[0..n) (average ranks for ties; Pearson's
 * correlation of the ranks): how well the estimates rank measured candidates. 0 when
 * n < 2 or either side is constant; NaN when out of memory. */
double tsl_spearman(const double *a, const double *b, int n);

#ifdef __cplusplus
}
#endif
#endif
