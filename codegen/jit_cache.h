/* On-disk cache of JIT-compiled kernels (object files), so that compiling a model a
 * second time (e.g. `tunecli run MODEL --records R` after tuning) skips LLVM's
 * optimizer and code generator.
 *
 * Two levels. Level 1 (kernel entries, used by tsl_build, codegen/build.h) is keyed
 * by the schedule before lowering and holds the object plus the kernel's symbol and
 * signature, so a hit skips lowering, IR emission and LLVM. Level 2 (object entries,
 * described below, used by tsl_jit_compile) is keyed by the emitted LLVM module: a
 * kernel that misses level 1 is lowered and emitted, and may still hit here (e.g. a
 * schedule written differently that lowers to the same IR).
 *
 * Key: a 128-bit hash of (a) the emitted, not yet optimized LLVM module of the kernel as
 * bitcode (which holds the kernel's symbol, every loop and constant of the lowered IR,
 * the data layout and the triple) and (b) the JIT context string (tsl_jit_cache_context:
 * target string, CPU name and features, LLVM version, tessel version, cache format).
 * Any change to the lowered IR, the code generator's output, the target, the CPU,
 * LLVM or tessel gives another key, so a stale entry can never be used; it simply
 * stays unused on disk.
 *
 * Location: $TSL_CACHE_DIR, else $XDG_CACHE_HOME/tessel, else $HOME/.cache/tessel;
 * entries are files jit-v1/<32 hex digits>.o there. An entry is written to a
 * temporary file in the same directory and renamed into place (atomic on POSIX), so
 * concurrent processes never read a half-written entry. An entry holds a header
 * (magic, its key, the object's size and a checksum) before the object; an entry
 * whose header does not check (truncated, garbage, another key) is corrupt: one
 * warning line on stderr, the entry is removed and the kernel recompiled (and stored
 * again).
 *
 * Disabled when the environment has TSL_CACHE=0, or after
 * tsl_jit_cache_set_enabled(false) (tunecli --no-cache; the tuner's measurement
 * workers, whose candidates are compiled once and never again). An unwritable cache
 * directory only costs the cache: compiling never fails because of it.
 */
#ifndef TESSEL_CODEGEN_JIT_CACHE_H
#define TESSEL_CODEGEN_JIT_CACHE_H

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/jit.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the cache is used: not disabled by tsl_jit_cache_set_enabled(false) and
 * the environment variable TSL_CACHE is not "0" (read at every call). */
bool tsl_jit_cache_enabled(void);

/* Process-wide switch (default on); TSL_CACHE=0 wins over true. */
void tsl_jit_cache_set_enabled(bool on);

/* The cache directory (see the top of this file) into buf (n bytes), without the
 * jit-v1 part. Errors: TSL_ERR_NOT_FOUND (no TSL_CACHE_DIR, XDG_CACHE_HOME or HOME),
 * TSL_ERR_INVALID (the path does not fit in n bytes). */
tsl_status tsl_jit_cache_dir(char *buf, size_t n);

/* The JIT context string of target t: what besides the LLVM IR decides the machine
 * code. malloc'd (caller frees); NULL when out of memory. */
char *tsl_jit_cache_context(const tsl_target *t);

typedef struct tsl_jit_cache_key {
  uint64_t h[2];
} tsl_jit_cache_key;

/* The key of n bytes of module ir (bitcode) under context ctx (NUL-terminated). */
tsl_jit_cache_key tsl_jit_cache_key_of(const void *ir, size_t n, const char *ctx);

/* The entry's path for key k into buf (n bytes). Errors: as tsl_jit_cache_dir. */
tsl_status tsl_jit_cache_path(const tsl_jit_cache_key *k, char *buf, size_t n);

/* `mkdir -p` of the directory part of path (mode 0755; existing folders are fine), for
 * the files kept in the cache directory (entries, the peak file of tuner/peak_cache.c).
 * False when a folder cannot be made or path is over 4399 bytes. */
bool tsl_jit_cache_make_parent_dirs(const char *path);

/* Counters since process start (or the last tsl_jit_cache_reset_stats). */
typedef struct tsl_jit_cache_stats {
  /* level 2: object entries by LLVM module (tsl_jit_compile) */
  long hits;    /* valid entries used */
  long misses;  /* lookups without a (valid) entry: compiled, then stored */
  long corrupt; /* entries found corrupt (each also counts as a miss) */
  long stores;  /* entries written */
  /* level 1: kernel entries by schedule (tsl_build) */
  long kernel_hits;    /* entries used: the kernel was neither lowered nor compiled */
  long kernel_misses;  /* lookups without a usable entry: lowered, then level 2 */
  long kernel_corrupt; /* entries found corrupt (each also counts as a miss) */
  long kernel_stores;  /* entries written */
} tsl_jit_cache_stats;

void tsl_jit_cache_get_stats(tsl_jit_cache_stats *out);
void tsl_jit_cache_reset_stats(void);

/* The object file of module mod (emitted for the JIT, not optimized yet; the caller
 * still owns and disposes it, in whatever state) for context ctx: read from the cache
 * when a valid entry exists (*hit = true), else optimized ("default<O3>" with tm,
 * codegen/machine.h) and emitted as an object by tm (the JIT's optimization target
 * machine, whose configuration equals the session's), then stored. *obj receives a
 * memory buffer the caller owns (LLVMOrcLLJITAddObjectFile takes it). what names the
 * kernel in messages. Errors: TSL_ERR_CODEGEN (optimization or emission failed),
 * TSL_ERR_NOMEM. Cache I/O problems are never errors. */
tsl_status tsl_jit_cache_object(LLVMModuleRef mod, LLVMTargetMachineRef tm, const char *ctx, const char *what,
                                LLVMMemoryBufferRef *obj, bool *hit);

/* ---- level 1: kernel entries -------------------------------------------------------
 * Files kernel-v1/<32 hex digits>.kernel in the cache directory, written and checked
 * like the object entries (header with magic, key, size and checksum; temp file then
 * rename; a corrupt entry is one warning, removed). The key is made by
 * tsl_build_cache_key (codegen/build_key.h). */

/* The kernel entry's path for key k into buf (n bytes). Errors: as tsl_jit_cache_dir. */
tsl_status tsl_jit_cache_kernel_path(const tsl_jit_cache_key *k, char *buf, size_t n);

/* Reads the kernel entry of k into *obj (cleared first; free with
 * tsl_jit_object_free): true when a valid entry exists. false when there is none or
 * it is corrupt (one warning on stderr, entry removed, counted in kernel_corrupt).
 * Counts no hit or miss: the caller reports the outcome (tsl_jit_cache_count_kernel),
 * since a valid entry may still be unusable (its symbol taken in the JIT). */
bool tsl_jit_cache_kernel_load(const tsl_jit_cache_key *k, tsl_jit_object *obj);

/* Writes obj (data, symbol, signature) as the kernel entry of k; an incomplete obj
 * (no data or symbol) or an I/O problem only costs the entry (one warning per process
 * for an unwritable directory). */
void tsl_jit_cache_kernel_store(const tsl_jit_cache_key *k, const tsl_jit_object *obj);

/* Counts one level-1 lookup as a hit (entry used) or a miss. */
void tsl_jit_cache_count_kernel(bool hit);

#ifdef __cplusplus
}
#endif
#endif
