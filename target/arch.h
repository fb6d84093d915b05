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
/* Is `feature` (without '-') disabled ("-feature") in it? */
bool tsl_feature_string_disables(const char *features, const char *feature);

#ifdef __cplusplus
}
#endif
#endif
