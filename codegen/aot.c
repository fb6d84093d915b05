/* Ahead-of-time compilation into a shared object (codegen/aot.h). */
#include "codegen/aot.h"

#include <errno.h>
#include <fcntl.h>
#include <llvm-c/Core.h>
#include <llvm-c/Linker.h>
#include <llvm-c/TargetMachine.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/kernel_abi.h"
#include "codegen/llvm.h"
#include "codegen/machine.h"
#include "target/arch.h"

extern char **environ;

#define SYM_MAX 200

/* Picks a symbol for kernel i: sanitized, unique among syms[0..i), never "tsl_..." (the
 * runtime's and the tables' namespace). */
static void pick_symbol(const char *name, char (*syms)[SYM_MAX], int i) {
  char base[SYM_MAX - 16];
  tsl_codegen_symbol_name(name, base, sizeof base);
  snprintf(syms[i], SYM_MAX, "%s", base);
  for (int k = 1;; k++) {
    int clash = strncmp(syms[i], "tsl_", 4) == 0;
    for (int j = 0; j < i && !clash; j++) clash = strcmp(syms[j], syms[i]) == 0;
    if (!clash) return;
    snprintf(syms[i], SYM_MAX, "%s_%d", base, k);
  }
}

static LLVMValueRef add_const_string(LLVMModuleRef m, LLVMContextRef ctx, const char *name, const char *s,
                                     bool exported) {
  LLVMValueRef init = LLVMConstStringInContext(ctx, s, (unsigned)strlen(s), 0);
  LLVMValueRef g = LLVMAddGlobal(m, LLVMTypeOf(init), name);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  if (!exported) {
    LLVMSetLinkage(g, LLVMPrivateLinkage);
    LLVMSetUnnamedAddress(g, LLVMGlobalUnnamedAddr);
  }
  return g;
}

/* Adds tsl_aot_kernels / tsl_aot_nkernels / tsl_aot_target (layouts of runtime/module.h:
 * tsl_aot_entry is {const char *, void *, {int, int[TSL_MAX_KERNEL_ARGS]}}). */
static void add_tables(LLVMModuleRef m, LLVMContextRef ctx, const tsl_func *const *funcs, int n,
                       char (*syms)[SYM_MAX], const tsl_kernel_sig *sigs, const char *target_rec) {
  LLVMTypeRef ptr = LLVMPointerTypeInContext(ctx, 0);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  LLVMTypeRef args_ty = LLVMArrayType2(i32, TSL_MAX_KERNEL_ARGS);
  LLVMTypeRef sig_fields[2] = {i32, args_ty};
  LLVMTypeRef sig_ty = LLVMStructTypeInContext(ctx, sig_fields, 2, 0);
  LLVMTypeRef entry_fields[3] = {ptr, ptr, sig_ty};
  LLVMTypeRef entry_ty = LLVMStructTypeInContext(ctx, entry_fields, 3, 0);
  LLVMValueRef *rows = malloc((size_t)n * sizeof *rows);
  if (!rows) abort(); /* a few pointers: only a broken process fails here */
  for (int i = 0; i < n; i++) {
    char gname[64];
    snprintf(gname, sizeof gname, ".tsl_aot_name.%d", i);
    LLVMValueRef name = add_const_string(m, ctx, gname, funcs[i]->name, false);
    LLVMValueRef fn = LLVMGetNamedFunction(m, syms[i]);
    LLVMValueRef argv[TSL_MAX_KERNEL_ARGS];
    for (int a = 0; a < TSL_MAX_KERNEL_ARGS; a++)
      argv[a] = LLVMConstInt(i32, a < sigs[i].nargs ? (unsigned long long)sigs[i].args[a] : 0, 0);
    LLVMValueRef sigv[2] = {LLVMConstInt(i32, (unsigned long long)sigs[i].nargs, 0),
                            LLVMConstArray2(i32, argv, TSL_MAX_KERNEL_ARGS)};
    LLVMValueRef entry[3] = {name, fn, LLVMConstStructInContext(ctx, sigv, 2, 0)};
    rows[i] = LLVMConstStructInContext(ctx, entry, 3, 0);
  }
  LLVMValueRef table_init = LLVMConstArray2(entry_ty, rows, (uint64_t)n);
  free(rows);
  LLVMValueRef table = LLVMAddGlobal(m, LLVMTypeOf(table_init), TSL_AOT_KERNELS_SYMBOL);
  LLVMSetInitializer(table, table_init);
  LLVMSetGlobalConstant(table, 1);
  LLVMSetAlignment(table, 8);
  LLVMValueRef count = LLVMAddGlobal(m, i32, TSL_AOT_NKERNELS_SYMBOL);
  LLVMSetInitializer(count, LLVMConstInt(i32, (unsigned long long)n, 0));
  LLVMSetGlobalConstant(count, 1);
  LLVMValueRef abi = LLVMAddGlobal(m, i32, TSL_AOT_ABI_SYMBOL);
  LLVMSetInitializer(abi, LLVMConstInt(i32, (unsigned long long)TSL_AOT_ABI_VERSION, 0));
  LLVMSetGlobalConstant(abi, 1);
  add_const_string(m, ctx, TSL_AOT_TARGET_SYMBOL, target_rec, true);
}

/* Reads at most n-1 bytes of the file at path into buf (NUL-terminated). */
static void read_text(const char *path, char *buf, size_t n) {
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  size_t got = fread(buf, 1, n - 1, f);
  buf[got] = '\0';
  fclose(f);
  while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' ')) buf[--got] = '\0';
}

/* Links obj into out_so with the linker; its stderr goes to log_path. */
static tsl_status link_so(const tsl_target *t, const char *obj, const char *out_so, const char *log_path) {
  const char *lld = getenv("TSL_LLD");
  if (!lld || !lld[0]) lld = "ld.lld-19";
  const char *libdir = getenv("TSL_AOT_LIBDIR");
  if (!libdir || !libdir[0])
    libdir = t->arch == TSL_ARCH_AARCH64 ? "/usr/aarch64-linux-gnu/lib" : "/usr/lib/x86_64-linux-gnu";
  char ldir[1100];
  snprintf(ldir, sizeof ldir, "-L%s", libdir);
  char *argv[] = {(char *)lld, "-shared", "-o", (char *)out_so, (char *)obj, ldir, "--as-needed", "-lm", "-lc",
                  "-z", "noexecstack", NULL};
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) return tsl_error(TSL_ERR_NOMEM, "aot: out of memory");
  posix_spawn_file_actions_addopen(&fa, 2, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 2, 1);
  pid_t pid;
  int rc = posix_spawnp(&pid, lld, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return tsl_error(TSL_ERR_IO, "aot: cannot run the linker %s: %s (install lld-19 or set TSL_LLD)", lld,
                     strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return tsl_error(TSL_ERR_IO, "aot: waiting for %s: %s", lld, strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return TSL_OK;
  char log[1024];
  read_text(log_path, log, sizeof log);
  return tsl_error(TSL_ERR_IO, "aot: linking %s with %s failed (%s %d): %s", out_so, lld,
                   WIFEXITED(status) ? "exit status" : "signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), log[0] ? log : "no output");
}

/* Emits the optimized module's clone as an object file at obj_path. */
static tsl_status emit_object(LLVMTargetMachineRef tm, LLVMModuleRef m, const char *obj_path) {
  LLVMModuleRef clone = LLVMCloneModule(m);
  char *err = NULL;
  tsl_status st = TSL_OK;
  if (LLVMTargetMachineEmitToFile(tm, clone, obj_path, LLVMObjectFile, &err))
    st = tsl_error(TSL_ERR_CODEGEN, "aot: object emission failed: %s", err ? err : "unknown LLVM error");
  LLVMDisposeMessage(err);
  LLVMDisposeModule(clone);
  return st;
}

/* Builds the whole module (kernels + tables), optimized, in ctx. */
static tsl_status build_module(const tsl_func *const *funcs, int n, const tsl_target *t, LLVMContextRef ctx,
                               LLVMTargetMachineRef tm, char (*syms)[SYM_MAX], tsl_kernel_sig *sigs,
                               LLVMModuleRef *out) {
  *out = NULL;
  char *dl = tsl_codegen_data_layout(tm);
  if (!dl) return tsl_error(TSL_ERR_NOMEM, "aot: out of memory");
  LLVMModuleRef dest = NULL;
  tsl_status st = TSL_OK;
  for (int i = 0; i < n && st == TSL_OK; i++) {
    pick_symbol(funcs[i]->name, syms, i);
    st = tsl_codegen_kernel_sig(funcs[i], &sigs[i]);
    if (st != TSL_OK) break;
    LLVMModuleRef mi = NULL;
    st = tsl_codegen_emit(funcs[i], t, ctx, syms[i], dl, &mi);
    if (st != TSL_OK) break;
    if (!dest) {
      dest = mi;
      LLVMSetModuleIdentifier(dest, "tsl_aot", 7);
    } else if (LLVMLinkModules2(dest, mi)) { /* consumes mi */
      st = tsl_error(TSL_ERR_CODEGEN, "aot: linking kernel %s into the module failed", funcs[i]->name);
    }
  }
  free(dl);
  if (st == TSL_OK) {
    /* Feature strings may name a feature twice; the loader checks each mention. */
    char implied[512]; /* not those t's string turns off: the code does not use them */
    tsl_target_implied_features(t, implied, sizeof implied);
    char rec[sizeof t->features + sizeof implied + 64];
    snprintf(rec, sizeof rec, "%s %s%s%s", tsl_arch_info_of(t->arch)->name, t->features,
             t->features[0] && implied[0] ? "," : "", implied);
    add_tables(dest, ctx, funcs, n, syms, sigs, rec);
    st = tsl_codegen_verify(dest, "aot");
  }
  if (st == TSL_OK) st = tsl_codegen_optimize(dest, tm, "aot");
  if (st != TSL_OK) {
    if (dest) LLVMDisposeModule(dest);
    return st;
  }
  *out = dest;
  return TSL_OK;
}

tsl_status tsl_aot_compile(const tsl_func *const *funcs, int n, const tsl_target *t, const char *out_so) {
  if (!funcs || !t || !out_so || !out_so[0]) return tsl_error(TSL_ERR_INVALID, "aot: NULL argument");
  if (n < 1) return tsl_error(TSL_ERR_INVALID, "aot: no kernels to compile (n = %d)", n);
  for (int i = 0; i < n; i++) {
    if (!funcs[i] || !funcs[i]->name || !funcs[i]->name[0])
      return tsl_error(TSL_ERR_INVALID, "aot: kernel %d is NULL or has no name", i);
    for (int j = 0; j < i; j++)
      if (strcmp(funcs[i]->name, funcs[j]->name) == 0)
        return tsl_error(TSL_ERR_INVALID, "aot: two kernels are named %s (kernels %d and %d)", funcs[i]->name, j, i);
  }
  char(*syms)[SYM_MAX] = calloc((size_t)n, sizeof *syms);
  tsl_kernel_sig *sigs = calloc((size_t)n, sizeof *sigs);
  size_t plen = strlen(out_so) + 16;
  char *obj = malloc(plen), *log = malloc(plen);
  if (!syms || !sigs || !obj || !log) {
    free(syms);
    free(sigs);
    free(obj);
    free(log);
    return tsl_error(TSL_ERR_NOMEM, "aot: out of memory");
  }
  snprintf(obj, plen, "%s.o.XXXXXX", out_so);
  snprintf(log, plen, "%s.log.XXXXXX", out_so);
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMTargetMachineRef tm = NULL;
  LLVMModuleRef m = NULL;
  int ofd = -1, lfd = -1;
  tsl_status st = tsl_codegen_target_machine(t, NULL, false, &tm);
  if (st == TSL_OK) st = build_module(funcs, n, t, ctx, tm, syms, sigs, &m);
  if (st == TSL_OK) {
    ofd = mkstemp(obj);
    lfd = ofd >= 0 ? mkstemp(log) : -1;
    if (ofd < 0 || lfd < 0)
      st = tsl_error(TSL_ERR_IO, "aot: cannot create a temporary file next to %s: %s", out_so, strerror(errno));
  }
  if (st == TSL_OK) st = emit_object(tm, m, obj);
  if (st == TSL_OK) st = link_so(t, obj, out_so, log);
  if (ofd >= 0) {
    close(ofd);
    unlink(obj);
  }
  if (lfd >= 0) {
    close(lfd);
    unlink(log);
  }
  if (m) LLVMDisposeModule(m);
  if (tm) LLVMDisposeTargetMachine(tm);
  LLVMContextDispose(ctx);
  free(syms);
  free(sigs);
  free(obj);
  free(log);
  return st;
}
