/* ORC LLJIT session shared by many kernels; per-module resource trackers. */
#include "codegen/jit.h"

#include <dlfcn.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/jit_cache.h"
#include "codegen/kernel_abi.h"
#include "codegen/llvm.h"
#include "codegen/machine.h"
#include "runtime/parallel.h"

/* The code of the kernels in one module: removed when the module is freed. */
typedef struct jit_owner {
  tsl_jit *jit;
  const tsl_module *module;
  LLVMOrcResourceTrackerRef rt;
} jit_owner;

struct tsl_jit {
  tsl_target target;
  LLVMOrcLLJITRef lljit;
  LLVMTargetMachineRef tm; /* the optimizer's (the session owns its own copy) */
  char *data_layout;
  char *cache_ctx; /* the on-disk object cache's context (jit_cache.h); NULL: no cache */
  pthread_mutex_t lock;
  atomic_int refs;
  char **symbols; /* used kernel symbols: open addressing, capsymbols a power of two */
  int nsymbols, capsymbols;
  unsigned serial; /* suffix for the next repeated name */
  jit_owner **owners;
  int nowners, capowners;
};

/* Functions generated code may call, defined at their addresses so they resolve
 * even when the executable does not export them (static linking, no -rdynamic). */
static const struct {
  const char *name;
  void *addr;
} runtime_symbols[] = {
    {"tsl_parallel_for", (void *)tsl_parallel_for},
    {"tsl_kernel_alloc", (void *)tsl_kernel_alloc},
    {"tsl_kernel_free", (void *)tsl_kernel_free},
    {"expf", (void *)expf},
    {"exp", (void *)exp},
    {"logf", (void *)logf},
    {"log", (void *)log},
    {"tanhf", (void *)tanhf},
    {"tanh", (void *)tanh},
    {"erf", (void *)erf},
    {"powf", (void *)powf},
    {"pow", (void *)pow},
    {"floorf", (void *)floorf},
    {"floor", (void *)floor},
    {"ceilf", (void *)ceilf},
    {"ceil", (void *)ceil},
    {"sqrtf", (void *)sqrtf},
    {"sqrt", (void *)sqrt},
};
#define NRUNTIME_SYMBOLS ((int)(sizeof runtime_symbols / sizeof runtime_symbols[0]))

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static tsl_status llvm_error(LLVMErrorRef err, tsl_status st, const char *what, const char *name) {
  char *msg = LLVMGetErrorMessage(err);
  tsl_status r = tsl_error(st, "%s %s: %s", what, name, msg);
  LLVMDisposeErrorMessage(msg);
  return r;
}

static tsl_status define_runtime_symbols(tsl_jit *j) {
  LLVMOrcCSymbolMapPair pairs[NRUNTIME_SYMBOLS];
  for (int i = 0; i < NRUNTIME_SYMBOLS; i++) {
    pairs[i].Name = LLVMOrcLLJITMangleAndIntern(j->lljit, runtime_symbols[i].name);
    pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)runtime_symbols[i].addr;
    pairs[i].Sym.Flags.GenericFlags = LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
    pairs[i].Sym.Flags.TargetFlags = 0;
  }
  LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(j->lljit);
  LLVMErrorRef err = LLVMOrcJITDylibDefine(jd, LLVMOrcAbsoluteSymbols(pairs, NRUNTIME_SYMBOLS));
  if (err) return llvm_error(err, TSL_ERR_CODEGEN, "jit", "runtime symbols");
  LLVMOrcDefinitionGeneratorRef gen;
  err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(&gen, LLVMOrcLLJITGetGlobalPrefix(j->lljit), NULL, NULL);
  if (err) return llvm_error(err, TSL_ERR_CODEGEN, "jit", "process symbols");
  LLVMOrcJITDylibAddGenerator(jd, gen);
  return TSL_OK;
}

static void destroy(tsl_jit *j) {
  if (j->lljit) {
    LLVMErrorRef err = LLVMOrcDisposeLLJIT(j->lljit);
    if (err) LLVMConsumeError(err);
  }
  if (j->tm) LLVMDisposeTargetMachine(j->tm);
  free(j->data_layout);
  free(j->cache_ctx);
  for (int i = 0; i < j->capsymbols; i++) free(j->symbols[i]);
  free(j->symbols);
  free(j->owners);
  pthread_mutex_destroy(&j->lock);
  free(j);
}

static void unref(tsl_jit *j) {
  if (atomic_fetch_sub(&j->refs, 1) == 1) destroy(j);
}

tsl_status tsl_jit_new(const tsl_target *t, tsl_jit **out) {
  if (!t || !out) return tsl_error(TSL_ERR_INVALID, "jit: NULL argument");
  *out = NULL;
  const char *why = NULL;
  char name[256];
  if (!tsl_target_runs_on_host(t, &why))
    return tsl_error(TSL_ERR_UNSUPPORTED,
                     "jit: target '%s' cannot run on this machine (%s); compile it ahead of time instead",
                     tsl_target_str(t, name, sizeof name), why);
  tsl_jit *j = calloc(1, sizeof *j);
  if (!j) return tsl_error(TSL_ERR_NOMEM, "jit: out of memory");
  j->target = *t;
  pthread_mutex_init(&j->lock, NULL);
  atomic_init(&j->refs, 1);
  char *extra = t->is_host ? NULL : tsl_codegen_host_missing_features();
  if (!t->is_host && !extra) {
    destroy(j);
    return tsl_error(TSL_ERR_NOMEM, "jit: out of memory");
  }
  LLVMTargetMachineRef session_tm = NULL;
  tsl_status st = tsl_codegen_target_machine(t, extra, true, &j->tm);
  if (st == TSL_OK) st = tsl_codegen_target_machine(t, extra, true, &session_tm);
  free(extra);
  if (st == TSL_OK && !(j->data_layout = tsl_codegen_data_layout(j->tm)))
    st = tsl_error(TSL_ERR_NOMEM, "jit: out of memory");
  if (st == TSL_OK) j->cache_ctx = tsl_jit_cache_context(t); /* NULL (out of memory): no cache */
  if (st != TSL_OK) {
    if (session_tm) LLVMDisposeTargetMachine(session_tm);
    destroy(j);
    return st;
  }
  LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
  LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder,
                                                LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(session_tm));
  LLVMErrorRef err = LLVMOrcCreateLLJIT(&j->lljit, builder);
  if (err) {
    j->lljit = NULL;
    st = llvm_error(err, TSL_ERR_CODEGEN, "jit", t->name);
    destroy(j);
    return st;
  }
  st = define_runtime_symbols(j);
  if (st != TSL_OK) {
    destroy(j);
    return st;
  }
  *out = j;
  return TSL_OK;
}

void tsl_jit_free(tsl_jit *j) {
  if (j) unref(j);
}

const tsl_target *tsl_jit_target(const tsl_jit *j) { return &j->target; }

static void *grow(void *p, int *cap, int need, size_t elem) {
  if (need <= *cap) return p;
  int n = *cap ? *cap * 2 : 16;
  void *q = realloc(p, (size_t)n * elem);
  if (q) *cap = n;
  return q;
}

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* The slot of s in the symbol set: where it is, or the empty slot it would take. */
static char **symbol_slot(const tsl_jit *j, const char *s) {
  unsigned mask = (unsigned)j->capsymbols - 1;
  for (unsigned i = (unsigned)hash_str(s) & mask;; i = (i + 1) & mask)
    if (!j->symbols[i] || strcmp(j->symbols[i], s) == 0) return &j->symbols[i];
}

static bool symbol_add(tsl_jit *j, const char *s) {
  if (2 * (j->nsymbols + 1) > j->capsymbols) {
    int cap = j->capsymbols ? 2 * j->capsymbols : 64;
    char **old = j->symbols;
    int oldcap = j->capsymbols;
    char **fresh = calloc((size_t)cap, sizeof *fresh);
    if (!fresh) return false;
    j->symbols = fresh;
    j->capsymbols = cap;
    for (int i = 0; i < oldcap; i++)
      if (old[i]) *symbol_slot(j, old[i]) = old[i];
    free(old);
  }
  char *copy = strdup(s);
  if (!copy) return false;
  *symbol_slot(j, s) = copy;
  j->nsymbols++;
  return true;
}

static bool symbol_taken(const tsl_jit *j, const char *s) {
  if (j->capsymbols && *symbol_slot(j, s)) return true;
  for (int i = 0; i < NRUNTIME_SYMBOLS; i++)
    if (strcmp(runtime_symbols[i].name, s) == 0) return true;
  /* A kernel named like a process symbol (memcpy, expf...) would capture the
   * calls generated code makes to it. */
  return dlsym(RTLD_DEFAULT, s) != NULL;
}

/* A fresh symbol for `name` (under j->lock): the sanitized name, or name_N for the
 * next free N. The JIT keeps the string. */
static const char *unique_symbol(tsl_jit *j, const char *name) {
  char base[200], sym[240];
  tsl_codegen_symbol_name(name, base, sizeof base);
  snprintf(sym, sizeof sym, "%s", base);
  while (symbol_taken(j, sym)) snprintf(sym, sizeof sym, "%s_%u", base, ++j->serial);
  if (!symbol_add(j, sym)) return NULL;
  return *symbol_slot(j, sym);
}

static void release_owner(void *p) {
  jit_owner *o = p;
  tsl_jit *j = o->jit;
  pthread_mutex_lock(&j->lock);
  for (int i = 0; i < j->nowners; i++)
    if (j->owners[i] == o) {
      j->owners[i] = j->owners[--j->nowners];
      break;
    }
  pthread_mutex_unlock(&j->lock);
  LLVMErrorRef err = LLVMOrcResourceTrackerRemove(o->rt);
  if (err) LLVMConsumeError(err);
  LLVMOrcReleaseResourceTracker(o->rt);
  free(o);
  unref(j);
}

/* The owner record of module m (under j->lock), created and installed on first use. */
static tsl_status module_owner(tsl_jit *j, tsl_module *m, jit_owner **out) {
  for (int i = 0; i < j->nowners; i++)
    if (j->owners[i]->module == m) {
      *out = j->owners[i];
      return TSL_OK;
    }
  jit_owner **owners = grow(j->owners, &j->capowners, j->nowners + 1, sizeof *j->owners);
  if (!owners) return tsl_error(TSL_ERR_NOMEM, "jit: out of memory");
  j->owners = owners;
  jit_owner *o = malloc(sizeof *o);
  if (!o) return tsl_error(TSL_ERR_NOMEM, "jit: out of memory");
  o->jit = j;
  o->module = m;
  o->rt = LLVMOrcJITDylibCreateResourceTracker(LLVMOrcLLJITGetMainJITDylib(j->lljit));
  atomic_fetch_add(&j->refs, 1);
  j->owners[j->nowners++] = o;
  tsl_module_set_owner(m, o, release_owner);
  *out = o;
  return TSL_OK;
}

/* Links object buffer obj (taken) into m's resource tracker and looks up symbol. */
static tsl_status link_object(tsl_jit *j, tsl_module *m, LLVMMemoryBufferRef obj, const char *name,
                              const char *symbol, void **fn) {
  jit_owner *o = NULL;
  tsl_status st = module_owner(j, m, &o);
  if (st != TSL_OK) {
    LLVMDisposeMemoryBuffer(obj);
    return st;
  }
  LLVMErrorRef err = LLVMOrcLLJITAddObjectFileWithRT(j->lljit, o->rt, obj);
  if (err) return llvm_error(err, TSL_ERR_CODEGEN, "jit: adding the object of kernel", name);
  LLVMOrcExecutorAddress addr = 0;
  err = LLVMOrcLLJITLookup(j->lljit, &addr, symbol);
  if (err) return llvm_error(err, TSL_ERR_CODEGEN, "jit: linking kernel", name);
  *fn = (void *)(uintptr_t)addr;
  return TSL_OK;
}

/* Through the on-disk object cache (jit_cache.h): the object is read from the cache
 * or optimized, emitted by j->tm (configured as the session's machine) and stored;
 * either way the session links the object instead of compiling IR. A copy of the
 * object goes to *copy when copy is non-NULL (NULL data when out of memory: the
 * caller only loses a cache entry). */
static tsl_status compile_cached(tsl_jit *j, const tsl_func *f, tsl_module *m, LLVMModuleRef mod,
                                 LLVMOrcThreadSafeContextRef tsc, const char *symbol, void **fn,
                                 tsl_jit_object *copy) {
  char what[300];
  snprintf(what, sizeof what, "codegen %s", f->name);
  LLVMMemoryBufferRef obj = NULL;
  bool hit = false;
  tsl_status st = tsl_jit_cache_object(mod, j->tm, j->cache_ctx, what, &obj, &hit);
  LLVMDisposeModule(mod);
  LLVMOrcDisposeThreadSafeContext(tsc);
  if (st != TSL_OK) return st;
  if (copy) {
    size_t n = LLVMGetBufferSize(obj);
    copy->data = n ? malloc(n) : NULL;
    if (copy->data) {
      memcpy(copy->data, LLVMGetBufferStart(obj), n);
      copy->size = n;
      snprintf(copy->symbol, sizeof copy->symbol, "%s", symbol);
    }
  }
  return link_object(j, m, obj, f->name, symbol, fn);
}

/* Emission through machine code, under j->lock. */
static tsl_status compile_locked(tsl_jit *j, const tsl_func *f, tsl_module *m, void **fn, tsl_jit_object *copy) {
  const char *symbol = unique_symbol(j, f->name);
  if (!symbol) return tsl_error(TSL_ERR_NOMEM, "jit: out of memory");
  LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
  LLVMModuleRef mod;
  tsl_status st =
      tsl_codegen_emit(f, &j->target, LLVMOrcThreadSafeContextGetContext(tsc), symbol, j->data_layout, &mod);
  if (st == TSL_OK && j->cache_ctx && tsl_jit_cache_enabled()) return compile_cached(j, f, m, mod, tsc, symbol, fn, copy);
  if (st == TSL_OK) {
    char what[300];
    snprintf(what, sizeof what, "codegen %s", f->name);
    st = tsl_codegen_optimize(mod, j->tm, what);
    if (st != TSL_OK) LLVMDisposeModule(mod);
  }
  if (st != TSL_OK) {
    LLVMOrcDisposeThreadSafeContext(tsc);
    return st;
  }
  LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
  LLVMOrcDisposeThreadSafeContext(tsc);
  jit_owner *o = NULL;
  st = module_owner(j, m, &o);
  if (st != TSL_OK) {
    LLVMOrcDisposeThreadSafeModule(tsm);
    return st;
  }
  LLVMErrorRef err = LLVMOrcLLJITAddLLVMIRModuleWithRT(j->lljit, o->rt, tsm);
  if (err) return llvm_error(err, TSL_ERR_CODEGEN, "jit: adding kernel", f->name);
  LLVMOrcExecutorAddress addr = 0;
  err = LLVMOrcLLJITLookup(j->lljit, &addr, symbol);
  if (err) return llvm_error(err, TSL_ERR_CODEGEN, "jit: machine code for kernel", f->name);
  *fn = (void *)(uintptr_t)addr;
  return TSL_OK;
}

void tsl_jit_object_free(tsl_jit_object *o) {
  if (!o) return;
  free(o->data);
  memset(o, 0, sizeof *o);
}

tsl_status tsl_jit_compile(tsl_jit *j, const tsl_func *f, tsl_module *m, double *compile_seconds) {
  return tsl_jit_compile_object(j, f, m, compile_seconds, NULL);
}

tsl_status tsl_jit_compile_object(tsl_jit *j, const tsl_func *f, tsl_module *m, double *compile_seconds,
                                  tsl_jit_object *obj) {
  if (obj) memset(obj, 0, sizeof *obj);
  if (!j || !f || !m) return tsl_error(TSL_ERR_INVALID, "jit: NULL argument");
  double t0 = now_seconds();
  tsl_kernel_sig sig;
  tsl_status st = tsl_codegen_kernel_sig(f, &sig);
  if (st != TSL_OK) return st;
  const tsl_kernel *existing;
  if (tsl_module_get_kernel(m, f->name, &existing) == TSL_OK)
    return tsl_error(TSL_ERR_INVALID, "jit: module already has a kernel named %s", f->name);
  tsl_clear_error();
  void *fn = NULL;
  pthread_mutex_lock(&j->lock);
  st = compile_locked(j, f, m, &fn, obj);
  pthread_mutex_unlock(&j->lock);
  if (compile_seconds) *compile_seconds = now_seconds() - t0;
  if (st == TSL_OK) st = tsl_module_add_kernel(m, f->name, fn, &sig);
  if (st != TSL_OK) {
    tsl_jit_object_free(obj);
    return st;
  }
  if (obj) obj->sig = sig;
  return TSL_OK;
}

tsl_status tsl_jit_add_object(tsl_jit *j, tsl_module *m, const char *name, const tsl_jit_object *obj, bool *added) {
  if (added) *added = false;
  if (!j || !m || !name || !obj || !added) return tsl_error(TSL_ERR_INVALID, "jit: NULL argument");
  if (!obj->data || obj->size == 0 || !obj->symbol[0])
    return tsl_error(TSL_ERR_INVALID, "jit: empty object for kernel %s", name);
  const tsl_kernel *existing;
  if (tsl_module_get_kernel(m, name, &existing) == TSL_OK)
    return tsl_error(TSL_ERR_INVALID, "jit: module already has a kernel named %s", name);
  tsl_clear_error();
  void *fn = NULL;
  tsl_status st = TSL_OK;
  pthread_mutex_lock(&j->lock);
  if (symbol_taken(j, obj->symbol)) {
    pthread_mutex_unlock(&j->lock);
    return TSL_OK;
  }
  LLVMMemoryBufferRef buf = NULL;
  if (!symbol_add(j, obj->symbol) ||
      !(buf = LLVMCreateMemoryBufferWithMemoryRangeCopy(obj->data, obj->size, obj->symbol)))
    st = tsl_error(TSL_ERR_NOMEM, "jit: out of memory");
  if (st == TSL_OK) st = link_object(j, m, buf, name, obj->symbol, &fn);
  pthread_mutex_unlock(&j->lock);
  if (st == TSL_OK) st = tsl_module_add_kernel(m, name, fn, &obj->sig);
  if (st == TSL_OK) *added = true;
  return st;
}

const char *tsl_jit_cache_ctx(const tsl_jit *j) { return j ? j->cache_ctx : NULL; }
