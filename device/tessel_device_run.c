/* tessel-device-run: the device side of ahead-of-time compilation. Loads a kernel
 * shared object made by tsl_aot_compile / `tunecli compile` through the runtime
 * (tsl_module_load_so, which refuses an object compiled for CPU features this machine
 * lacks), runs one kernel once on buffers read from files or generated from a seed, and
 * writes the output buffers to files. Built for AArch64 with cross/ and run under
 * qemu-aarch64 on a workstation, or natively.
 *
 *   tessel-device-run [--threads N] LIB.so KERNEL ARG...
 *   tessel-device-run --list LIB.so
 *
 * One ARG per kernel argument, in order:
 *   in:PATH            a buffer holding the bytes of file PATH
 *   seed:S:COUNT       COUNT float32 values uniform in [-1, 1) from seed S (splitmix64:
 *                      value = (next() >> 40) * 2^-24 * 2 - 1)
 *   out:PATH:BYTES     a buffer of BYTES zero bytes, written to PATH after the run
 *   i32:V  i64:V       a scalar (f32:V, f64:V too when the runtime has libffi)
 * Buffers are 64-byte aligned, as the kernel ABI requires.
 *
 * Exit status: 0 success; 1 a load, run or file error (message on stderr, e.g. the
 * loader's refusal naming a missing CPU feature); 2 a usage error. The program links
 * the runtime and exports its symbols (-rdynamic) so the object's references to
 * tsl_parallel_for / tsl_kernel_alloc / tsl_kernel_free resolve here.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/module.h"
#include "runtime/parallel.h"
#include "tessel/runtime.h"

/* Keeps the runtime's entry points in the executable for the loaded object. */
void *const tsl_device_exports[] = {(void *)tsl_parallel_for, (void *)tsl_kernel_alloc, (void *)tsl_kernel_free};

typedef struct arg {
  void *value_ptr;  /* what tsl_kernel_call receives for this argument */
  void *buf;        /* buffer data (PTR arguments) */
  size_t bytes;
  const char *out;  /* output file, or NULL */
  union {
    int32_t i32;
    int64_t i64;
    float f32;
    double f64;
  } scalar;
} arg;

static int usage(void) {
  fprintf(stderr,
          "usage: tessel-device-run [--threads N] LIB.so KERNEL ARG...\n"
          "       tessel-device-run --list LIB.so\n"
          "ARG: in:PATH | seed:S:COUNT | out:PATH:BYTES | i32:V | i64:V | f32:V | f64:V\n");
  return 2;
}

static void *alloc_buf(size_t bytes) {
  size_t rounded = (bytes + 63) & ~(size_t)63;
  void *p = aligned_alloc(64, rounded ? rounded : 64);
  if (p) memset(p, 0, rounded ? rounded : 64);
  return p;
}

static int parse_u64(const char *s, uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || end == s || *end) return -1;
  *out = v;
  return 0;
}

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static int read_file(const char *path, arg *a) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "tessel-device-run: %s: %s\n", path, strerror(errno));
    return -1;
  }
  int rc = -1;
  if (fseek(f, 0, SEEK_END) == 0) {
    long n = ftell(f);
    if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) {
      a->bytes = (size_t)n;
      a->buf = alloc_buf(a->bytes);
      if (a->buf && fread(a->buf, 1, a->bytes, f) == a->bytes) rc = 0;
    }
  }
  if (rc) fprintf(stderr, "tessel-device-run: cannot read %s\n", path);
  fclose(f);
  return rc;
}

/* Parses one ARG; returns 0, -1 (file error, reported) or -2 (usage error, reported). */
static int parse_arg(const char *s, arg *a) {
  memset(a, 0, sizeof *a);
  if (strncmp(s, "in:", 3) == 0) {
    if (read_file(s + 3, a)) return -1;
  } else if (strncmp(s, "seed:", 5) == 0 || strncmp(s, "out:", 4) == 0) {
    int is_seed = s[0] == 's';
    const char *body = s + (is_seed ? 5 : 4);
    const char *colon = strrchr(body, ':');
    uint64_t v = 0;
    if (!colon || colon == body || parse_u64(colon + 1, &v) || v > ((uint64_t)1 << 34)) {
      fprintf(stderr, "tessel-device-run: bad argument '%s'\n", s);
      return -2;
    }
    a->bytes = is_seed ? (size_t)v * sizeof(float) : (size_t)v;
    a->buf = alloc_buf(a->bytes);
    if (!a->buf) {
      fprintf(stderr, "tessel-device-run: out of memory for '%s'\n", s);
      return -1;
    }
    if (is_seed) {
      uint64_t seed = 0;
      char num[32];
      size_t len = (size_t)(colon - body);
      if (len >= sizeof num) return fprintf(stderr, "tessel-device-run: bad seed in '%s'\n", s), -2;
      memcpy(num, body, len);
      num[len] = '\0';
      if (parse_u64(num, &seed)) return fprintf(stderr, "tessel-device-run: bad seed in '%s'\n", s), -2;
      float *x = a->buf;
      for (uint64_t i = 0; i < v; i++) x[i] = (float)(splitmix64(&seed) >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
    } else {
      size_t len = (size_t)(colon - body);
      char *path = malloc(len + 1);
      if (!path) return fprintf(stderr, "tessel-device-run: out of memory\n"), -1;
      memcpy(path, body, len);
      path[len] = '\0';
      a->out = path;
    }
  } else {
    char *end = NULL;
    const char *v = strchr(s, ':');
    if (!v || !v[1]) return fprintf(stderr, "tessel-device-run: bad argument '%s'\n", s), -2;
    v++;
    errno = 0;
    if (strncmp(s, "i32:", 4) == 0) a->scalar.i32 = (int32_t)strtol(v, &end, 0);
    else if (strncmp(s, "i64:", 4) == 0) a->scalar.i64 = (int64_t)strtoll(v, &end, 0);
    else if (strncmp(s, "f32:", 4) == 0) a->scalar.f32 = strtof(v, &end);
    else if (strncmp(s, "f64:", 4) == 0) a->scalar.f64 = strtod(v, &end);
    else return fprintf(stderr, "tessel-device-run: unknown argument kind in '%s'\n", s), -2;
    if (errno || *end) return fprintf(stderr, "tessel-device-run: bad number in '%s'\n", s), -2;
    a->value_ptr = &a->scalar;
    return 0;
  }
  a->value_ptr = &a->buf;
  return 0;
}

static int list_kernels(const char *so) {
  tsl_module *m = NULL;
  if (tsl_module_load_so(so, &m) != TSL_OK) {
    fprintf(stderr, "tessel-device-run: %s\n", tsl_last_error());
    return 1;
  }
  for (int i = 0; i < tsl_module_num_kernels(m); i++) {
    const tsl_kernel *k = tsl_module_kernel_at(m, i);
    const tsl_kernel_sig *sig = tsl_kernel_signature(k);
    printf("%s(", tsl_kernel_name(k));
    for (int a = 0; a < sig->nargs; a++) printf("%s%s", a ? ", " : "", tsl_arg_type_str(sig->args[a]));
    printf(")\n");
  }
  tsl_module_free(m);
  return 0;
}

static int write_outputs(const arg *args, int n) {
  for (int i = 0; i < n; i++) {
    if (!args[i].out) continue;
    FILE *f = fopen(args[i].out, "wb");
    int ok = f && fwrite(args[i].buf, 1, args[i].bytes, f) == args[i].bytes;
    if (f && fclose(f) != 0) ok = 0;
    if (!ok) {
      fprintf(stderr, "tessel-device-run: cannot write %s\n", args[i].out);
      return 1;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  int i = 1;
  if (argc == 3 && strcmp(argv[1], "--list") == 0) return list_kernels(argv[2]);
  if (i + 1 < argc && strcmp(argv[i], "--threads") == 0) {
    uint64_t t = 0;
    if (parse_u64(argv[i + 1], &t) || tsl_set_num_threads((int)t) != TSL_OK) return usage();
    i += 2;
  }
  if (argc - i < 2) return usage();
  const char *so = argv[i], *name = argv[i + 1];
  int nargs = argc - i - 2;
  if (nargs > TSL_MAX_KERNEL_ARGS) return usage();
  arg args[TSL_MAX_KERNEL_ARGS];
  void *values[TSL_MAX_KERNEL_ARGS];
  int parsed = 0, rc = 0;
  for (; parsed < nargs; parsed++) {
    int r = parse_arg(argv[i + 2 + parsed], &args[parsed]);
    if (r) {
      rc = r == -2 ? 2 : 1;
      break;
    }
    values[parsed] = args[parsed].value_ptr;
  }
  tsl_module *m = NULL;
  const tsl_kernel *k = NULL;
  if (rc == 0 && (tsl_module_load_so(so, &m) != TSL_OK || tsl_module_get_kernel(m, name, &k) != TSL_OK ||
                  tsl_kernel_call(k, values, nargs) != TSL_OK)) {
    fprintf(stderr, "tessel-device-run: %s\n", tsl_last_error());
    rc = 1;
  }
  if (rc == 0) rc = write_outputs(args, nargs);
  tsl_module_free(m);
  int touched = parsed < nargs ? parsed + 1 : parsed; /* a failed parse_arg may hold a buffer */
  for (int a = 0; a < touched; a++) {
    free(args[a].buf);
    free((void *)(uintptr_t)args[a].out);
  }
  tsl_thread_pool_shutdown();
  return rc;
}
