/* The CPU names -mcpu= accepts and the vector features each implies (target/cpus.h). */
#include "target/cpus.h"

#include <stdio.h>
#include <string.h>

#include "target/arch.h"
#include "target/target.h"

/* One row per CPU: its architecture, LLVM 19's name and the features of LLVM's model of
 * it that generated code can use without intrinsics (target.h, tsl_target_cpu_features).
 * x86: every 64-bit CPU of `llc-19 -mtriple=x86_64 -mcpu=help` without the underscore
 * spellings; its features are those of `clang-19 -march=CPU -dM -E` among avx, avx2,
 * fma, fma4 and xop (vector FMAs, shifts and rotates), f16c and avx512fp16 (f16 storage
 * casts), avx512f/cd/bw/dq/vl, avx512vnni and avxvnni (the multiply-add combine),
 * avx512vpopcntdq and avx512bitalg (vector popcount: the binary kernels), avx512vbmi and
 * avx512vbmi2 (byte permutes, funnel shifts) and gfni (byte shifts); crypto, IFMA and
 * BF16 are left out (intrinsics only, or no tessel type). AArch64: as before, the
 * architecture level and dotprod, fullfp16 and SVE where the CPU has them. */
static const struct {
  tsl_arch arch;
  const char *cpu, *features;
} cpus[] = {
    {TSL_ARCH_X86_64, "x86-64", ""},
    {TSL_ARCH_X86_64, "x86-64-v2", ""},
    {TSL_ARCH_X86_64, "x86-64-v3", "+avx,+avx2,+fma,+f16c"},
    {TSL_ARCH_X86_64, "x86-64-v4", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl"},
    {TSL_ARCH_X86_64, "k8", ""},
    {TSL_ARCH_X86_64, "k8-sse3", ""},
    {TSL_ARCH_X86_64, "opteron", ""},
    {TSL_ARCH_X86_64, "opteron-sse3", ""},
    {TSL_ARCH_X86_64, "athlon64", ""},
    {TSL_ARCH_X86_64, "athlon64-sse3", ""},
    {TSL_ARCH_X86_64, "athlon-fx", ""},
    {TSL_ARCH_X86_64, "amdfam10", ""},
    {TSL_ARCH_X86_64, "barcelona", ""},
    {TSL_ARCH_X86_64, "bdver1", "+avx,+fma4,+xop"},
    {TSL_ARCH_X86_64, "bdver2", "+avx,+fma,+fma4,+xop,+f16c"},
    {TSL_ARCH_X86_64, "bdver3", "+avx,+fma,+fma4,+xop,+f16c"},
    {TSL_ARCH_X86_64, "btver1", ""},
    {TSL_ARCH_X86_64, "nocona", ""},
    {TSL_ARCH_X86_64, "core2", ""},
    {TSL_ARCH_X86_64, "penryn", ""},
    {TSL_ARCH_X86_64, "nehalem", ""},
    {TSL_ARCH_X86_64, "corei7", ""},
    {TSL_ARCH_X86_64, "westmere", ""},
    {TSL_ARCH_X86_64, "bonnell", ""},
    {TSL_ARCH_X86_64, "atom", ""},
    {TSL_ARCH_X86_64, "silvermont", ""},
    {TSL_ARCH_X86_64, "slm", ""},
    {TSL_ARCH_X86_64, "goldmont", ""},
    {TSL_ARCH_X86_64, "goldmont-plus", ""},
    {TSL_ARCH_X86_64, "tremont", "+gfni"},
    {TSL_ARCH_X86_64, "gracemont", "+avx,+avx2,+fma,+f16c,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "corei7-avx", "+avx"},
    {TSL_ARCH_X86_64, "core-avx-i", "+avx,+f16c"},
    {TSL_ARCH_X86_64, "core-avx2", "+avx,+avx2,+fma,+f16c"},
    {TSL_ARCH_X86_64, "skx", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl"},
    {TSL_ARCH_X86_64, "knl", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd"},
    {TSL_ARCH_X86_64, "knm", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512vpopcntdq"},
    {TSL_ARCH_X86_64, "sandybridge", "+avx"},
    {TSL_ARCH_X86_64, "ivybridge", "+avx,+f16c"},
    {TSL_ARCH_X86_64, "haswell", "+avx,+avx2,+fma,+f16c"},
    {TSL_ARCH_X86_64, "broadwell", "+avx,+avx2,+fma,+f16c"},
    {TSL_ARCH_X86_64, "skylake", "+avx,+avx2,+fma,+f16c"},
    {TSL_ARCH_X86_64, "skylake-avx512", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl"},
    {TSL_ARCH_X86_64, "cascadelake", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx512vnni"},
    {TSL_ARCH_X86_64, "cooperlake", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx512vnni"},
    {TSL_ARCH_X86_64, "cannonlake", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx512vbmi"},
    {TSL_ARCH_X86_64, "icelake-client", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx512vnni,+avx512vpopcntdq,+avx512bitalg,+avx512vbmi,+avx512vbmi2,+gfni"},
    {TSL_ARCH_X86_64, "icelake-server", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx512vnni,+avx512vpopcntdq,+avx512bitalg,+avx512vbmi,+avx512vbmi2,+gfni"},
    {TSL_ARCH_X86_64, "tigerlake", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx512vnni,+avx512vpopcntdq,+avx512bitalg,+avx512vbmi,+avx512vbmi2,+gfni"},
    {TSL_ARCH_X86_64, "rocketlake", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx512vnni,+avx512vpopcntdq,+avx512bitalg,+avx512vbmi,+avx512vbmi2,+gfni"},
    {TSL_ARCH_X86_64, "sapphirerapids", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx512vnni,+avx512vpopcntdq,+avx512bitalg,+avx512vbmi,+avx512vbmi2,+avx512fp16,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "emeraldrapids", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx512vnni,+avx512vpopcntdq,+avx512bitalg,+avx512vbmi,+avx512vbmi2,+avx512fp16,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "graniterapids", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx512vnni,+avx512vpopcntdq,+avx512bitalg,+avx512vbmi,+avx512vbmi2,+avx512fp16,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "graniterapids-d", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx512vnni,+avx512vpopcntdq,+avx512bitalg,+avx512vbmi,+avx512vbmi2,+avx512fp16,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "alderlake", "+avx,+avx2,+fma,+f16c,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "raptorlake", "+avx,+avx2,+fma,+f16c,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "meteorlake", "+avx,+avx2,+fma,+f16c,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "arrowlake", "+avx,+avx2,+fma,+f16c,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "arrowlake-s", "+avx,+avx2,+fma,+f16c,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "lunarlake", "+avx,+avx2,+fma,+f16c,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "pantherlake", "+avx,+avx2,+fma,+f16c,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "sierraforest", "+avx,+avx2,+fma,+f16c,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "grandridge", "+avx,+avx2,+fma,+f16c,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "clearwaterforest", "+avx,+avx2,+fma,+f16c,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "znver1", "+avx,+avx2,+fma,+f16c"},
    {TSL_ARCH_X86_64, "znver2", "+avx,+avx2,+fma,+f16c"},
    {TSL_ARCH_X86_64, "znver3", "+avx,+avx2,+fma,+f16c"},
    {TSL_ARCH_X86_64, "znver4", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx512vnni,+avx512vpopcntdq,+avx512bitalg,+avx512vbmi,+avx512vbmi2,+gfni"},
    {TSL_ARCH_X86_64, "znver5", "+avx,+avx2,+fma,+f16c,+avx512f,+avx512cd,+avx512bw,+avx512dq,+avx512vl,+avx512vnni,+avx512vpopcntdq,+avx512bitalg,+avx512vbmi,+avx512vbmi2,+gfni,+avxvnni"},
    {TSL_ARCH_X86_64, "btver2", "+avx,+f16c"},
    {TSL_ARCH_X86_64, "bdver4", "+avx,+avx2,+fma,+fma4,+xop,+f16c"},
    {TSL_ARCH_AARCH64, "generic", ""},
    {TSL_ARCH_AARCH64, "cortex-a53", ""},
    {TSL_ARCH_AARCH64, "cortex-a55", "+v8.2a,+dotprod,+fullfp16"},
    {TSL_ARCH_AARCH64, "cortex-a57", ""},
    {TSL_ARCH_AARCH64, "cortex-a72", ""},
    {TSL_ARCH_AARCH64, "cortex-a73", ""},
    {TSL_ARCH_AARCH64, "cortex-a75", "+v8.2a,+dotprod,+fullfp16"},
    {TSL_ARCH_AARCH64, "cortex-a76", "+v8.2a,+dotprod,+fullfp16"},
    {TSL_ARCH_AARCH64, "cortex-a77", "+v8.2a,+dotprod,+fullfp16"},
    {TSL_ARCH_AARCH64, "cortex-a78", "+v8.2a,+dotprod,+fullfp16"},
    {TSL_ARCH_AARCH64, "cortex-a510", "+v8.2a,+dotprod,+fullfp16,+sve,+sve2"},
    {TSL_ARCH_AARCH64, "cortex-a710", "+v8.2a,+dotprod,+fullfp16,+sve,+sve2"},
    {TSL_ARCH_AARCH64, "cortex-x1", "+v8.2a,+dotprod,+fullfp16"},
    {TSL_ARCH_AARCH64, "cortex-x2", "+v8.2a,+dotprod,+fullfp16,+sve,+sve2"},
    {TSL_ARCH_AARCH64, "neoverse-n1", "+v8.2a,+dotprod,+fullfp16"},
    {TSL_ARCH_AARCH64, "neoverse-n2", "+v8.2a,+dotprod,+fullfp16,+sve,+sve2"},
    {TSL_ARCH_AARCH64, "neoverse-v1", "+v8.2a,+dotprod,+fullfp16,+sve"},
    {TSL_ARCH_AARCH64, "neoverse-v2", "+v8.2a,+dotprod,+fullfp16,+sve,+sve2"},
    {TSL_ARCH_AARCH64, "apple-m1", "+v8.2a,+dotprod,+fullfp16"},
    {TSL_ARCH_AARCH64, "apple-m2", "+v8.2a,+dotprod,+fullfp16"},
    {TSL_ARCH_AARCH64, "carmel", "+v8.2a,+fullfp16"},
    {TSL_ARCH_AARCH64, "thunderx2t99", ""},
    {TSL_ARCH_AARCH64, "ampere1", "+v8.2a,+dotprod,+fullfp16"},
};

const char *tsl_target_cpu_features(const char *cpu) {
  for (size_t i = 0; cpu && i < sizeof cpus / sizeof cpus[0]; i++)
    if (strcmp(cpus[i].cpu, cpu) == 0) return cpus[i].features;
  return "";
}

bool tsl_target_cpu_known(tsl_arch arch, const char *cpu, char *list, size_t n) {
  size_t len = 0;
  bool first = true;
  if (list && n) list[0] = '\0';
  for (size_t i = 0; i < sizeof cpus / sizeof cpus[0]; i++) {
    if (cpus[i].arch != arch) continue;
    if (cpu && strcmp(cpus[i].cpu, cpu) == 0) return true;
    if (!list || len >= n) continue;
    int w = snprintf(list + len, n - len, "%s%s", first ? "" : ", ", cpus[i].cpu);
    first = false;
    if (w < 0 || (size_t)w >= n - len) len = n;
    else len += (size_t)w;
  }
  return false;
}

/* Does every "+x" of `row` appear in `features`? */
static bool row_within(const char *row, const char *features) {
  char name[64];
  for (const char *p = row; tsl_feature_string_next(&p, name, sizeof name);)
    if (!tsl_feature_string_has(features, name)) return false;
  return true;
}

size_t tsl_target_cpus_within(tsl_arch arch, const char *features, char *list, size_t n) {
  size_t len = 0, count = 0;
  if (!list || n == 0) return 0;
  list[0] = '\0';
  for (size_t i = 0; i < sizeof cpus / sizeof cpus[0]; i++) {
    if (cpus[i].arch != arch || !cpus[i].features[0] || !row_within(cpus[i].features, features ? features : ""))
      continue;
    int w = snprintf(list + len, n - len, "%s%s", count ? ", " : "", cpus[i].cpu);
    if (w < 0 || (size_t)w >= n - len) { /* never a cut name */
      list[len] = '\0';
      break;
    }
    len += (size_t)w;
    count++;
  }
  return count;
}
