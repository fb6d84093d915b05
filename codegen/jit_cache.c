/* The on-disk JIT object cache (jit_cache.h). */
#include "codegen/jit_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <llvm-c/BitWriter.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/machine.h"
#include "tsl_config.h"

#define CACHE_SUBDIR "jit-v1"
#define CACHE_MAGIC "TSLJITC1"
/* level 1 (codegen/build.h): kernels by schedule, before lowering */
#define KERNEL_SUBDIR "kernel-v1"
#define KERNEL_MAGIC "TSLKRNL1"

typedef struct entry_header {
  char magic[8];
  uint64_t key[2];
  uint64_t size;     /* object bytes after the header */
  uint64_t checksum; /* of the object bytes */
} entry_header;

static atomic_int disabled;
static atomic_long n_hits, n_misses, n_corrupt, n_stores;
static atomic_long k_hits, k_misses, k_corrupt, k_stores;

bool tsl_jit_cache_enabled(void) {
  if (atomic_load(&disabled)) return false;
  const char *e = getenv("TSL_CACHE");
  return !(e && strcmp(e, "0") == 0);
}

void tsl_jit_cache_set_enabled(bool on) { atomic_store(&disabled, on ? 0 : 1); }

void tsl_jit_cache_get_stats(tsl_jit_cache_stats *out) {
  out->hits = atomic_load(&n_hits);
  out->misses = atomic_load(&n_misses);
  out->corrupt = atomic_load(&n_corrupt);
  out->stores = atomic_load(&n_stores);
  out->kernel_hits = atomic_load(&k_hits);
  out->kernel_misses = atomic_load(&k_misses);
  out->kernel_corrupt = atomic_load(&k_corrupt);
  out->kernel_stores = atomic_load(&k_stores);
}

void tsl_jit_cache_reset_stats(void) {
  atomic_store(&n_hits, 0);
  atomic_store(&n_misses, 0);
  atomic_store(&n_corrupt, 0);
  atomic_store(&n_stores, 0);
  atomic_store(&k_hits, 0);
  atomic_store(&k_misses, 0);
  atomic_store(&k_corrupt, 0);
  atomic_store(&k_stores, 0);
}

tsl_status tsl_jit_cache_dir(char *buf, size_t n) {
  const char *d = getenv("TSL_CACHE_DIR");
  int k;
  if (d && *d) {
    k = snprintf(buf, n, "%s", d);
  } else if ((d = getenv("XDG_CACHE_HOME")) && *d) {
    k = snprintf(buf, n, "%s/tessel", d);
  } else if ((d = getenv("HOME")) && *d) {
    k = snprintf(buf, n, "%s/.cache/tessel", d);
  } else {
    return tsl_error(TSL_ERR_NOT_FOUND, "jit cache: no TSL_CACHE_DIR, XDG_CACHE_HOME or HOME");
  }
  if (k < 0 || (size_t)k >= n) return tsl_error(TSL_ERR_INVALID, "jit cache: directory path too long");
  return TSL_OK;
}

char *tsl_jit_cache_context(const tsl_target *t) {
  char ts[512];
  unsigned ma = 0, mi = 0, pa = 0;
  LLVMGetVersion(&ma, &mi, &pa);
  char *hcpu = LLVMGetHostCPUName(), *hfeat = LLVMGetHostCPUFeatures();
  const char *fmt = "format=" CACHE_SUBDIR ";tessel=%s;llvm=%u.%u.%u;target=%s;triple=%s;cpu=%s;features=%s;"
                    "vector_bits=%d;host_cpu=%s;host_features=%s";
  tsl_target_str(t, ts, sizeof ts);
  int n = snprintf(NULL, 0, fmt, TSL_VERSION, ma, mi, pa, ts, t->triple, t->cpu, t->features, t->vector_bits,
                   hcpu ? hcpu : "", hfeat ? hfeat : "");
  char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (s)
    snprintf(s, (size_t)n + 1, fmt, TSL_VERSION, ma, mi, pa, ts, t->triple, t->cpu, t->features, t->vector_bits,
             hcpu ? hcpu : "", hfeat ? hfeat : "");
  LLVMDisposeMessage(hcpu);
  LLVMDisposeMessage(hfeat);
  return s;
}

/* Two unrelated 64-bit hashes (FNV-1a; a multiply-rotate hash with its own
 * constants): an accidental collision of both is out of reach. */
typedef struct hasher {
  uint64_t a, b;
} hasher;

static void hash_bytes(hasher *h, const unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    h->a = (h->a ^ p[i]) * 1099511628211ull;
    uint64_t x = h->b ^ ((uint64_t)p[i] * 0x9E3779B97F4A7C15ull);
    h->b = ((x << 31) | (x >> 33)) * 0xC2B2AE3D27D4EB4Full;
  }
}

static uint64_t finish(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

tsl_jit_cache_key tsl_jit_cache_key_of(const void *ir, size_t n, const char *ctx) {
  hasher h = {1469598103934665603ull, 0x27D4EB2F165667C5ull};
  static const unsigned char sep[2] = {0, 0xff};
  hash_bytes(&h, (const unsigned char *)ctx, strlen(ctx));
  hash_bytes(&h, sep, sizeof sep);
  hash_bytes(&h, ir, n);
  tsl_jit_cache_key k = {{finish(h.a), finish(h.b ^ h.a)}};
  return k;
}

static uint64_t checksum(const void *p, size_t n) {
  hasher h = {1469598103934665603ull, 0x165667B19E3779F9ull};
  hash_bytes(&h, p, n);
  return finish(h.a) ^ h.b;
}

static tsl_status entry_path(const tsl_jit_cache_key *k, const char *subdir, const char *ext, char *buf, size_t n) {
  char dir[4096];
  tsl_status st = tsl_jit_cache_dir(dir, sizeof dir);
  if (st != TSL_OK) return st;
  int w = snprintf(buf, n, "%s/%s/%016llx%016llx.%s", dir, subdir, (unsigned long long)k->h[0],
                   (unsigned long long)k->h[1], ext);
  if (w < 0 || (size_t)w >= n) return tsl_error(TSL_ERR_INVALID, "jit cache: entry path too long");
  return TSL_OK;
}

tsl_status tsl_jit_cache_path(const tsl_jit_cache_key *k, char *buf, size_t n) {
  return entry_path(k, CACHE_SUBDIR, "o", buf, n);
}

tsl_status tsl_jit_cache_kernel_path(const tsl_jit_cache_key *k, char *buf, size_t n) {
  return entry_path(k, KERNEL_SUBDIR, "kernel", buf, n);
}

bool tsl_jit_cache_make_parent_dirs(const char *path) {
  char p[4400];
  size_t len = strlen(path);
  if (len >= sizeof p) return false;
  memcpy(p, path, len + 1);
  char *slash = strrchr(p, '/');
  if (!slash) return true;
  *slash = '\0';
  for (char *c = p + 1; *c; c++)
    if (*c == '/') {
      *c = '\0';
      if (mkdir(p, 0755) != 0 && errno != EEXIST) return false;
      *c = '/';
    }
  return mkdir(p, 0755) == 0 || errno == EEXIST;
}

static bool read_all(int fd, void *buf, size_t n) {
  char *p = buf;
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= (size_t)r;
  }
  return true;
}

static bool write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

static void corrupt_entry(const char *path, const char *why, atomic_long *counter) {
  atomic_fetch_add(counter, 1);
  fprintf(stderr, "tessel: warning: JIT cache entry %s is corrupt (%s); removing it and recompiling\n", path, why);
  unlink(path);
}

/* The object of entry `path` with key k (malloc'd into *data), or false: no entry, or
 * a corrupt one (warned about and removed). */
static bool load_entry(const char *path, const char *magic, const tsl_jit_cache_key *k, void **data, size_t *size,
                       atomic_long *corrupt) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat sb;
  entry_header h;
  const char *why = NULL;
  void *buf = NULL;
  if (fstat(fd, &sb) != 0 || (size_t)sb.st_size < sizeof h) why = "shorter than its header";
  else if (!read_all(fd, &h, sizeof h)) why = "unreadable header";
  else if (memcmp(h.magic, magic, sizeof h.magic) != 0) why = "bad magic";
  else if (h.key[0] != k->h[0] || h.key[1] != k->h[1]) why = "header names another key";
  else if (h.size != (uint64_t)sb.st_size - sizeof h || h.size == 0) why = "size does not match the file";
  else if (!(buf = malloc((size_t)h.size))) why = NULL;
  else if (!read_all(fd, buf, (size_t)h.size)) why = "truncated object";
  else if (checksum(buf, (size_t)h.size) != h.checksum) why = "checksum mismatch";
  close(fd);
  if (why || !buf) {
    free(buf);
    if (why) corrupt_entry(path, why, corrupt);
    return false;
  }
  *data = buf;
  *size = (size_t)h.size;
  return true;
}

static void store_entry(const char *path, const char *magic, const tsl_jit_cache_key *k, const void *data, size_t size,
                        atomic_long *stores) {
  static atomic_int warned;
  static atomic_long serial;
  if (!tsl_jit_cache_make_parent_dirs(path)) goto fail;
  char tmp[4400];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%ld", path, (long)getpid(), atomic_fetch_add(&serial, 1));
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) goto fail;
  entry_header h;
  memcpy(h.magic, magic, sizeof h.magic);
  h.key[0] = k->h[0];
  h.key[1] = k->h[1];
  h.size = size;
  h.checksum = checksum(data, size);
  bool ok = write_all(fd, &h, sizeof h) && write_all(fd, data, size);
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    unlink(tmp);
    goto fail;
  }
  atomic_fetch_add(stores, 1);
  return;
fail:
  if (!atomic_exchange(&warned, 1))
    fprintf(stderr, "tessel: warning: cannot write the JIT cache entry %s (%s); compiling without the cache\n", path,
            strerror(errno));
}

tsl_status tsl_jit_cache_object(LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *ctx, const char *what,
                                LLVMMemoryBufferRef *obj, bool *hit) {
  *obj = NULL;
  *hit = false;
  /* bitcode: the module exactly, and far cheaper to produce than the IR text */
  LLVMMemoryBufferRef bc = LLVMWriteBitcodeToMemoryBuffer(mod);
  if (!bc) return tsl_error(TSL_ERR_NOMEM, "jit cache: out of memory");
  tsl_jit_cache_key k = tsl_jit_cache_key_of(LLVMGetBufferStart(bc), LLVMGetBufferSize(bc), ctx);
  LLVMDisposeMemoryBuffer(bc);
  char path[4300];
  bool have_path = tsl_jit_cache_path(&k, path, sizeof path) == TSL_OK;
  tsl_clear_error();
  void *data = NULL;
  size_t size = 0;
  if (have_path && load_entry(path, CACHE_MAGIC, &k, &data, &size, &n_corrupt)) {
    *obj = LLVMCreateMemoryBufferWithMemoryRangeCopy(data, size, what);
    free(data);
    if (!*obj) return tsl_error(TSL_ERR_NOMEM, "jit cache: out of memory");
    atomic_fetch_add(&n_hits, 1);
    *hit = true;
    return TSL_OK;
  }
  atomic_fetch_add(&n_misses, 1);
  tsl_status st = tsl_codegen_optimize(mod, tm, what);
  if (st != TSL_OK) return st;
  char *msg = NULL;
  LLVMMemoryBufferRef buf = NULL;
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, mod, LLVMObjectFile, &msg, &buf)) {
    st = tsl_error(TSL_ERR_CODEGEN, "%s: machine code failed: %s", what, msg ? msg : "");
    LLVMDisposeMessage(msg);
    return st;
  }
  if (have_path) store_entry(path, CACHE_MAGIC, &k, LLVMGetBufferStart(buf), LLVMGetBufferSize(buf), &n_stores);
  *obj = buf;
  return TSL_OK;
}

/* ---- level 1: kernel entries (codegen/build.h) ------------------------------------
 * Payload after the header: u32 symbol length, the symbol, u32 nargs, nargs u32
 * argument types (tsl_arg_type), u64 object size, the object. */

static void put(unsigned char **p, const void *src, size_t n) {
  memcpy(*p, src, n);
  *p += n;
}

void tsl_jit_cache_kernel_store(const tsl_jit_cache_key *k, const tsl_jit_object *obj) {
  size_t symlen = strnlen(obj->symbol, sizeof obj->symbol);
  if (!obj->data || !obj->size || symlen == 0 || symlen >= sizeof obj->symbol || obj->sig.nargs < 0 ||
      obj->sig.nargs > TSL_MAX_KERNEL_ARGS)
    return;
  size_t n = 4 + symlen + 4 + 4 * (size_t)obj->sig.nargs + 8 + obj->size;
  unsigned char *buf = malloc(n), *p = buf;
  if (!buf) return;
  uint32_t u = (uint32_t)symlen;
  put(&p, &u, 4);
  put(&p, obj->symbol, symlen);
  u = (uint32_t)obj->sig.nargs;
  put(&p, &u, 4);
  for (int i = 0; i < obj->sig.nargs; i++) {
    u = (uint32_t)obj->sig.args[i];
    put(&p, &u, 4);
  }
  uint64_t sz = obj->size;
  put(&p, &sz, 8);
  put(&p, obj->data, obj->size);
  char path[4300];
  if (tsl_jit_cache_kernel_path(k, path, sizeof path) == TSL_OK)
    store_entry(path, KERNEL_MAGIC, k, buf, n, &k_stores);
  tsl_clear_error();
  free(buf);
}

/* Reads n bytes at *p of a payload ending at end; false past the end. */
static bool take(const unsigned char **p, const unsigned char *end, void *dst, size_t n) {
  if ((size_t)(end - *p) < n) return false;
  memcpy(dst, *p, n);
  *p += n;
  return true;
}

/* The payload parsed into obj, or the reason it does not parse. */
static const char *parse_kernel(const unsigned char *p, size_t n, tsl_jit_object *obj) {
  const unsigned char *end = p + n;
  uint32_t u;
  if (!take(&p, end, &u, 4) || u == 0 || u >= sizeof obj->symbol) return "bad symbol length";
  if (!take(&p, end, obj->symbol, u)) return "truncated symbol";
  obj->symbol[u] = '\0';
  if (strlen(obj->symbol) != u) return "NUL in the symbol";
  if (!take(&p, end, &u, 4) || u > TSL_MAX_KERNEL_ARGS) return "bad argument count";
  obj->sig.nargs = (int)u;
  for (int i = 0; i < obj->sig.nargs; i++) {
    if (!take(&p, end, &u, 4) || u > TSL_ARG_F64) return "bad argument type";
    obj->sig.args[i] = (tsl_arg_type)u;
  }
  uint64_t sz;
  if (!take(&p, end, &sz, 8) || sz == 0 || sz != (uint64_t)(end - p)) return "object size does not match";
  obj->data = malloc((size_t)sz);
  if (!obj->data) return NULL;
  memcpy(obj->data, p, (size_t)sz);
  obj->size = (size_t)sz;
  return NULL;
}

bool tsl_jit_cache_kernel_load(const tsl_jit_cache_key *k, tsl_jit_object *obj) {
  memset(obj, 0, sizeof *obj);
  char path[4300];
  if (tsl_jit_cache_kernel_path(k, path, sizeof path) != TSL_OK) {
    tsl_clear_error();
    return false;
  }
  void *data = NULL;
  size_t size = 0;
  if (!load_entry(path, KERNEL_MAGIC, k, &data, &size, &k_corrupt)) return false;
  const char *why = parse_kernel(data, size, obj);
  free(data);
  if (why) {
    /* the checksum held, so this is an entry written by a different layout */
    corrupt_entry(path, why, &k_corrupt);
    tsl_jit_object_free(obj);
    return false;
  }
  return obj->data != NULL;
}

void tsl_jit_cache_count_kernel(bool hit) { atomic_fetch_add(hit ? &k_hits : &k_misses, 1); }
