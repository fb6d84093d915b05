/* Machine limits measured with kernels from tessel's own code generator, so that
 * benchmarks and reports can quote "% of peak" (`tunecli peak`).
 *
 * Two figures, each for one thread (one core) and for the thread pool's threads:
 *
 *   fp32 FMA throughput. A kernel of `chains` independent vector FMA chains of the
 *   target's native width (acc = fma(acc, m, a) per chain, in a loop of `iters`
 *   iterations; m and a come from memory so nothing folds). A core with FMA latency L
 *   cycles and T FMA issues per cycle needs at least L x T independent chains to keep
 *   every FMA unit busy: Zen 3/4/5 and Skylake-X have L = 4, T = 2, so 8; the kernel
 *   uses 12 on 16-register targets (AVX2, SSE; two registers hold m and a) and 24 on
 *   32-register ones (AVX-512, AArch64 NEON). FLOPs are counted as 2 per lane per FMA.
 *   The all-core kernel wraps the same body in a parallel loop with one iteration per
 *   thread (runtime/parallel.h), each with its own accumulators.
 *
 *   Memory bandwidth: the STREAM triad a[i] = b[i] + s * c[i] (McCalpin, "Memory
 *   Bandwidth and Machine Balance in Current High Performance Computers", IEEE TCCA
 *   Newsletter 1995; www.cs.virginia.edu/stream) on three arrays much larger than the
 *   last-level cache, vectorized at the native width, and for the all-core figure
 *   split into contiguous blocks over a parallel loop. Bytes are counted as STREAM
 *   does: 3 x 4 bytes per element (two reads, one write; the write-allocate read of
 *   `a` is not counted).
 *
 * Units: GFLOP/s = 1e9 floating-point operations per second; GB/s = 1e9 bytes per
 * second. Each figure is the median of `repeat` samples of tsl_time_kernel
 * (include/tessel/runtime.h), each at least `min_repeat_ms` long, and comes with the
 * best sample too.
 */
#ifndef TESSEL_TUNER_PEAK_H
#define TESSEL_TUNER_PEAK_H

#include <stdbool.h>
#include <stdint.h>

#include "ir/ir.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_peak_opts {
  int threads;          /* threads of the all-core figures; 0 = tsl_get_num_threads() */
  int repeat;           /* samples per figure, >= 1 (the median is reported) */
  double min_repeat_ms; /* least duration of one sample in milliseconds, >= 0 */
  int64_t triad_bytes;  /* bytes of EACH triad array (rounded down to whole vectors);
                           0 skips the bandwidth figures */
} tsl_peak_opts;

/* Defaults: threads 0 (the pool's count), repeat 7, min_repeat_ms 50, triad_bytes
 * 128 MiB (3 x 128 MiB, far above any L3 of the machines tessel targets). */
tsl_peak_opts tsl_peak_opts_default(void);

typedef struct tsl_peak {
  int lanes;             /* fp32 lanes of the native vector (8 for AVX2, 16 for AVX-512) */
  int chains;            /* independent FMA chains per thread */
  int threads;           /* threads used for the *_all figures */
  double fma_gflops_1;   /* fp32 FMA throughput of one thread (core), GFLOP/s */
  double fma_gflops_all; /* the same with `threads` threads, GFLOP/s (all cores) */
  double triad_gbs_1;    /* STREAM triad bandwidth, one thread, GB/s (0 when skipped) */
  double triad_gbs_all;  /* the same with `threads` threads, GB/s (0 when skipped) */
  int64_t triad_bytes;   /* bytes per triad array actually used (0 when skipped) */
  /* The fastest sample of each figure. On a shared machine other work only ever
   * slows a sample down, so these are the better estimate of what the hardware can
   * do; the medians above say what a run typically gets. */
  double fma_gflops_1_best, fma_gflops_all_best, triad_gbs_1_best, triad_gbs_all_best;
} tsl_peak;

/* Measures the four figures on this machine with kernels JIT-compiled for target t
 * (which must run here: "host", or a host-compatible named target; a narrower target
 * such as x86-64-avx2 on an AVX-512 machine measures that ISA's peak). opts may be
 * NULL (defaults). Takes about repeat x min_repeat_ms x 4 plus the triad's
 * 3 x triad_bytes of memory for its duration. Sets the thread pool to `threads`
 * while it measures and restores the previous count before returning.
 * Errors: TSL_ERR_INVALID (NULL out or t, repeat < 1, min_repeat_ms < 0, threads
 * outside 0..TSL_MAX_THREADS, triad_bytes < 0 or below one vector),
 * TSL_ERR_UNSUPPORTED (t cannot run here), TSL_ERR_NOMEM (triad arrays), and errors
 * of tsl_jit_compile and tsl_time_kernel. */
tsl_status tsl_peak_measure(const tsl_target *t, const tsl_peak_opts *opts, tsl_peak *out);

/* Independent FMA chains the peak kernel uses for t (see the top of this file). */
int tsl_peak_chains(const tsl_target *t);

/* The FMA kernel as lowered IR (current arena), for tests and inspection.
 * Signature: `name(params: f32[3*lanes], out: f32[nout*lanes], iters: i64)` with
 * nout = threads when parallel, else 1. With vectors P0 = params[0, lanes),
 * m = params[lanes, 2*lanes), a = params[2*lanes, 3*lanes): chain c starts at P0 + c
 * and runs acc = fma(acc, m, a) iters times; out row r receives the lane-wise sum of
 * the chains in chain order (((acc0 + acc1) + acc2) + ...), every row the same values.
 * The parallel form runs row r in iteration r of a parallel loop of extent threads.
 * lanes >= 1, 1 <= chains <= 64, threads >= 1 (tessel bugs otherwise: abort). */
tsl_func *tsl_peak_fma_func(const char *name, int lanes, int chains, bool parallel, int threads);

/* The per-machine peak file: the fp32 FMA peak in GFLOP/s per (CPU, features, target
 * width, threads), the MAXIMUM of every measurement stored so far (on a shared machine
 * other work only ever slows a sample down, so the largest is the best estimate of the
 * hardware). It lives next to the JIT cache (codegen/jit_cache.h: $TSL_CACHE_DIR, else
 * $XDG_CACHE_HOME/tessel, else ~/.cache/tessel) as peak-v1.txt, one line per machine
 * and thread count "KEY THREADS GFLOPS", rewritten atomically (temporary file +
 * rename). A malformed line is ignored.
 *
 * tsl_peak_lookup: the stored peak of target t with `threads` threads (0: the pool's
 * count) into *gflops. Errors: TSL_ERR_NOT_FOUND (none stored, or no cache directory).
 * tsl_peak_store: stores max(stored, gflops). Errors: TSL_ERR_INVALID (gflops not
 * positive and finite), TSL_ERR_IO (the file cannot be written), TSL_ERR_NOT_FOUND (no
 * cache directory). */
tsl_status tsl_peak_lookup(const tsl_target *t, int threads, double *gflops);
tsl_status tsl_peak_store(const tsl_target *t, int threads, double gflops);

/* The triad kernel as lowered IR (current arena): `name(b: f32[n], c: f32[n],
 * a: f32[n], s: f32)` with a[i] = fma(s, c[i], b[i]) for i < n, n a positive multiple
 * of lanes. Parallel: a parallel loop over min(n/lanes, 1024) contiguous blocks of whole
 * vectors (sizes differ by at most one vector); otherwise one serial loop. */
tsl_func *tsl_peak_triad_func(const char *name, int64_t n, int lanes, bool parallel);

#ifdef __cplusplus
}
#endif
#endif
