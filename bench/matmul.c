/* bench/matmul: fp32 C = A x B (row-major) with tessel's matmul schedule template
 * against oneDNN's dnnl_sgemm and OpenBLAS's cblas_sgemm, in one process.
 *
 *   matmul [--sizes 256,512,1024,1000] [--threads 1,2] [--rounds R] [--repeat N]
 *          [--min-ms MS] [--knobs mr=6,nr=16,kc=256,mc=120,nc=0,ku=1,pack_a=0,pack_b=1,parallel=1]
 *          [--no-peak] [--schedule] [--schedule-file FILE]
 *
 * --schedule-file FILE runs the schedule in FILE (the text form, schedule/schedule.h:
 * tsl_schedule_from_text, e.g. the auto-scheduler's best record printed by `tunecli show
 * --records`, bench/autosched/run.sh) as the tessel kernel instead of the template; its
 * stage and axis names are the matmul operator's (C[i, j] = sum(k: A[i, k] * B[k, j])).
 *
 * For every size (M = N = K) and thread count, each library is timed in R interleaved
 * rounds of N samples (tsl_time_callback: each sample at least MS milliseconds of
 * back-to-back calls), so a slow period of this shared machine hits all of them; the
 * table shows the median over all samples in GFLOP/s (2*M*N*K FLOPs per call, 1e9
 * FLOP/s), the best sample in brackets, and the median as % of the fp32 FMA peak that
 * tuner/peak.h measures for that many threads (same process, same kernels as
 * `tunecli peak`; its best sample, since other work on a shared machine only lowers a
 * sample). Every result is checked against the others (whole matrices) and
 * against float64 dot products at sampled entries.
 *
 * Threads: tessel through tsl_set_num_threads, oneDNN (Debian's build uses OpenMP)
 * through omp_set_num_threads, OpenBLAS through openblas_set_num_threads. OpenBLAS runs
 * with OPENBLAS_CORETYPE as this machine sets it; a second OpenBLAS row with
 * OPENBLAS_CORETYPE=SkylakeX runs in a child process (its own environment, read when
 * the library loads) only when the CPU has AVX-512, and is reported as skipped
 * otherwise. This is a benchmark, not a test: nothing here runs in the test suite.
 */
#include <cblas.h>
#include <dnnl.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/build.h"
#include "ops/registry.h"
#include "ir/arena.h"
#include "runtime/module.h"
#include "ops/matmul/matmul_schedule.h"
#include "target/target.h"
#include "tessel/runtime.h"
#include "tuner/peak.h"

extern char **environ;

enum { MAX_LIST = 16, NLIBS = 3, MAX_SAMPLES = 4096 };

typedef struct opts {
  int64_t sizes[MAX_LIST];
  int nsizes;
  int threads[MAX_LIST];
  int nthreads;
  int rounds, repeat;
  double min_ms;
  bool peak, print_schedule, openblas_child;
  const char *knobs;         /* NULL: the template's defaults */
  const char *schedule_file; /* not NULL: this schedule text instead of the template */
} opts;

typedef struct problem {
  int64_t n;
  float *a, *b;
  float *c[NLIBS]; /* tessel, oneDNN, OpenBLAS */
  const tsl_kernel *kernel;
} problem;

static const char *const lib_names[NLIBS] = {"tessel", "oneDNN", "OpenBLAS"};

/* ---- the three calls ---- */

static int32_t run_tessel(void *ctx) {
  problem *p = ctx;
  void *pa = p->a, *pb = p->b, *pc = p->c[0];
  void *args[3] = {&pa, &pb, &pc};
  return tsl_kernel_call(p->kernel, args, 3) == TSL_OK ? 0 : 1;
}

static int32_t run_dnnl(void *ctx) {
  problem *p = ctx;
  dnnl_dim_t n = p->n;
  return dnnl_sgemm('N', 'N', n, n, n, 1.0f, p->a, n, p->b, n, 0.0f, p->c[1], n) == dnnl_success ? 0 : 1;
}

static int32_t run_openblas(void *ctx) {
  problem *p = ctx;
  int n = (int)p->n;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, p->a, n, p->b, n, 0.0f, p->c[2], n);
  return 0;
}

static tsl_timed_fn const lib_fns[NLIBS] = {run_tessel, run_dnnl, run_openblas};

static void set_threads(int t) {
  tsl_set_num_threads(t);
  omp_set_num_threads(t);
  openblas_set_num_threads(t);
}

/* ---- helpers ---- */

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

static float *alloc_matrix(int64_t n) {
  size_t bytes = ((size_t)(n * n) * sizeof(float) + 63) & ~(size_t)63;
  return aligned_alloc(64, bytes);
}

/* splitmix64 -> uniform [-1, 1) */
static void fill(float *x, int64_t count, uint64_t seed) {
  for (int64_t i = 0; i < count; i++) {
    uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    x[i] = (float)((double)(z >> 11) * 0x1p-53 * 2.0 - 1.0);
  }
}

static bool parse_list(const char *s, int64_t *out, int *n, int64_t lo, int64_t hi) {
  *n = 0;
  while (*s) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno || v < lo || v > hi || *n == MAX_LIST) return false;
    out[(*n)++] = v;
    s = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return false;
  }
  return *n > 0;
}

/* "mr=6,nr=16,..." over the template's defaults. */
static bool parse_knobs(const char *s, tsl_matmul_knobs *k) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", s);
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    char *eq = strchr(tok, '=');
    if (!eq) return false;
    *eq = '\0';
    char *end;
    long long v = strtoll(eq + 1, &end, 10);
    if (*end || end == eq + 1) return false;
    if (strcmp(tok, "mr") == 0) k->mr = v;
    else if (strcmp(tok, "nr") == 0) k->nr = v;
    else if (strcmp(tok, "vec") == 0) k->vec = v;
    else if (strcmp(tok, "kc") == 0) k->kc = v;
    else if (strcmp(tok, "mc") == 0) k->mc = v;
    else if (strcmp(tok, "nc") == 0) k->nc = v;
    else if (strcmp(tok, "ku") == 0) k->ku = v;
    else if (strcmp(tok, "pack_a") == 0) k->pack_a = v != 0;
    else if (strcmp(tok, "pack_b") == 0) k->pack_b = v != 0;
    else if (strcmp(tok, "parallel") == 0) k->parallel = v != 0;
    else return false;
  }
  return true;
}

/* The whole text of file path, malloc'd (caller frees); NULL with the error set. */
static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    (void)tsl_error(TSL_ERR_IO, "bench: cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *text = malloc(cap);
  for (size_t got; text && (got = fread(text + n, 1, cap - n - 1, f)) > 0;) {
    n += got;
    if (n + 1 == cap) {
      char *bigger = realloc(text, cap *= 2);
      if (!bigger) free(text);
      text = bigger;
    }
  }
  fclose(f);
  if (!text) (void)tsl_error(TSL_ERR_NOMEM, "bench: out of memory reading %s", path);
  else text[n] = 0;
  return text;
}

/* Builds the tessel kernel for an n x n x n matmul into m. */
static tsl_status build_tessel(tsl_jit *jit, tsl_module *m, const tsl_target *t, const opts *o, int64_t n,
                               const tsl_kernel **out) {
  int64_t sa[2] = {n, n}, sb[2] = {n, n};
  const int64_t *shapes[2] = {sa, sb};
  int ndims[2] = {2, 2};
  tsl_te_program *prog = NULL;
  tsl_status st = tsl_op_instantiate("matmul", 2, shapes, ndims, 0, NULL, &prog);
  if (st != TSL_OK) return st;
  tsl_matmul_knobs k = tsl_matmul_default_knobs(t, n, n, n);
  if (o->knobs && !parse_knobs(o->knobs, &k))
    return tsl_error(TSL_ERR_INVALID, "bench: cannot parse --knobs '%s'", o->knobs);
  tsl_schedule *s = NULL;
  if (o->schedule_file) {
    char *text = read_text(o->schedule_file);
    if (!text) return TSL_ERR_IO;
    st = tsl_schedule_from_text_file(prog, text, o->schedule_file, &s);
    free(text);
    if (st != TSL_OK) return st;
  } else if ((st = tsl_matmul_schedule(prog, t, &k, &s)) != TSL_OK) {
    return st;
  }
  if (o->print_schedule) {
    printf("# schedule for %lld x %lld x %lld\n", (long long)n, (long long)n, (long long)n);
    tsl_schedule_print(stdout, s);
  }
  char name[64];
  snprintf(name, sizeof name, "matmul_%lld", (long long)n);
  st = tsl_build(s, name, jit, m, NULL, NULL);
  if (st == TSL_OK) st = tsl_module_get_kernel(m, name, out);
  tsl_schedule_free(s);
  return st;
}

/* max |x - y| / max |y| over whole matrices */
static double rel_diff(const float *x, const float *y, int64_t count) {
  double num = 0.0, den = 0.0;
  for (int64_t i = 0; i < count; i++) {
    double d = fabs((double)x[i] - (double)y[i]);
    if (!(d <= num)) num = d; /* NaN propagates */
    if (fabs((double)y[i]) > den) den = fabs((double)y[i]);
  }
  return num / (den > 0 ? den : 1.0);
}

/* max over sampled entries of |C - exact| / (sum_k |a_ik b_kj|), exact in float64:
 * a backward-error-like figure that stays near K * 2^-24 for a correct sum. */
static double sampled_error(const problem *p, const float *c) {
  int64_t n = p->n;
  double worst = 0.0;
  for (int s = 0; s < 512; s++) {
    int64_t i = s == 0 ? 0 : s == 1 ? n - 1 : (int64_t)((uint64_t)s * 2654435761u % (uint64_t)n);
    int64_t j = s == 0 ? 0 : s == 1 ? n - 1 : (int64_t)((uint64_t)s * 40503u % (uint64_t)n);
    double exact = 0.0, mag = 0.0;
    for (int64_t k = 0; k < n; k++) {
      double prod = (double)p->a[i * n + k] * (double)p->b[k * n + j];
      exact += prod;
      mag += fabs(prod);
    }
    double e = fabs((double)c[i * n + j] - exact) / (mag > 0 ? mag : 1.0);
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

/* ---- the OpenBLAS SkylakeX child ---- */

static void openblas_skylakex(const opts *o) {
  printf("\nOpenBLAS with OPENBLAS_CORETYPE=SkylakeX (child process): ");
  if (!__builtin_cpu_supports("avx512f")) {
    printf("skipped: no AVX-512 on this CPU\n");
    return;
  }
  fflush(stdout);
  char sizes[256] = "", threads[256] = "", rounds[32], repeat[32], min_ms[32];
  for (int i = 0; i < o->nsizes; i++)
    snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s%lld", i ? "," : "", (long long)o->sizes[i]);
  for (int i = 0; i < o->nthreads; i++)
    snprintf(threads + strlen(threads), sizeof threads - strlen(threads), "%s%d", i ? "," : "", o->threads[i]);
  snprintf(rounds, sizeof rounds, "%d", o->rounds);
  snprintf(repeat, sizeof repeat, "%d", o->repeat);
  snprintf(min_ms, sizeof min_ms, "%g", o->min_ms);
  char *args[] = {"/proc/self/exe", "--openblas-child", "--sizes", sizes, "--threads", threads, "--rounds", rounds,
                  "--repeat", repeat, "--min-ms", min_ms, NULL};
  int nenv = 0;
  while (environ[nenv]) nenv++;
  char **env = calloc((size_t)nenv + 2, sizeof(char *));
  if (!env) return;
  int k = 0;
  for (int i = 0; i < nenv; i++)
    if (strncmp(environ[i], "OPENBLAS_CORETYPE=", 18) != 0) env[k++] = environ[i];
  env[k++] = "OPENBLAS_CORETYPE=SkylakeX";
  env[k] = NULL;
  pid_t pid;
  if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, env) != 0) {
    printf("could not start: %s\n", strerror(errno));
  } else {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) printf("child failed (status %d)\n", status);
  }
  free(env);
}

/* ---- main ---- */

static int usage(void) {
  fprintf(stderr, "usage: matmul [--sizes 256,512,1024,1000] [--threads 1,2] [--rounds R] [--repeat N] "
                  "[--min-ms MS] [--knobs k=v,...] [--no-peak] [--schedule] [--schedule-file FILE]\n");
  return 2;
}

static bool parse_args(int argc, char **argv, opts *o) {
  memset(o, 0, sizeof *o);
  int64_t def_sizes[] = {256, 512, 1024, 1000};
  o->nsizes = 4;
  memcpy(o->sizes, def_sizes, sizeof def_sizes);
  o->nthreads = 2;
  o->threads[0] = 1;
  o->threads[1] = 2;
  o->rounds = 3;
  o->repeat = 3;
  o->min_ms = 100.0;
  o->peak = true;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int64_t tmp[MAX_LIST];
    int n = 0;
    if (strcmp(a, "--no-peak") == 0) o->peak = false;
    else if (strcmp(a, "--schedule") == 0) o->print_schedule = true;
    else if (strcmp(a, "--openblas-child") == 0) o->openblas_child = true;
    else if (!v) return false;
    else if (strcmp(a, "--sizes") == 0 && parse_list(v, o->sizes, &o->nsizes, 1, 8192)) i++;
    else if (strcmp(a, "--threads") == 0 && parse_list(v, tmp, &n, 1, TSL_MAX_THREADS)) {
      o->nthreads = n;
      for (int k = 0; k < n; k++) o->threads[k] = (int)tmp[k];
      i++;
    } else if (strcmp(a, "--rounds") == 0 && (o->rounds = atoi(v)) >= 1) i++;
    else if (strcmp(a, "--repeat") == 0 && (o->repeat = atoi(v)) >= 1) i++;
    else if (strcmp(a, "--min-ms") == 0 && (o->min_ms = atof(v)) >= 0) i++;
    else if (strcmp(a, "--knobs") == 0) {
      o->knobs = v;
      i++;
    } else if (strcmp(a, "--schedule-file") == 0) {
      o->schedule_file = v;
      i++;
    } else return false;
  }
  return o->rounds * o->repeat <= MAX_SAMPLES / NLIBS;
}

int main(int argc, char **argv) {
  opts o;
  if (!parse_args(argc, argv, &o)) return usage();
  tsl_target target;
  if (tsl_target_parse("host", &target) != TSL_OK) {
    fprintf(stderr, "matmul: %s\n", tsl_last_error());
    return 1;
  }
  bool libs_on[NLIBS] = {!o.openblas_child, !o.openblas_child, true};
  const char *coretype = getenv("OPENBLAS_CORETYPE");
  char tbuf[256];
  if (!o.openblas_child) {
    printf("bench/matmul: fp32 C[M,N] = A[M,K] B[K,N], row-major, M = N = K\n");
    printf("target %s, %d-bit vectors; oneDNN %d.%d.%d (OpenMP, isa mask 0x%x); OpenBLAS %s core %s "
           "(OPENBLAS_CORETYPE %s)\n",
           tsl_target_str(&target, tbuf, sizeof tbuf), target.vector_bits, dnnl_version()->major,
           dnnl_version()->minor, dnnl_version()->patch, (unsigned)dnnl_get_effective_cpu_isa(),
           openblas_get_config(), openblas_get_corename(), coretype ? coretype : "unset");
    if (o.schedule_file) printf("tessel: the schedule in %s\n", o.schedule_file);
    printf("%d rounds x %d samples per library and configuration, each sample >= %.0f ms; "
           "GFLOP/s = 2*M*N*K / s / 1e9: median [best]\n",
           o.rounds, o.repeat, o.min_ms);
  } else {
    printf("OpenBLAS core %s\n", openblas_get_corename());
  }

  /* peaks per thread count */
  double peak[MAX_LIST] = {0};
  if (o.peak && !o.openblas_child) {
    for (int ti = 0; ti < o.nthreads; ti++) {
      tsl_peak_opts po = tsl_peak_opts_default();
      po.threads = o.threads[ti];
      po.triad_bytes = 0;
      po.repeat = 9;
      tsl_peak pk;
      if (tsl_peak_measure(&target, &po, &pk) != TSL_OK) {
        fprintf(stderr, "matmul: peak: %s\n", tsl_last_error());
        return 1;
      }
      peak[ti] = o.threads[ti] == 1 ? pk.fma_gflops_1_best : pk.fma_gflops_all_best;
      printf("fp32 FMA peak (tuner/peak.h, %d chains x %d lanes), %d thread%s: best sample %.1f GFLOP/s "
             "(median %.1f)\n",
             pk.chains, pk.lanes, o.threads[ti], o.threads[ti] > 1 ? "s" : "", peak[ti],
             o.threads[ti] == 1 ? pk.fma_gflops_1 : pk.fma_gflops_all);
    }
  }

  tsl_arena *arena = tsl_arena_new();
  tsl_arena *prev = tsl_arena_set_current(arena);
  tsl_jit *jit = NULL;
  tsl_module *mod = NULL;
  if (tsl_jit_new(&target, &jit) != TSL_OK || tsl_module_new(&mod) != TSL_OK) {
    fprintf(stderr, "matmul: %s\n", tsl_last_error());
    return 1;
  }
  printf("\n%6s %3s | %-22s | %-22s | %-22s | %-11s | %s\n", "size", "thr", "tessel GF/s (%peak)",
         "oneDNN GF/s (%peak)", "OpenBLAS GF/s (%peak)", "tessel/best", "max error (sampled fp64; pairwise)");
  int rc = 0;
  double *samples = malloc(sizeof(double) * MAX_SAMPLES);
  for (int si = 0; si < o.nsizes && samples; si++) {
    problem p = {0};
    p.n = o.sizes[si];
    int64_t count = p.n * p.n;
    p.a = alloc_matrix(p.n);
    p.b = alloc_matrix(p.n);
    for (int l = 0; l < NLIBS; l++) p.c[l] = alloc_matrix(p.n);
    if (!p.a || !p.b || !p.c[0] || !p.c[1] || !p.c[2]) {
      fprintf(stderr, "matmul: out of memory\n");
      return 1;
    }
    fill(p.a, count, 11 + (uint64_t)p.n);
    fill(p.b, count, 29 + (uint64_t)p.n);
    if (libs_on[0] && build_tessel(jit, mod, &target, &o, p.n, &p.kernel) != TSL_OK) {
      fprintf(stderr, "matmul: tessel build for %lld: %s\n", (long long)p.n, tsl_last_error());
      return 1;
    }
    for (int ti = 0; ti < o.nthreads; ti++) {
      set_threads(o.threads[ti]);
      int nsamp[NLIBS] = {0};
      double all[NLIBS][MAX_SAMPLES / NLIBS];
      for (int r = 0; r < o.rounds; r++) {
        for (int l = 0; l < NLIBS; l++) {
          if (!libs_on[l]) continue;
          tsl_time_opts to = tsl_time_opts_default();
          to.repeat = o.repeat;
          to.min_repeat_ms = o.min_ms;
          if (tsl_time_callback(lib_fns[l], &p, lib_names[l], &to, samples) != TSL_OK) {
            fprintf(stderr, "matmul: %s: %s\n", lib_names[l], tsl_last_error());
            return 1;
          }
          memcpy(&all[l][nsamp[l]], samples, sizeof(double) * (size_t)o.repeat);
          nsamp[l] += o.repeat;
          /* let the previous library's idle threads go to sleep before the next one */
          if (o.threads[ti] > 1) usleep(100000);
        }
      }
      double flops = 2.0 * (double)p.n * (double)p.n * (double)p.n;
      double med[NLIBS] = {0}, best[NLIBS] = {0};
      char cell[NLIBS][64];
      for (int l = 0; l < NLIBS; l++) {
        if (!libs_on[l]) {
          snprintf(cell[l], sizeof cell[l], "-");
          continue;
        }
        qsort(all[l], (size_t)nsamp[l], sizeof(double), cmp_double);
        double m = nsamp[l] % 2 ? all[l][nsamp[l] / 2] : 0.5 * (all[l][nsamp[l] / 2 - 1] + all[l][nsamp[l] / 2]);
        med[l] = flops / m * 1e-9;
        best[l] = flops / all[l][0] * 1e-9;
        if (peak[ti] > 0)
          snprintf(cell[l], sizeof cell[l], "%6.1f [%6.1f] (%3.0f%%)", med[l], best[l], 100.0 * med[l] / peak[ti]);
        else
          snprintf(cell[l], sizeof cell[l], "%6.1f [%6.1f]", med[l], best[l]);
      }
      double err[NLIBS] = {0}, pair = 0.0;
      for (int l = 0; l < NLIBS; l++)
        if (libs_on[l]) err[l] = sampled_error(&p, p.c[l]);
      if (libs_on[0]) {
        double d1 = rel_diff(p.c[0], p.c[1], count), d2 = rel_diff(p.c[0], p.c[2], count),
               d3 = rel_diff(p.c[1], p.c[2], count);
        pair = fmax(d1, fmax(d2, d3));
      }
      double worst = fmax(err[0], fmax(err[1], err[2]));
      bool ok = worst < 1e-5 && pair < 1e-4;
      if (!ok) rc = 1;
      double peer = fmax(med[1], med[2]);
      char ratio[32] = "-";
      if (libs_on[0] && peer > 0) snprintf(ratio, sizeof ratio, "%.2fx", med[0] / peer);
      printf("%6lld %3d | %-22s | %-22s | %-22s | %-11s | %.1e %.1e %.1e; %.1e %s\n", (long long)p.n,
             o.threads[ti], cell[0], cell[1], cell[2], ratio, err[0], err[1], err[2], pair, ok ? "ok" : "MISMATCH");
      fflush(stdout);
    }
    free(p.a);
    free(p.b);
    for (int l = 0; l < NLIBS; l++) free(p.c[l]);
  }
  free(samples);
  tsl_module_free(mod);
  tsl_jit_free(jit);
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  if (!o.openblas_child) openblas_skylakex(&o);
  tsl_thread_pool_shutdown();
  return rc;
}
