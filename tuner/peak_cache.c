/* The per-machine peak file (peak.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/jit_cache.h"
#include "tessel/runtime.h"
#include "tuner/peak.h"

enum { MAX_LINES = 256 };

/* The machine key: the target's CPU and width and the host's CPU and features,
 * hashed (the feature string is long). */
static void machine_key(const tsl_target *t, int threads, char *buf, size_t n, int *nthreads) {
  char *ctx = tsl_jit_cache_context(t);
  uint64_t h = 1469598103934665603ull;
  for (const char *p = ctx ? ctx : t->cpu; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  free(ctx);
  snprintf(buf, n, "%s-%d-%016llx", t->cpu[0] ? t->cpu : "generic", t->vector_bits, (unsigned long long)h);
  *nthreads = threads > 0 ? threads : tsl_get_num_threads();
}

static tsl_status peak_path(char *buf, size_t n) {
  char dir[3800];
  tsl_status st = tsl_jit_cache_dir(dir, sizeof dir);
  if (st != TSL_OK) return st;
  if ((size_t)snprintf(buf, n, "%s/peak-v1.txt", dir) >= n) return tsl_error(TSL_ERR_INVALID, "peak: path too long");
  return TSL_OK;
}

typedef struct peak_line {
  char key[160];
  int threads;
  double gflops;
} peak_line;

/* The well-formed lines of the peak file (none when it does not exist). */
static int read_lines(const char *path, peak_line *lines, int max) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int n = 0;
  char buf[512];
  while (n < max && fgets(buf, sizeof buf, f)) {
    peak_line l;
    if (sscanf(buf, "%159s %d %lf", l.key, &l.threads, &l.gflops) == 3 && l.threads > 0 && isfinite(l.gflops) &&
        l.gflops > 0)
      lines[n++] = l;
  }
  fclose(f);
  return n;
}

tsl_status tsl_peak_lookup(const tsl_target *t, int threads, double *gflops) {
  if (!t || !gflops) return tsl_error(TSL_ERR_INVALID, "peak: NULL argument");
  char path[4000], key[160];
  int nt = 0;
  tsl_status st = peak_path(path, sizeof path);
  if (st != TSL_OK) return st;
  machine_key(t, threads, key, sizeof key, &nt);
  peak_line *lines = malloc(sizeof *lines * MAX_LINES);
  if (!lines) return tsl_error(TSL_ERR_NOMEM, "peak: out of memory");
  int n = read_lines(path, lines, MAX_LINES);
  double best = 0;
  for (int i = 0; i < n; i++)
    if (strcmp(lines[i].key, key) == 0 && lines[i].threads == nt && lines[i].gflops > best) best = lines[i].gflops;
  free(lines);
  if (best <= 0) return tsl_error(TSL_ERR_NOT_FOUND, "peak: no stored peak for %s with %d threads in %s", key, nt, path);
  *gflops = best;
  return TSL_OK;
}

tsl_status tsl_peak_store(const tsl_target *t, int threads, double gflops) {
  if (!t) return tsl_error(TSL_ERR_INVALID, "peak: NULL target");
  if (!(isfinite(gflops) && gflops > 0)) return tsl_error(TSL_ERR_INVALID, "peak: %g GFLOP/s is not a peak", gflops);
  char path[4000], tmp[4100], key[160];
  int nt = 0;
  tsl_status st = peak_path(path, sizeof path);
  if (st != TSL_OK) return st;
  machine_key(t, threads, key, sizeof key, &nt);
  peak_line *lines = malloc(sizeof *lines * (MAX_LINES + 1));
  if (!lines) return tsl_error(TSL_ERR_NOMEM, "peak: out of memory");
  int n = read_lines(path, lines, MAX_LINES);
  bool found = false;
  for (int i = 0; i < n; i++)
    if (strcmp(lines[i].key, key) == 0 && lines[i].threads == nt) {
      found = true;
      if (gflops > lines[i].gflops) lines[i].gflops = gflops;
    }
  if (!found) {
    snprintf(lines[n].key, sizeof lines[n].key, "%s", key);
    lines[n].threads = nt;
    lines[n++].gflops = gflops;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = tsl_jit_cache_make_parent_dirs(path) ? fopen(tmp, "w") : NULL;
  bool ok = f != NULL;
  for (int i = 0; ok && i < n; i++) ok = fprintf(f, "%s %d %.3f\n", lines[i].key, lines[i].threads, lines[i].gflops) > 0;
  if (f) ok = fclose(f) == 0 && ok;
  free(lines);
  if (!ok || rename(tmp, path) != 0) {
    unlink(tmp);
    return tsl_error(TSL_ERR_IO, "peak: cannot write %s: %s", path, strerror(errno));
  }
  return TSL_OK;
}
