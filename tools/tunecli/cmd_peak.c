/* tunecli peak: this machine's fp32 FMA peak and STREAM triad bandwidth, measured
 * with kernels from tessel's own code generator (tuner/peak.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_args.h"
#include "target/target.h"
#include "tuner/peak.h"
#include "tunecli.h"

static bool parse_int(const char *s, long long lo, long long hi, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || errno || v < lo || v > hi) return false;
  *out = v;
  return true;
}

int tunecli_peak(int argc, char **argv) {
  const char *cmd = "peak";
  const char *target_str = "host";
  tsl_peak_opts o = tsl_peak_opts_default();
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    long long v = 0;
    if (strcmp(arg, "--no-bandwidth") == 0) {
      o.triad_bytes = 0;
      continue;
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "tunecli peak: error: unknown option '%s' or missing value (see tunecli help)\n", arg);
      return 2;
    }
    const char *val = argv[++i];
    if (strcmp(arg, "--target") == 0) {
      target_str = val;
    } else if (strcmp(arg, "--threads") == 0 && parse_int(val, 1, 256, &v)) {
      o.threads = (int)v;
    } else if (strcmp(arg, "--repeat") == 0 && parse_int(val, 1, 1000, &v)) {
      o.repeat = (int)v;
    } else if (strcmp(arg, "--min-ms") == 0 && parse_int(val, 0, 60000, &v)) {
      o.min_repeat_ms = (double)v;
    } else if (strcmp(arg, "--triad-mib") == 0 && parse_int(val, 1, 1 << 20, &v)) {
      o.triad_bytes = (int64_t)v << 20;
    } else {
      fprintf(stderr, "tunecli peak: error: bad option '%s %s' (see tunecli help)\n", arg, val);
      return 2;
    }
  }
  tsl_target t;
  tsl_status st = tsl_target_parse(target_str, &t);
  if (st != TSL_OK) return tunecli_fail(cmd, st);
  tsl_peak p;
  if ((st = tsl_peak_measure(&t, &o, &p)) != TSL_OK) return tunecli_fail(cmd, st);
  /* the per-machine peak file keeps the largest figure ever measured ("% of peak") */
  if (tsl_peak_store(&t, 1, p.fma_gflops_1_best) != TSL_OK || tsl_peak_store(&t, p.threads, p.fma_gflops_all_best) != TSL_OK)
    fprintf(stderr, "tunecli peak: warning: %s\n", tsl_last_error());
  char tbuf[256];
  printf("target %s (%d-bit vectors, %d fp32 lanes)\n", tsl_target_str(&t, tbuf, sizeof tbuf), t.vector_bits,
         p.lanes);
  printf("median of %d samples, each >= %.0f ms (this machine is shared: the best sample is the\n"
         "better estimate of the hardware's limit)\n",
         o.repeat, o.min_repeat_ms);
  printf("fp32 FMA peak  (%d chains x %d lanes, 2 FLOP per lane-FMA)\n", p.chains, p.lanes);
  printf("  1 thread     %8.1f GFLOP/s  (best sample %.1f)\n", p.fma_gflops_1, p.fma_gflops_1_best);
  printf("  %d threads %s %8.1f GFLOP/s  (best sample %.1f; median %.1f per thread)\n", p.threads,
         p.threads < 10 ? " " : "", p.fma_gflops_all, p.fma_gflops_all_best, p.fma_gflops_all / p.threads);
  if (p.triad_bytes > 0) {
    printf("STREAM triad a = b + s*c  (3 arrays x %.0f MiB, 12 bytes per element)\n",
           (double)p.triad_bytes / (1 << 20));
    printf("  1 thread     %8.1f GB/s     (best sample %.1f)\n", p.triad_gbs_1, p.triad_gbs_1_best);
    printf("  %d threads %s %8.1f GB/s     (best sample %.1f)\n", p.threads, p.threads < 10 ? " " : "",
           p.triad_gbs_all, p.triad_gbs_all_best);
  }
  return 0;
}
