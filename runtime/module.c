/* Kernel tables, libffi calls and the AOT shared-object loader behind runtime/module.h.
 *
 * Built with -DTSL_NO_FFI (a device runtime where no libffi for the target exists, e.g.
 * Debian's cross toolchain without an arm64 multiarch libffi), kernels are called through
 * one cast to a function of TSL_NOFFI_MAX_ARGS integer-register arguments: on the SysV
 * x86-64 and AAPCS64 ABIs pointers, int32 and int64 arguments all travel in integer
 * registers then 8-byte stack slots, and surplus arguments are ignored by the callee,
 * so this is exact for signatures without float arguments (the only ones accepted). */
#include "runtime/module.h"

#include <dlfcn.h>
#include <elf.h>
#include <stdbool.h>
#include <errno.h>
#ifndef TSL_NO_FFI
#include <ffi.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

struct tsl_kernel {
  char *name;
  void *fn;
  tsl_kernel_sig sig;
#ifndef TSL_NO_FFI
  ffi_cif cif; /* prepared once in tsl_module_add_kernel; read-only afterwards */
  ffi_type *types[TSL_MAX_KERNEL_ARGS];
#endif
};

struct tsl_module {
  tsl_kernel **kernels; /* pointers, so kernels do not move when the table grows */
  int n, cap;
  void *owner;
  void (*release)(void *owner);
};

/* An AOT table longer than this is taken for garbage, not a module. */
#define MAX_AOT_KERNELS (1 << 20)

const char *tsl_arg_type_str(tsl_arg_type t) {
  switch (t) {
  case TSL_ARG_PTR: return "ptr";
  case TSL_ARG_I32: return "i32";
  case TSL_ARG_I64: return "i64";
  case TSL_ARG_F32: return "f32";
  case TSL_ARG_F64: return "f64";
  }
  return "invalid";
}

static bool known_arg_type(tsl_arg_type t) {
  switch (t) {
  case TSL_ARG_PTR:
  case TSL_ARG_I32:
  case TSL_ARG_I64:
  case TSL_ARG_F32:
  case TSL_ARG_F64: return true;
  }
  return false;
}

#ifndef TSL_NO_FFI
static ffi_type *ffi_type_of(tsl_arg_type t) {
  switch (t) {
  case TSL_ARG_PTR: return &ffi_type_pointer;
  case TSL_ARG_I32: return &ffi_type_sint32;
  case TSL_ARG_I64: return &ffi_type_sint64;
  case TSL_ARG_F32: return &ffi_type_float;
  case TSL_ARG_F64: return &ffi_type_double;
  }
  return NULL;
}
#endif

tsl_status tsl_module_new(tsl_module **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "tsl_module_new: NULL out");
  tsl_module *m = calloc(1, sizeof *m);
  if (!m) return tsl_error(TSL_ERR_NOMEM, "tsl_module_new: out of memory");
  *out = m;
  return TSL_OK;
}

void tsl_module_free(tsl_module *m) {
  if (!m) return;
  for (int i = 0; i < m->n; i++) {
    free(m->kernels[i]->name);
    free(m->kernels[i]);
  }
  free(m->kernels);
  void *owner = m->owner;
  void (*release)(void *) = m->release;
  free(m);
  if (release) release(owner);
}

void tsl_module_set_owner(tsl_module *m, void *owner, void (*release)(void *owner)) {
  if (!m) return;
  m->owner = owner;
  m->release = release;
}

static const tsl_kernel *find_kernel(const tsl_module *m, const char *name) {
  for (int i = 0; i < m->n; i++)
    if (strcmp(m->kernels[i]->name, name) == 0) return m->kernels[i];
  return NULL;
}

/* Checks a signature; `what` names the kernel in the message. */
static tsl_status check_sig(const char *where, const char *what, const tsl_kernel_sig *sig) {
  if (sig->nargs < 0 || sig->nargs > TSL_MAX_KERNEL_ARGS)
    return tsl_error(TSL_ERR_INVALID, "%s: kernel %s has %d arguments (allowed 0..%d)", where, what,
                     sig->nargs, TSL_MAX_KERNEL_ARGS);
  for (int i = 0; i < sig->nargs; i++)
    if (!known_arg_type(sig->args[i]))
      return tsl_error(TSL_ERR_INVALID, "%s: kernel %s argument %d has unknown type %d", where, what, i,
                       (int)sig->args[i]);
  return TSL_OK;
}

tsl_status tsl_module_add_kernel(tsl_module *m, const char *name, void *fn, const tsl_kernel_sig *sig) {
  const char *where = "tsl_module_add_kernel";
  if (!m || !name || !fn || !sig) return tsl_error(TSL_ERR_INVALID, "%s: NULL argument", where);
  if (!name[0]) return tsl_error(TSL_ERR_INVALID, "%s: empty kernel name", where);
  tsl_status st = check_sig(where, name, sig);
  if (st != TSL_OK) return st;
  if (find_kernel(m, name))
    return tsl_error(TSL_ERR_INVALID, "%s: the module already has a kernel named %s", where, name);
  if (m->n == m->cap) {
    int cap = m->cap ? m->cap * 2 : 8;
    tsl_kernel **k = realloc(m->kernels, (size_t)cap * sizeof *k);
    if (!k) return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", where);
    m->kernels = k;
    m->cap = cap;
  }
  tsl_kernel *k = calloc(1, sizeof *k);
  char *copy = strdup(name);
  if (!k || !copy) {
    free(k);
    free(copy);
    return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", where);
  }
  k->name = copy;
  k->fn = fn;
  k->sig = *sig;
#ifdef TSL_NO_FFI
  const char *why = sig->nargs > TSL_NOFFI_MAX_ARGS ? "more arguments than it can pass" : NULL;
  for (int i = 0; i < sig->nargs && !why; i++)
    if (sig->args[i] == TSL_ARG_F32 || sig->args[i] == TSL_ARG_F64) why = "a floating-point argument";
  if (why) {
    free(k->name);
    free(k);
    return tsl_error(TSL_ERR_UNSUPPORTED,
                     "%s: kernel %s has %s; this runtime is built without libffi and calls kernels of at "
                     "most %d pointer/i32/i64 arguments",
                     where, name, why, TSL_NOFFI_MAX_ARGS);
  }
#else
  for (int i = 0; i < sig->nargs; i++) k->types[i] = ffi_type_of(sig->args[i]);
  ffi_status fs = ffi_prep_cif(&k->cif, FFI_DEFAULT_ABI, (unsigned)sig->nargs, &ffi_type_sint32, k->types);
  if (fs != FFI_OK) {
    free(k->name);
    free(k);
    return tsl_error(TSL_ERR_RUNTIME, "%s: libffi cannot prepare a call to %s (status %d)", where, name, (int)fs);
  }
#endif
  m->kernels[m->n++] = k;
  return TSL_OK;
}

tsl_status tsl_module_get_kernel(const tsl_module *m, const char *name, const tsl_kernel **out) {
  if (!m || !name || !out) return tsl_error(TSL_ERR_INVALID, "tsl_module_get_kernel: NULL argument");
  const tsl_kernel *k = find_kernel(m, name);
  if (!k) return tsl_error(TSL_ERR_NOT_FOUND, "tsl_module_get_kernel: no kernel named %s in the module", name);
  *out = k;
  return TSL_OK;
}

int tsl_module_num_kernels(const tsl_module *m) { return m ? m->n : 0; }

const tsl_kernel *tsl_module_kernel_at(const tsl_module *m, int i) {
  return m && i >= 0 && i < m->n ? m->kernels[i] : NULL;
}

const tsl_kernel_sig *tsl_kernel_signature(const tsl_kernel *k) { return k ? &k->sig : NULL; }
void *tsl_kernel_fn(const tsl_kernel *k) { return k ? k->fn : NULL; }
const char *tsl_kernel_name(const tsl_kernel *k) { return k ? k->name : NULL; }

tsl_status tsl_kernel_call(const tsl_kernel *k, void *const *arg_values, int nargs) {
  const char *where = "tsl_kernel_call";
  if (!k) return tsl_error(TSL_ERR_INVALID, "%s: NULL kernel", where);
  if (nargs != k->sig.nargs)
    return tsl_error(TSL_ERR_INVALID, "%s: kernel %s takes %d arguments, got %d", where, k->name, k->sig.nargs,
                     nargs);
  if (nargs > 0 && !arg_values) return tsl_error(TSL_ERR_INVALID, "%s: kernel %s: NULL arg_values", where, k->name);
  for (int i = 0; i < nargs; i++)
    if (!arg_values[i])
      return tsl_error(TSL_ERR_INVALID, "%s: kernel %s: argument %d has no value", where, k->name, i);
#ifdef TSL_NO_FFI
  _Static_assert(TSL_NOFFI_MAX_ARGS == 16, "the cast below passes 16 arguments");
  uintptr_t a[TSL_NOFFI_MAX_ARGS] = {0};
  for (int i = 0; i < nargs; i++) {
    switch (k->sig.args[i]) {
    case TSL_ARG_PTR: a[i] = (uintptr_t) * (void *const *)arg_values[i]; break;
    case TSL_ARG_I32: a[i] = (uintptr_t)(int64_t) * (const int32_t *)arg_values[i]; break;
    case TSL_ARG_I64: a[i] = (uintptr_t) * (const int64_t *)arg_values[i]; break;
    default: abort(); /* tsl_module_add_kernel admitted only these */
    }
  }
  typedef int32_t (*int_fn)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t,
                            uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t,
                            uintptr_t, uintptr_t);
  int_fn fn = (int_fn)k->fn;
  int32_t code = fn(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
                    a[14], a[15]);
#else
  /* ffi_arg: libffi widens integer returns to a full register. */
  ffi_arg rc = 0;
  ffi_cif *cif = (ffi_cif *)(uintptr_t)&k->cif; /* ffi_call only reads the cif */
  ffi_call(cif, FFI_FN(k->fn), &rc, (void **)(uintptr_t)arg_values);
  int32_t code = (int32_t)rc;
#endif
  if (code != 0) return tsl_error(TSL_ERR_RUNTIME, "kernel %s returned %d", k->name, (int)code);
  return TSL_OK;
}

tsl_status tsl_kernel_call_tensors(const tsl_kernel *k, tsl_tensor *const *tensors, int n) {
  const char *where = "tsl_kernel_call_tensors";
  if (!k) return tsl_error(TSL_ERR_INVALID, "%s: NULL kernel", where);
  if (n != k->sig.nargs)
    return tsl_error(TSL_ERR_INVALID, "%s: kernel %s takes %d arguments, got %d tensors", where, k->name,
                     k->sig.nargs, n);
  if (n > 0 && !tensors) return tsl_error(TSL_ERR_INVALID, "%s: kernel %s: NULL tensors", where, k->name);
  void *values[TSL_MAX_KERNEL_ARGS];
  for (int i = 0; i < n; i++) {
    if (k->sig.args[i] != TSL_ARG_PTR)
      return tsl_error(TSL_ERR_INVALID, "%s: kernel %s argument %d is %s, not a tensor pointer", where, k->name, i,
                       tsl_arg_type_str(k->sig.args[i]));
    if (!tensors[i]) return tsl_error(TSL_ERR_INVALID, "%s: kernel %s: tensor %d is NULL", where, k->name, i);
    values[i] = &tensors[i]->data;
  }
  return tsl_kernel_call(k, values, n);
}

static void close_handle(void *handle) { dlclose(handle); }

#if defined(__x86_64__)
#define TSL_RUNTIME_ARCH "x86_64"
/* __builtin_cpu_supports takes only string literals, hence one row per feature. */
#define CPU_ROW(n) {n, __builtin_cpu_supports(n) != 0}
typedef struct cpu_row {
  const char *name;
  int has;
} cpu_row;
static int x86_has(const char *f, int *known) {
  __builtin_cpu_init();
  const cpu_row rows[] = {
      CPU_ROW("cmov"),        CPU_ROW("mmx"),          CPU_ROW("popcnt"),       CPU_ROW("sse"),
      CPU_ROW("sse2"),        CPU_ROW("sse3"),         CPU_ROW("ssse3"),        CPU_ROW("sse4.1"),
      CPU_ROW("sse4.2"),      CPU_ROW("avx"),          CPU_ROW("avx2"),         CPU_ROW("sse4a"),
      CPU_ROW("fma4"),        CPU_ROW("xop"),          CPU_ROW("fma"),          CPU_ROW("avx512f"),
      CPU_ROW("bmi"),         CPU_ROW("bmi2"),         CPU_ROW("aes"),          CPU_ROW("pclmul"),
      CPU_ROW("avx512vl"),    CPU_ROW("avx512bw"),     CPU_ROW("avx512dq"),     CPU_ROW("avx512cd"),
      CPU_ROW("avx512vbmi"),  CPU_ROW("avx512ifma"),   CPU_ROW("avx512vpopcntdq"), CPU_ROW("avx512vbmi2"),
      CPU_ROW("gfni"),        CPU_ROW("vpclmulqdq"),   CPU_ROW("avx512vnni"),   CPU_ROW("avx512bitalg"),
      CPU_ROW("avx512bf16"),  CPU_ROW("f16c"),         CPU_ROW("avx512fp16"),   CPU_ROW("avxvnni"),
  };
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (strcmp(rows[i].name, f) == 0) return rows[i].has;
  if (known) *known = 0;
  return 1;
}
#elif defined(__aarch64__)
#define TSL_RUNTIME_ARCH "aarch64"
#ifndef HWCAP_FP
#define HWCAP_FP (1UL << 0)
#endif
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1UL << 1)
#endif
#ifndef HWCAP_AES
#define HWCAP_AES (1UL << 3)
#endif
#ifndef HWCAP_SHA2
#define HWCAP_SHA2 (1UL << 6)
#endif
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1UL << 7)
#endif
#ifndef HWCAP_ATOMICS
#define HWCAP_ATOMICS (1UL << 8)
#endif
#ifndef HWCAP_FPHP
#define HWCAP_FPHP (1UL << 9)
#endif
#ifndef HWCAP_ASIMDHP
#define HWCAP_ASIMDHP (1UL << 10)
#endif
#ifndef HWCAP_ASIMDRDM
#define HWCAP_ASIMDRDM (1UL << 12)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1UL << 20)
#endif
#ifndef HWCAP_SVE
#define HWCAP_SVE (1UL << 22)
#endif
#ifndef HWCAP2_SVE2
#define HWCAP2_SVE2 (1UL << 1)
#endif
static int arm_has(const char *f, int *known) {
  static const struct {
    const char *name;
    unsigned long bits;
  } rows[] = {
      {"fp-armv8", HWCAP_FP},
      {"neon", HWCAP_ASIMD},
      {"aes", HWCAP_AES},
      {"sha2", HWCAP_SHA2},
      {"crc", HWCAP_CRC32},
      {"lse", HWCAP_ATOMICS},
      {"rdm", HWCAP_ASIMDRDM},
      {"fullfp16", HWCAP_FPHP | HWCAP_ASIMDHP},
      {"dotprod", HWCAP_ASIMDDP},
      {"v8.1a", HWCAP_ATOMICS | HWCAP_ASIMDRDM | HWCAP_CRC32},
      {"v8.2a", HWCAP_ATOMICS | HWCAP_ASIMDRDM | HWCAP_CRC32},
  };
  unsigned long hw = getauxval(AT_HWCAP);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (strcmp(rows[i].name, f) == 0) return (hw & rows[i].bits) == rows[i].bits;
  if (strcmp(f, "sve") == 0) return (hw & HWCAP_SVE) != 0;
  if (strcmp(f, "sve2") == 0) return (getauxval(AT_HWCAP2) & HWCAP2_SVE2) != 0;
  if (known) *known = 0;
  return 1;
}
#else
#define TSL_RUNTIME_ARCH "unknown"
#endif

int tsl_cpu_has_feature(const char *feature, int *known) {
  if (known) *known = 1;
  if (!feature) return 0;
#if defined(__x86_64__)
  return x86_has(feature, known);
#elif defined(__aarch64__)
  return arm_has(feature, known);
#else
  if (known) *known = 0;
  return 1;
#endif
}

/* Checks the object's TSL_AOT_TARGET_SYMBOL record (if any) against this machine. */
static tsl_status check_aot_target(const char *where, const char *path, const char *rec) {
  char buf[4800]; /* codegen/aot.c writes at most the arch, a 4096-byte feature string and 512 of implied ones */
  if (strlen(rec) >= sizeof buf) /* never check a cut list: a cut name would pass as unknown */
    return tsl_error(TSL_ERR_INVALID, "%s: %s has a target record of %zu bytes (at most %zu): not a tessel object", where,
                     path, strlen(rec), sizeof buf - 1);
  snprintf(buf, sizeof buf, "%s", rec);
  char *sp = strchr(buf, ' ');
  const char *features = "";
  if (sp) {
    *sp = '\0';
    features = sp + 1;
  }
  if (strcmp(buf, TSL_RUNTIME_ARCH) != 0)
    return tsl_error(TSL_ERR_UNSUPPORTED, "%s: %s was compiled for %.40s, this machine is %s", where, path, buf,
                     TSL_RUNTIME_ARCH);
  char missing[512] = "";
  size_t used = 0;
  const char *p = features;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len > 1 && p[0] == '+' && len < 64) {
      char name[64];
      memcpy(name, p + 1, len - 1);
      name[len - 1] = '\0';
      if (!tsl_cpu_has_feature(name, NULL) && used + len + 2 < sizeof missing)
        used += (size_t)snprintf(missing + used, sizeof missing - used, "%s%s", used ? ", " : "", name);
    }
    p += len;
    if (*p == ',') p++;
  }
  if (used)
    return tsl_error(TSL_ERR_UNSUPPORTED,
                     "%s: %s was compiled for CPU features this %s CPU lacks (%s): refusing to run it", where, path,
                     TSL_RUNTIME_ARCH, missing);
  return TSL_OK;
}

/* The name of an ELF file's machine (e_machine) when it is not this build's, else NULL:
 * a model compiled for another architecture says so instead of dlopen's "cannot open
 * shared object file". */
static const char *foreign_elf_machine(const char *path) {
  unsigned char h[20];
  FILE *f = fopen(path, "rb");
  size_t got = f ? fread(h, 1, sizeof h, f) : 0;
  if (f) fclose(f);
  if (got != sizeof h || memcmp(h, ELFMAG, SELFMAG) != 0) return NULL;
  unsigned m = h[EI_DATA] == ELFDATA2MSB ? (unsigned)h[18] << 8 | h[19] : (unsigned)h[19] << 8 | h[18];
#if defined(__x86_64__)
  const unsigned self = EM_X86_64;
#elif defined(__aarch64__)
  const unsigned self = EM_AARCH64;
#else
  const unsigned self = m;
#endif
  if (m == self) return NULL;
  return m == EM_AARCH64 ? "AArch64 (armv8)" : m == EM_X86_64 ? "x86-64" : "another architecture";
}

tsl_status tsl_module_load_so(const char *path, tsl_module **out) {
  const char *where = "tsl_module_load_so";
  if (!path || !out) return tsl_error(TSL_ERR_INVALID, "%s: NULL argument", where);
  struct stat sb;
  if (stat(path, &sb) != 0) return tsl_error(TSL_ERR_IO, "%s: %s: %s", where, path, strerror(errno));
  if (!S_ISREG(sb.st_mode)) return tsl_error(TSL_ERR_IO, "%s: %s is not a regular file", where, path);
  /* dlopen searches the library path for a name without '/'; a path never is. */
  char *local = NULL;
  if (!strchr(path, '/')) {
    local = malloc(strlen(path) + 3);
    if (!local) return tsl_error(TSL_ERR_NOMEM, "%s: out of memory", where);
    strcpy(local, "./");
    strcat(local, path);
  }
  void *handle = dlopen(local ? local : path, RTLD_NOW | RTLD_LOCAL);
  free(local);
  if (!handle) {
    const char *why = dlerror(), *machine = foreign_elf_machine(path);
    if (machine)
      return tsl_error(TSL_ERR_UNSUPPORTED,
                       "%s: %s is a shared object for %s, and this machine is %s: run it on a machine of its "
                       "architecture (or under qemu-user)",
                       where, path, machine, TSL_RUNTIME_ARCH);
    return tsl_error(TSL_ERR_IO, "%s: cannot load %s: %s", where, path, why ? why : "unknown dlopen error");
  }
  const tsl_aot_entry *table = dlsym(handle, TSL_AOT_KERNELS_SYMBOL);
  const int *count = dlsym(handle, TSL_AOT_NKERNELS_SYMBOL);
  const char *target_rec = dlsym(handle, TSL_AOT_TARGET_SYMBOL);
  tsl_status st = TSL_OK;
  tsl_module *m = NULL;
  if (target_rec) {
    st = check_aot_target(where, path, target_rec);
    if (st != TSL_OK) goto fail;
  }
  if (!table || !count) {
    st = tsl_error(TSL_ERR_INVALID, "%s: %s exports no %s table (a tessel AOT object exports %s and %s)", where, path,
                   !table ? TSL_AOT_KERNELS_SYMBOL : TSL_AOT_NKERNELS_SYMBOL, TSL_AOT_KERNELS_SYMBOL,
                   TSL_AOT_NKERNELS_SYMBOL);
    goto fail;
  }
  const int *abi = dlsym(handle, TSL_AOT_ABI_SYMBOL);
  if (!abi || *abi != TSL_AOT_ABI_VERSION) {
    if (abi)
      st = tsl_error(TSL_ERR_INVALID,
                     "%s: %s: kernel table layout %d (%s), this runtime reads layout %d: recompile the object with "
                     "this tessel",
                     where, path, *abi, TSL_AOT_ABI_SYMBOL, TSL_AOT_ABI_VERSION);
    else
      st = tsl_error(TSL_ERR_INVALID,
                     "%s: %s exports no %s (written by an older tessel, its kernel table's layout is unknown): "
                     "recompile the object with this tessel",
                     where, path, TSL_AOT_ABI_SYMBOL);
    goto fail;
  }
  if (*count < 0 || *count > MAX_AOT_KERNELS) {
    st = tsl_error(TSL_ERR_INVALID, "%s: %s: %s is %d (allowed 0..%d)", where, path, TSL_AOT_NKERNELS_SYMBOL, *count,
                   MAX_AOT_KERNELS);
    goto fail;
  }
  st = tsl_module_new(&m);
  if (st != TSL_OK) goto fail;
  for (int i = 0; i < *count; i++) {
    const tsl_aot_entry *e = &table[i];
    if (!e->name || !e->name[0] || !e->fn) {
      st = tsl_error(TSL_ERR_INVALID, "%s: %s: kernel table row %d has %s", where, path, i,
                     !e->name || !e->name[0] ? "no name" : "no function");
      goto fail;
    }
    char what[160];
    snprintf(what, sizeof what, "%.100s (row %d of %s)", e->name, i, TSL_AOT_KERNELS_SYMBOL);
    st = check_sig(where, what, &e->sig);
    if (st != TSL_OK) goto fail;
    st = tsl_module_add_kernel(m, e->name, e->fn, &e->sig);
    if (st != TSL_OK) {
      char why[512]; /* tsl_error writes the buffer tsl_last_error points at */
      snprintf(why, sizeof why, "%s", tsl_last_error());
      st = tsl_error(st, "%s: %s: row %d: %s", where, path, i, why);
      goto fail;
    }
  }
  tsl_module_set_owner(m, handle, close_handle);
  *out = m;
  return TSL_OK;
fail:
  tsl_module_free(m);
  dlclose(handle);
  return st;
}
