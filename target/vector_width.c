/* The vector widths a target offers, and a target narrowed to one of them (target.h). */
#include <stdio.h>
#include <string.h>

#include "target/arch.h"
#include "target/target.h"

int tsl_target_vector_widths(const tsl_target *t, int *widths) {
  int n = 0;
  if (!t || !widths) return 0;
  widths[n++] = t->vector_bits;
  /* AVX-512 keeps AVX2 underneath: 256-bit code without mask registers is a real choice
   * (on Zen 5 a chain of float max as vcmpps-to-mask, korb, masked move runs about 2x
   * slower than AVX2's compare, or, blend: docs/dsl.md, as_maxpool) */
  if (t->arch == TSL_ARCH_X86_64 && t->vector_bits == 512) widths[n++] = 256;
  return n;
}

/* Features of the 512-bit x86 ISA (and what builds on it), left out at 256 bits. */
static bool is_avx512_feature(const char *f, size_t len) {
  static const char *const prefixes[] = {"+avx512", "+evex512", "+avx10"};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
    size_t k = strlen(prefixes[i]);
    if (len >= k && strncmp(f, prefixes[i], k) == 0) return true;
  }
  return false;
}

/* t's feature string without the AVX-512 features, then "-avx512f" (which also turns off
 * every feature LLVM derives from it). false when it does not fit. */
static bool x86_features_at_256(const tsl_target *t, char *out, size_t n) {
  size_t len = 0;
  out[0] = '\0';
  for (const char *p = t->features; *p;) {
    const char *end = strchr(p, ',');
    size_t k = end ? (size_t)(end - p) : strlen(p);
    if (k > 0 && !is_avx512_feature(p, k)) {
      if (len + k + 2 >= n) return false;
      if (len) out[len++] = ',';
      memcpy(out + len, p, k);
      len += k;
      out[len] = '\0';
    }
    p = end ? end + 1 : p + k;
  }
  return snprintf(out + len, n - len, "%s-avx512f", len ? "," : "") < (int)(n - len);
}

tsl_status tsl_target_with_vector_bits(const tsl_target *t, int bits, tsl_target *out) {
  if (!t || !out) return tsl_error(TSL_ERR_INVALID, "target: NULL argument");
  int widths[TSL_TARGET_MAX_VECTOR_WIDTHS];
  int n = tsl_target_vector_widths(t, widths);
  bool offered = false;
  for (int i = 0; i < n; i++) offered |= widths[i] == bits;
  if (!offered) {
    char list[64] = "";
    for (int i = 0, len = 0; i < n && len < (int)sizeof list; i++)
      len += snprintf(list + len, sizeof list - (size_t)len, "%s%d", i ? ", " : "", widths[i]);
    return tsl_error(TSL_ERR_UNSUPPORTED, "target %s: no %d-bit vectors (widths: %s)", t->name, bits, list);
  }
  tsl_target narrowed = *t;
  if (bits != t->vector_bits) {
    /* the only narrower width offered: x86-64 AVX-512 at 256 */
    if (!x86_features_at_256(t, narrowed.features, sizeof narrowed.features))
      return tsl_error(TSL_ERR_UNSUPPORTED, "target %s: feature string too long to narrow", t->name);
    narrowed.vector_bits = tsl_arch_info_of(t->arch)->vector_bits(&narrowed);
  }
  *out = narrowed;
  return TSL_OK;
}

tsl_status tsl_target_keep_vector_bits(tsl_target *t) {
  if (!t) return tsl_error(TSL_ERR_INVALID, "target: NULL argument");
  /* the width of what t's CPU implies (its features not turned off by t's string) */
  tsl_target implied = *t;
  tsl_target_implied_features(t, implied.features, sizeof implied.features);
  if (tsl_arch_info_of(t->arch)->vector_bits(&implied) <= t->vector_bits) return TSL_OK;
  /* the only wider ISA a CPU can add to a narrower class: AVX-512 to x86-64 at 256 */
  if (t->arch != TSL_ARCH_X86_64 || t->vector_bits != 256 ||
      !x86_features_at_256(t, implied.features, sizeof implied.features))
    return tsl_error(TSL_ERR_UNSUPPORTED, "target %s -mcpu=%s: cannot keep %d-bit vectors", t->name, t->cpu,
                     t->vector_bits);
  memcpy(t->features, implied.features, sizeof t->features);
  return TSL_OK;
}
