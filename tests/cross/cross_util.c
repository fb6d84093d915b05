/* Helpers of the cross suite (see cross_util.h). */
#include "cross_util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/build.h"
#include "cross/cross_paths.h"
#include "ref/ref_ops.h"
#include "schedule/lower.h"

extern char **environ;

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void *alloc_zero(size_t bytes) {
  size_t r = (bytes + 63) & ~(size_t)63;
  void *p = aligned_alloc(64, r ? r : 64);
  if (p) memset(p, 0, r ? r : 64);
  return p;
}

bool cross_op_init(const tsl_op_info *info, uint64_t seed, cross_op *out) {
  memset(out, 0, sizeof *out);
  out->info = info;
  const tsl_op_example *ex = &info->example;
  tsl_te_program *p = NULL;
  if (tsl_op_instantiate(info->name, ex->ninputs, ex->shapes, ex->ndims, ex->nparams, ex->params, &p) != TSL_OK) {
    printf("\n  %s: instantiate: %s\n", info->name, tsl_last_error());
    return false;
  }
  if (p->ninputs + p->noutputs > CROSS_MAX_BUFS) {
    printf("\n  %s: %d tensors, the suite handles %d\n", info->name, p->ninputs + p->noutputs, CROSS_MAX_BUFS);
    return false;
  }
  out->prog = p;
  out->ninputs = p->ninputs;
  out->nbufs = p->ninputs + p->noutputs;
  for (int i = 0; i < out->nbufs; i++) {
    const tsl_buffer *b = (i < p->ninputs ? p->inputs[i] : p->outputs[i - p->ninputs])->buf;
    out->dtype[i] = b->dtype;
    out->bytes[i] = (size_t)tsl_buffer_numel(b) * tsl_type_bytes(b->dtype);
    out->bufs[i] = alloc_zero(out->bytes[i]);
    if (!out->bufs[i]) abort();
    if (i >= p->ninputs) continue;
    int64_t n = tsl_buffer_numel(b);
    bool variance = b->name && (strcmp(b->name, "var") == 0 || strcmp(b->name, "variance") == 0);
    if (tsl_type_is_float(b->dtype) && b->dtype.bits == 32) {
      /* a variance is never negative (a batch norm's sqrt would give NaN everywhere) */
      ref_fill_uniform(out->bufs[i], n, seed + (uint64_t)i * 7919u, variance ? 0.5f : -1.0f, variance ? 1.5f : 1.0f);
    } else {
      uint64_t s = seed + (uint64_t)i;
      unsigned char *c = out->bufs[i];
      for (size_t k = 0; k < out->bytes[i]; k++) c[k] = (unsigned char)splitmix(&s);
    }
  }
  return true;
}

void cross_op_free(cross_op *op) {
  for (int i = 0; i < op->nbufs; i++) free(op->bufs[i]);
  memset(op, 0, sizeof *op);
}

tsl_status cross_lower(const cross_op *op, const tsl_target *t, const char *name, tsl_func **out) {
  tsl_schedule *s = NULL;
  tsl_status st = tsl_schedule_create(op->prog, &s);
  if (st != TSL_OK) return st;
  tsl_lower_options o = tsl_lower_options_default();
  o.vector_bits = t->vector_bits;
  st = tsl_lower_with(s, name, &o, out);
  tsl_schedule_free(s);
  return st;
}

tsl_status cross_run_host(const cross_op *op, tsl_jit *jit, void **outs) {
  tsl_schedule *s = NULL;
  tsl_module *m = NULL;
  const tsl_kernel *k = NULL;
  tsl_status st = tsl_schedule_create(op->prog, &s);
  if (st == TSL_OK) st = tsl_module_new(&m);
  if (st == TSL_OK) st = tsl_build(s, "cross_host", jit, m, NULL, NULL);
  if (st == TSL_OK) st = tsl_module_get_kernel(m, "cross_host", &k);
  if (st == TSL_OK) {
    void *ptrs[CROSS_MAX_BUFS], *args[CROSS_MAX_BUFS];
    for (int i = 0; i < op->nbufs; i++) {
      ptrs[i] = i < op->ninputs ? op->bufs[i] : outs[i - op->ninputs];
      args[i] = &ptrs[i];
    }
    st = tsl_kernel_call(k, args, op->nbufs);
  }
  tsl_module_free(m);
  tsl_schedule_free(s);
  return st;
}

/* argv[0] in PATH (or a path) that exists and is executable. */
static const char *find_in_path(const char *prog, char *buf, size_t n) {
  if (strchr(prog, '/')) return access(prog, X_OK) == 0 ? prog : NULL;
  const char *path = getenv("PATH");
  if (!path) path = "/usr/bin:/bin";
  while (*path) {
    const char *end = strchr(path, ':');
    size_t len = end ? (size_t)(end - path) : strlen(path);
    snprintf(buf, n, "%.*s/%s", (int)len, path, prog);
    if (len && access(buf, X_OK) == 0) return buf;
    path += len;
    if (*path == ':') path++;
  }
  return NULL;
}

const char *cross_qemu(void) {
  static char buf[4096];
  return find_in_path("qemu-aarch64", buf, sizeof buf);
}

const char *cross_device_run(void) {
  const char *p = TSL_CROSS_DEVICE_RUN;
  return p[0] && access(p, X_OK) == 0 ? p : NULL;
}

bool cross_device_app_ready(void) {
  const char *app = TSL_CROSS_DEVICE_APP;
  if (cross_qemu() && app[0] && access(app, X_OK) == 0) return true;
  printf("\n  skipped: %s missing\n", !cross_qemu() ? "qemu-aarch64 (Debian qemu-user)" : "the aarch64 tessel-device-app");
  return false;
}

static char scratch[64];

const char *cross_scratch(void) {
  if (!scratch[0]) {
    snprintf(scratch, sizeof scratch, "/tmp/tessel_cross_XXXXXX");
    if (!mkdtemp(scratch)) abort(); /* /tmp unusable: nothing in this suite can run */
  }
  return scratch;
}

char *cross_path(char *buf, size_t n, const char *name) {
  snprintf(buf, n, "%s/%s", cross_scratch(), name);
  return buf;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

void cross_scratch_cleanup(void) {
  if (scratch[0]) nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  scratch[0] = '\0';
}

int cross_spawn(char *const argv[], const char *log_path) {
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) return -1;
  posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

void cross_read_text(const char *path, char *buf, size_t n) {
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  size_t got = fread(buf, 1, n - 1, f);
  buf[got] = '\0';
  fclose(f);
}

static bool write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, n, f) == n;
  return fclose(f) == 0 && ok;
}

static bool read_file(const char *path, void *data, size_t n) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  bool ok = fread(data, 1, n, f) == n && fgetc(f) == EOF;
  fclose(f);
  return ok;
}

int cross_run_device(const cross_op *op, const char *so_path, const char *kernel, const char *cpu, void **outs,
                     char *log, size_t n) {
  char args[CROSS_MAX_BUFS][600], files[CROSS_MAX_BUFS][512], logpath[512];
  char *argv[CROSS_MAX_BUFS + 10];
  int a = 0;
  argv[a++] = "qemu-aarch64";
  argv[a++] = "-cpu";
  argv[a++] = (char *)cpu;
  argv[a++] = "-L";
  argv[a++] = "/usr/aarch64-linux-gnu";
  argv[a++] = (char *)cross_device_run();
  argv[a++] = (char *)so_path;
  argv[a++] = (char *)kernel;
  for (int i = 0; i < op->nbufs; i++) {
    char name[64];
    snprintf(name, sizeof name, "%s.%d.bin", kernel, i);
    cross_path(files[i], sizeof files[i], name);
    if (i < op->ninputs) {
      if (!write_file(files[i], op->bufs[i], op->bytes[i])) return -1;
      snprintf(args[i], sizeof args[i], "in:%.500s", files[i]);
    } else {
      unlink(files[i]);
      snprintf(args[i], sizeof args[i], "out:%.500s:%zu", files[i], op->bytes[i]);
    }
    argv[a++] = args[i];
  }
  argv[a] = NULL;
  int rc = cross_spawn(argv, cross_path(logpath, sizeof logpath, "device.log"));
  cross_read_text(logpath, log, n);
  for (int i = op->ninputs; i < op->nbufs && rc == 0; i++)
    if (!read_file(files[i], outs[i - op->ninputs], op->bytes[i])) {
      snprintf(log, n, "output %d: %s missing or of the wrong size", i, files[i]);
      rc = -1;
    }
  for (int i = 0; i < op->nbufs; i++) unlink(files[i]);
  return rc;
}
