/* Per-architecture facts of the target description (no LLVM).
 *
 * One tsl_arch_info per architecture tessel generates code for (target/arch.c): its
 * name, the named targets (presets) it offers, which LLVM triples belong to it and the
 * vector width a feature string implies. target/target.c builds every tsl_target from
 * these; codegen/target_backend.h adds what needs LLVM (backend initialization,
 * function attributes) per architecture.
 */
#ifndef TESSEL_TARGET_ARCH_H
#define TESSEL_TARGET_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "target/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A named target of an architecture (target/target.h lists them). */
typedef struct tsl_target_preset {
  const char *name;
  const char *triple;
  const char *cpu;
  const char *features; /* every feature the kernels may use, spelled out ("+x,+y") so
                           that tsl_target_runs_on_host can check them one by one */
  int64_t l1d_bytes;
  int64_t l2_bytes;
} tsl_target_preset;

typedef struct tsl_arch_info {
  tsl_arch arch;
  const char *name; /* "x86_64", "aarch64" */
  const tsl_target_preset *presets;
  int npresets;
  /* Does an LLVM triple belong to this architecture? */
  bool (*matches_triple)(const char *triple);
  /* Native vector register width in bits implied by t->features. */
  int (*vector_bits)(const tsl_target *t);
} tsl_arch_info;

/* The architectures, for iteration: a static array of *count entries. */
const tsl_arch_info *const *tsl_arch_infos(int *count);
/* The description of an architecture (never NULL for a valid tsl_arch). */
const tsl_arch_info *tsl_arch_info_of(tsl_arch arch);
/* The architecture an LLVM triple names, or NULL. */
const tsl_arch_info *tsl_arch_info_for_triple(const char *triple);

/* Is `feature` (without '+') enabled ("+feature") in a comma-separated LLVM
 * feature string? */
bool tsl_feature_string_has(const char *features, const char *feature);
/* The next enabled feature ("+x") of a feature string at or after *p, copied without its
 * '+' into name (n bytes; a longer one is skipped); *p moves past it. false at the end.
 * Walk a string: for (const char *p = s; tsl_feature_string_next(&p, name, sizeof name);) */
bool tsl_feature_string_next(const char **p, char *name, size_t n);
/* Is `feature` (without '-') disabled in it: "-feature", or "-parent" of a feature LLVM
 * derives from parent ("-avx512f" disables avx512vpopcntdq, avx512vl, ...)? */
bool tsl_feature_string_disables(const char *features, const char *feature);

/* Keep t (a named target after "-mcpu=") at its own vector width: when t's CPU would
 * enable a wider vector ISA than t's features (x86-64-avx2 -mcpu=znver4: AVX-512), that
 * ISA is turned off in t->features ("-avx512f"), so the code is the target's class
 * scheduled for that CPU (what -march=x86-64-v3 -mtune=znver4 gives in GCC). The CPU's
 * other features stay (they count where code is checked against a machine). AArch64
 * targets are left as they are: their code is NEON's 128 bits whatever the CPU (an SVE a
 * CPU implies counts as one of its features).
 * Errors: TSL_ERR_INVALID (NULL t); TSL_ERR_UNSUPPORTED when the feature string has no
 * room for the change. */
tsl_status tsl_target_keep_vector_bits(tsl_target *t);

#ifdef __cplusplus
}
#endif
#endif
