/* x86-64 and AArch64: named targets, triples, vector widths (target/arch.h). */
#include "target/arch.h"

#include <string.h>

/* Is there an entry "<sign>feature" in the comma-separated list? */
static bool feature_entry(const char *features, char sign, const char *feature) {
  size_t n = strlen(feature);
  for (const char *p = features; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n + 1 && p[0] == sign && strncmp(p + 1, feature, n) == 0) return true;
    p = end ? end + 1 : NULL;
  }
  return false;
}

bool tsl_feature_string_has(const char *features, const char *feature) {
  return feature_entry(features, '+', feature);
}

bool tsl_feature_string_next(const char **p, char *name, size_t n) {
  while (*p && **p) {
    const char *q = *p, *end = strchr(q, ',');
    size_t len = end ? (size_t)(end - q) : strlen(q);
    *p = end ? end + 1 : q + len;
    if (len > 1 && len <= n && q[0] == '+') {
      memcpy(name, q + 1, len - 1);
      name[len - 1] = '\0';
      return true;
    }
  }
  return false;
}

/* Features LLVM turns off with another: "-avx512f" turns off every AVX-512 feature and
 * AVX10 (LLVM's X86 feature tree builds them on avx512f); evex512, the 512-bit
 * encodings, means nothing without it. */
static const struct {
  const char *prefix; /* a feature whose name starts so ... */
  const char *parent; /* ... is off when this one is */
} derived_features[] = {
    {"avx512", "avx512f"},
    {"evex512", "avx512f"},
    {"avx10", "avx512f"},
};

bool tsl_feature_string_disables(const char *features, const char *feature) {
  if (feature_entry(features, '-', feature)) return true;
  for (size_t i = 0; i < sizeof derived_features / sizeof derived_features[0]; i++) {
    size_t k = strlen(derived_features[i].prefix);
    if (strncmp(feature, derived_features[i].prefix, k) == 0 && strcmp(feature, derived_features[i].parent) != 0 &&
        feature_entry(features, '-', derived_features[i].parent))
      return true;
  }
  return false;
}

/* ---- x86-64 ---- */

/* The x86-64 micro-architecture levels v3 and v4 (psABI), with their features
 * spelled out so that a JIT request can be checked against the host feature by
 * feature. Cache sizes are those of the common parts of each class (Haswell..Zen 3
 * client cores: 32 KiB L1d / 512 KiB L2; Skylake-SP..Zen 4 servers: 48 KiB / 1 MiB)
 * and only steer tiling defaults. */
static const tsl_target_preset x86_presets[] = {
    {"x86-64-avx2", "x86_64-pc-linux-gnu", "x86-64-v3",
     "+sse,+sse2,+sse3,+ssse3,+sse4.1,+sse4.2,+popcnt,+cx16,+avx,+avx2,+fma,+f16c,+bmi,+bmi2,"
     "+lzcnt,+movbe,+xsave",
     32 * 1024, 512 * 1024},
    {"x86-64-avx512", "x86_64-pc-linux-gnu", "x86-64-v4",
     "+sse,+sse2,+sse3,+ssse3,+sse4.1,+sse4.2,+popcnt,+cx16,+avx,+avx2,+fma,+f16c,+bmi,+bmi2,"
     "+lzcnt,+movbe,+xsave,+avx512f,+avx512bw,+avx512cd,+avx512dq,+avx512vl",
     48 * 1024, 1024 * 1024},
};

static bool x86_matches_triple(const char *triple) {
  return strncmp(triple, "x86_64", 6) == 0 || strncmp(triple, "amd64", 5) == 0;
}

static int x86_vector_bits(const tsl_target *t) {
  if (tsl_feature_string_has(t->features, "avx512f")) return 512;
  if (tsl_feature_string_has(t->features, "avx")) return 256;
  return 128;
}

static const tsl_arch_info x86_info = {
    .arch = TSL_ARCH_X86_64,
    .name = "x86_64",
    .presets = x86_presets,
    .npresets = (int)(sizeof x86_presets / sizeof x86_presets[0]),
    .matches_triple = x86_matches_triple,
    .vector_bits = x86_vector_bits,
};

/* ---- AArch64 ---- */

/* Cortex-A53 (Raspberry Pi 3 class): 32 KiB L1d, 512 KiB shared L2.
 * Cortex-A76 (Raspberry Pi 5 class, v8.2-A with dotprod): 64 KiB L1d, 512 KiB L2. */
static const tsl_target_preset arm_presets[] = {
    {"armv8", "aarch64-linux-gnu", "cortex-a53", "+neon,+fp-armv8", 32 * 1024, 512 * 1024},
    {"armv8.2-a+dotprod", "aarch64-linux-gnu", "cortex-a76",
     "+neon,+fp-armv8,+v8.2a,+dotprod,+fullfp16", 64 * 1024, 512 * 1024},
};

static bool arm_matches_triple(const char *triple) {
  return strncmp(triple, "aarch64", 7) == 0 || strncmp(triple, "arm64", 5) == 0;
}

/* SVE's width is only known at run time; NEON's 128 bits is what schedules use. */
static int arm_vector_bits(const tsl_target *t) {
  (void)t;
  return 128;
}

static const tsl_arch_info arm_info = {
    .arch = TSL_ARCH_AARCH64,
    .name = "aarch64",
    .presets = arm_presets,
    .npresets = (int)(sizeof arm_presets / sizeof arm_presets[0]),
    .matches_triple = arm_matches_triple,
    .vector_bits = arm_vector_bits,
};

/* ---- lookup ---- */

static const tsl_arch_info *const infos[] = {&x86_info, &arm_info};
#define NINFOS ((int)(sizeof infos / sizeof infos[0]))

const tsl_arch_info *const *tsl_arch_infos(int *count) {
  *count = NINFOS;
  return infos;
}

const tsl_arch_info *tsl_arch_info_of(tsl_arch arch) {
  for (int i = 0; i < NINFOS; i++)
    if (infos[i]->arch == arch) return infos[i];
  return NULL;
}

const tsl_arch_info *tsl_arch_info_for_triple(const char *triple) {
  for (int i = 0; i < NINFOS; i++)
    if (infos[i]->matches_triple(triple)) return infos[i];
  return NULL;
}
