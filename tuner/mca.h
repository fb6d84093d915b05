/* LLVM's machine-code analyser (llvm-mca) as a subprocess: the cycles one iteration of
 * a block of assembly takes on a CPU, from LLVM's scheduling model of that CPU (the
 * MCA library has no C API, so the tool is run on a temporary file and its JSON output
 * read with json-c). Used by the static cost model (tuner/cost_static.h).
 *
 * The tool: the environment variable TSL_LLVM_MCA names it (default "llvm-mca-19",
 * searched in PATH; Debian's llvm-19 package installs it).
 * Run as: llvm-mca -mtriple=TRIPLE -mcpu=CPU --json -iterations=N FILE, FILE holding
 * every block of one request as a code region ("# LLVM-MCA-BEGIN bK" ... "# LLVM-MCA-END
 * bK": one process start, about 0.1 s, for all of a candidate's loops; llvm-mca
 * simulates each region on its own, so a block costs the same alone or among others).
 * Cycles per iteration of block K = SummaryView.TotalCycles / SummaryView.Iterations of
 * the JSON CodeRegions entry named "bK" (the steady state of the block repeated N
 * times, its loop-carried dependences included: a chain of 4-cycle FMAs costs 4 cycles
 * an iteration, independent ones their throughput).
 */
#ifndef TESSEL_TUNER_MCA_H
#define TESSEL_TUNER_MCA_H

#include <stdint.h>

#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSL_MCA_ENV "TSL_LLVM_MCA"
#define TSL_MCA_DEFAULT "llvm-mca-19"

/* The tool's name (TSL_LLVM_MCA or the default). */
const char *tsl_mca_tool(void);

/* Whether llvm-mca runs and has a scheduling model for cpu on triple (a CPU LLVM does
 * not know is refused: its generic model would mean nothing). Results are cached per
 * (triple, cpu). Errors: TSL_ERR_UNSUPPORTED naming the tool and what failed (not
 * found, no model for the CPU, a timeout), TSL_ERR_INVALID (NULL arguments). */
tsl_status tsl_mca_check(const char *triple, const char *cpu);

/* Cycles per iteration of each of blocks[0..n) (as tsl_mca_block_cycles) into
 * cycles[0..n), in one run of the tool for all the blocks not in the cache (whose
 * timeout is timeout_s per block run). Results are cached per block, with the same
 * key as tsl_mca_block_cycles. Errors: those of tsl_mca_block_cycles; when the tool
 * fails, *bad is the index of the block at fault (the one holding the line its error
 * names, else the first that fails alone; -1 when none does) and the message starts
 * "block K: ". */
tsl_status tsl_mca_blocks_cycles(const char *triple, const char *cpu, const char *const *blocks, int n, int iterations,
                                 double timeout_s, double *cycles, int *bad);

/* Cycles per iteration of `block` (assembly in the target's syntax: instructions one a
 * line, no labels or directives needed) on cpu, simulated for `iterations` (>= 1)
 * iterations, the tool killed after timeout_s seconds (> 0). Results are cached per
 * (triple, cpu, iterations, block text). Errors: TSL_ERR_INVALID (NULL or bad
 * arguments), TSL_ERR_IO (temporary files), TSL_ERR_RUNTIME (the tool failed, timed out
 * or printed no summary: the message quotes its first error line). */
tsl_status tsl_mca_block_cycles(const char *triple, const char *cpu, const char *block, int iterations,
                                double timeout_s, double *cycles);

/* One entry of the per-block cache, for a worker process to hand the cycles it
 * computed to its parent (tuner/runner.c estimates in forked workers: what they learn
 * about blocks outlives them). */
typedef struct tsl_mca_entry {
  uint64_t key;
  double cycles;
} tsl_mca_entry;

/* A mark in the journal of entries added to the cache (in this process). */
int tsl_mca_cache_mark(void);

/* The entries added since `mark`, at most max of them, into out; returns their number. */
int tsl_mca_cache_since(int mark, tsl_mca_entry *out, int max);

/* Adds entries (from a worker) to this process's cache. */
void tsl_mca_cache_add(const tsl_mca_entry *e, int n);

#ifdef __cplusplus
}
#endif
#endif
