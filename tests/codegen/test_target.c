/* Targets, the JIT's lifecycle and symbols, LLVM IR / assembly text, and errors
 * that must be reported (never aborts). */
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/kernel_abi.h"
#include "codegen/llvm.h"
#include "codegen/machine.h"
#include "target/arch.h"
#include "target/cpus.h"
#include "target/host_probe.h"
#include "tests/codegen/cg_util.h"
#include "tests/x86_level.h"

/* ---- target strings ---- */

static void test_target_parse_known_targets(void) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &t), TSL_OK);
  CU_ASSERT_EQUAL(t.arch, TSL_ARCH_X86_64);
  CU_ASSERT_EQUAL(t.vector_bits, 256);
  CU_ASSERT_STRING_EQUAL(t.cpu, "x86-64-v3");
  CU_ASSERT(tsl_target_has_feature(&t, "avx2") && tsl_target_has_feature(&t, "fma"));
  CU_ASSERT(!tsl_target_has_feature(&t, "avx512f"));
  CU_ASSERT(!t.is_host);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &t), TSL_OK);
  CU_ASSERT_EQUAL(t.vector_bits, 512);
  CU_ASSERT(tsl_target_has_feature(&t, "avx512bw"));
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &t), TSL_OK);
  CU_ASSERT_EQUAL(t.arch, TSL_ARCH_AARCH64);
  CU_ASSERT_STRING_EQUAL(t.triple, "aarch64-linux-gnu");
  CU_ASSERT_STRING_EQUAL(t.cpu, "cortex-a53");
  CU_ASSERT(tsl_target_has_feature(&t, "neon"));
  CU_ASSERT(!tsl_target_has_feature(&t, "dotprod"));
  CU_ASSERT_EQUAL(t.vector_bits, 128);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8.2-a+dotprod", &t), TSL_OK);
  CU_ASSERT(tsl_target_has_feature(&t, "dotprod"));
  CU_ASSERT_EQUAL(t.vector_bits, 128);
  CU_ASSERT(t.l1d_bytes > 0 && t.l2_bytes > t.l1d_bytes);
}

static void test_target_host_detection(void) {
  tsl_target t, h;
  CU_ASSERT_EQUAL_FATAL(tsl_target_detected_host(&t), TSL_OK);
  /* "host" is the detected machine unless TSL_HOST_TARGET forces another target */
  const char *forced = getenv(TSL_HOST_TARGET_ENV);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &h), TSL_OK);
  if (!forced || !*forced)
    CU_ASSERT(h.is_host && strcmp(h.cpu, t.cpu) == 0 && strcmp(h.features, t.features) == 0 &&
              h.vector_bits == t.vector_bits && h.l2_bytes == t.l2_bytes);
  CU_ASSERT(t.is_host);
  CU_ASSERT(t.cpu[0] != '\0' && t.triple[0] != '\0');
  int want_bits = tsl_target_has_feature(&t, "avx512f") ? 512 : tsl_target_has_feature(&t, "avx") ? 256 : 128;
  if (t.arch == TSL_ARCH_X86_64) CU_ASSERT_EQUAL(t.vector_bits, want_bits);
  CU_ASSERT(t.l1d_bytes >= 4096 && t.l1d_bytes <= (1 << 20));
  CU_ASSERT(t.l2_bytes >= t.l1d_bytes);
  /* glibc reads the cache sizes from cpuid: an independent source when it answers */
  long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l1 > 0) CU_ASSERT_EQUAL(t.l1d_bytes, l1);
  if (l2 > 0) CU_ASSERT_EQUAL(t.l2_bytes, l2);
  CU_ASSERT(tsl_target_runs_on_host(&t, NULL));
}

/* The seam of target/host_probe.h: codegen/'s probe reports LLVM's own view of the
 * machine, and the detected host (target/, no LLVM) is built from exactly that. */
static void test_target_host_probe_is_llvms_view(void) {
  tsl_target p, t;
  memset(&p, 0, sizeof p);
  CU_ASSERT_EQUAL_FATAL(tsl_target_probe_host(&p), TSL_OK);
  char *triple = LLVMGetDefaultTargetTriple(), *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
  CU_ASSERT_STRING_EQUAL(p.triple, triple);
  CU_ASSERT_STRING_EQUAL(p.cpu, cpu);
  CU_ASSERT_STRING_EQUAL(p.features, features);
  LLVMDisposeMessage(triple);
  LLVMDisposeMessage(cpu);
  LLVMDisposeMessage(features);
  CU_ASSERT(p.name[0] == '\0' && p.vector_bits == 0 && !p.is_host); /* touches nothing else */
  CU_ASSERT_EQUAL_FATAL(tsl_target_detected_host(&t), TSL_OK);
  CU_ASSERT_STRING_EQUAL(t.triple, p.triple);
  CU_ASSERT_STRING_EQUAL(t.cpu, p.cpu);
  CU_ASSERT_STRING_EQUAL(t.features, p.features);
}

/* TSL_HOST_TARGET redefines "host" (the second x86 pass of scripts/test.sh): a target
 * that runs here is taken as it is; one that cannot, host itself, a -device, a CPU that
 * enables more than the target has, or an unknown name are refused naming the variable.
 * Which x86 targets run here comes from tsl_test_x86_level(), not from tessel. */
static void test_target_host_forced_by_environment(void) {
  const char *saved = getenv(TSL_HOST_TARGET_ENV);
  char keep[256] = "";
  if (saved) snprintf(keep, sizeof keep, "%s", saved);
  tsl_target det, t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_detected_host(&det), TSL_OK);
  char buf[256];
  int level = tsl_test_x86_level();
  if (det.arch == TSL_ARCH_X86_64) {
    setenv(TSL_HOST_TARGET_ENV, "x86-64-avx2", 1);
    tsl_status st = tsl_target_parse("host", &t);
    if (level < 3) { /* no AVX2 here: refused naming what is missing */
      CU_ASSERT_EQUAL(st, TSL_ERR_UNSUPPORTED);
      CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "feature"));
    } else {
      CU_ASSERT_EQUAL(st, TSL_OK);
      CU_ASSERT_STRING_EQUAL(t.name, "x86-64-avx2");
      CU_ASSERT_EQUAL(t.vector_bits, 256);
      CU_ASSERT_EQUAL(tsl_target_f32_lanes(&t), 8);
      CU_ASSERT(!t.is_host);
      CU_ASSERT_STRING_EQUAL(tsl_target_str(&t, buf, sizeof buf), "x86-64-avx2");
      CU_ASSERT(tsl_target_runs_on_host(&t, NULL));
      /* the machine is now an AVX2 one: AVX-512 code is refused naming the feature, and
       * so is AVX2 code whose CPU enables AVX-512 */
      tsl_target wide;
      const char *why = NULL;
      CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &wide), TSL_OK);
      CU_ASSERT(!tsl_target_runs_on_host(&wide, &why));
      CU_ASSERT(why && strstr(why, "feature avx512") && strstr(why, "TSL_HOST_TARGET=x86-64-avx2"));
      tsl_jit *j = NULL;
      CU_ASSERT_EQUAL(tsl_jit_new(&wide, &j), TSL_ERR_UNSUPPORTED);
      CU_ASSERT_PTR_NULL(j);
      /* AVX2 code for a Zen 4 has its AVX-512 off but may use the Zen 4's GFNI */
      CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2 -mcpu=znver4", &wide), TSL_OK);
      CU_ASSERT(!tsl_target_runs_on_host(&wide, &why));
      CU_ASSERT(why && strstr(why, "feature gfni") && strstr(why, "-mcpu=znver4") && !strstr(why, "avx512"));
      /* options of the forced target and of the "host" string both apply */
      setenv(TSL_HOST_TARGET_ENV, "x86-64-avx2 -mcpu=znver3", 1);
      CU_ASSERT_EQUAL(tsl_target_parse("host -device=tcp://127.0.0.1:9190", &t), TSL_OK);
      CU_ASSERT_STRING_EQUAL(t.cpu, "znver3");
      CU_ASSERT_STRING_EQUAL(t.device, "tcp://127.0.0.1:9190");
    }
    /* a forced AVX2 host whose CPU would add a feature (Zen 4: GFNI; its AVX-512 is off)
     * is no AVX2 host; the message names CPUs that add none */
    setenv(TSL_HOST_TARGET_ENV, "x86-64-avx2 -mcpu=znver4", 1);
    CU_ASSERT_EQUAL(tsl_target_parse("host", &t), TSL_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "-mcpu=znver4 enables gfni"));
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "znver3"));
    CU_ASSERT_PTR_NULL(strstr(tsl_last_error(), "znver4,"));
    /* nor one whose CPU would emit XOP and FMA4 (Piledriver), nor an AVX-512 one whose
     * CPU would emit vpopcntq (Knights Mill) */
    setenv(TSL_HOST_TARGET_ENV, "x86-64-avx2 -mcpu=bdver2", 1);
    CU_ASSERT_EQUAL(tsl_target_parse("host", &t), TSL_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "-mcpu=bdver2 enables fma4"));
    setenv(TSL_HOST_TARGET_ENV, "x86-64-avx512 -mcpu=knm", 1);
    CU_ASSERT_EQUAL(tsl_target_parse("host", &t), TSL_ERR_INVALID);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "-mcpu=knm enables avx512vpopcntdq"));
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "skylake-avx512"));
    CU_ASSERT_PTR_NULL(strstr(tsl_last_error(), "icelake-server"));
    /* AVX-512: taken where the machine has it, refused naming the feature where not */
    setenv(TSL_HOST_TARGET_ENV, "x86-64-avx512", 1);
    st = tsl_target_parse("host", &t);
    if (level >= 4) {
      CU_ASSERT_EQUAL(st, TSL_OK);
      CU_ASSERT_EQUAL(t.vector_bits, 512);
    } else {
      CU_ASSERT_EQUAL(st, TSL_ERR_UNSUPPORTED);
      CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "feature"));
    }
    setenv(TSL_HOST_TARGET_ENV, "armv8", 1);
    CU_ASSERT_EQUAL(tsl_target_parse("host", &t), TSL_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "TSL_HOST_TARGET=armv8"));
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "aarch64"));
  }
  setenv(TSL_HOST_TARGET_ENV, " host", 1);
  CU_ASSERT_EQUAL(tsl_target_parse("host", &t), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "TSL_HOST_TARGET"));
  setenv(TSL_HOST_TARGET_ENV, "x86-64-avx3", 1);
  CU_ASSERT_EQUAL(tsl_target_parse("host", &t), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "unknown target"));
  setenv(TSL_HOST_TARGET_ENV, "x86-64-avx2 -device=tcp://10.0.0.1:9190", 1);
  CU_ASSERT_EQUAL(tsl_target_parse("host", &t), TSL_ERR_INVALID);
  /* other names are never redefined; an empty variable is no override */
  CU_ASSERT_EQUAL(tsl_target_parse("armv8", &t), TSL_OK);
  setenv(TSL_HOST_TARGET_ENV, "", 1);
  CU_ASSERT_EQUAL(tsl_target_parse("host", &t), TSL_OK);
  CU_ASSERT(t.is_host);
  if (saved) setenv(TSL_HOST_TARGET_ENV, keep, 1);
  else unsetenv(TSL_HOST_TARGET_ENV);
}

static void test_target_mcpu_override_and_string_round_trip(void) {
  tsl_target t, u;
  char s[256], s2[256];
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8  -mcpu=cortex-a72", &t), TSL_OK);
  CU_ASSERT_STRING_EQUAL(t.cpu, "cortex-a72");
  CU_ASSERT_STRING_EQUAL(tsl_target_str(&t, s, sizeof s), "armv8 -mcpu=cortex-a72");
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse(s, &u), TSL_OK);
  CU_ASSERT_STRING_EQUAL(tsl_target_str(&u, s2, sizeof s2), s);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &t), TSL_OK);
  CU_ASSERT_STRING_EQUAL(tsl_target_str(&t, s, sizeof s), "x86-64-avx2");
  CU_ASSERT_EQUAL_FATAL(tsl_target_detected_host(&t), TSL_OK);
  tsl_target_str(&t, s, sizeof s);
  CU_ASSERT_PTR_NOT_NULL(strstr(s, "-mcpu=")); /* records say which machine measured */
  const char *forced = getenv(TSL_HOST_TARGET_ENV);
  if (!forced || !*forced) { /* else "host" names the forced target */
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse(s, &u), TSL_OK);
    CU_ASSERT_STRING_EQUAL(u.cpu, t.cpu);
    CU_ASSERT_STRING_EQUAL(u.features, t.features);
  }
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8 -device=tcp://10.0.0.2:9090", &t), TSL_OK);
  CU_ASSERT_STRING_EQUAL(t.device, "tcp://10.0.0.2:9090");
  CU_ASSERT_STRING_EQUAL(tsl_target_str(&t, s, sizeof s), "armv8 -device=tcp://10.0.0.2:9090");
}

/* A machine described by its CPU and LLVM feature string (as a detected host is). */
static tsl_target machine(const char *cpu, const char *features) {
  tsl_target m;
  memset(&m, 0, sizeof m);
  snprintf(m.name, sizeof m.name, "host");
  m.arch = TSL_ARCH_X86_64;
  snprintf(m.cpu, sizeof m.cpu, "%s", cpu);
  snprintf(m.features, sizeof m.features, "%s", features);
  return m;
}

/* The CPU rows against Intel's and AMD's ISA lists: Rocket Lake, Emerald Rapids, Knights
 * Landing have AVX-512 F; Sierra Forest, Arrow Lake, Gracemont and Bulldozer do not
 * (Piledriver adds FMA, Bulldozer has AVX only); every name parses after a preset of its
 * class. A machine whose feature string disables AVX-512 (a VM hiding it on a CPU that
 * has it) does not run AVX-512 code whatever its CPU is; one whose string only omits it
 * gets it from its CPU's row. */
static void test_target_new_cpus_and_disabled_features(void) {
  const char *wide[] = {"rocketlake", "emeraldrapids", "graniterapids-d", "skx", "knl"};
  const char *narrow[] = {"sierraforest", "arrowlake", "lunarlake", "gracemont", "bdver2", "core-avx2"};
  tsl_target t;
  for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++) {
    CU_ASSERT(strstr(tsl_target_cpu_features(wide[i]), "+avx512f") != NULL);
    char s[96];
    snprintf(s, sizeof s, "x86-64-avx512 -mcpu=%s", wide[i]);
    CU_ASSERT_EQUAL(tsl_target_parse(s, &t), TSL_OK);
  }
  for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; i++) {
    CU_ASSERT(strstr(tsl_target_cpu_features(narrow[i]), "avx512") == NULL);
    CU_ASSERT(strstr(tsl_target_cpu_features(narrow[i]), "+fma") != NULL);
    char s[96];
    snprintf(s, sizeof s, "x86-64-avx2 -mcpu=%s", narrow[i]);
    CU_ASSERT_EQUAL(tsl_target_parse(s, &t), TSL_OK);
  }
  CU_ASSERT_STRING_EQUAL(tsl_target_cpu_features("bdver1"), "+avx,+fma4,+xop"); /* AMD: FMA4 and XOP, no FMA3 */
  CU_ASSERT_EQUAL(tsl_target_parse("x86-64-avx2 -mcpu=pentium4", &t), TSL_ERR_UNSUPPORTED); /* 32-bit only */

  /* the machines: the AVX2 level's features, with AVX-512 disabled, or with one AVX-512
   * feature (cd) spelled out and the others left to the CPU's row */
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &t), TSL_OK);
  char base[512], feats[1024];
  snprintf(base, sizeof base, "%.511s", t.features);
  snprintf(feats, sizeof feats, "%s,-avx512f,-avx512bw,-avx512cd,-avx512dq,-avx512vl,-avx512vnni", base);
  tsl_target hidden = machine("rocketlake", feats);
  snprintf(feats, sizeof feats, "%s,+avx512cd", base);
  tsl_target implied = machine("rocketlake", feats), client = machine("sierraforest", feats);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &t), TSL_OK);
  char why[192] = "";
  CU_ASSERT_FALSE(tsl_target_runs_on(&t, &hidden, why, sizeof why));
  CU_ASSERT_PTR_NOT_NULL(strstr(why, "avx512f"));
  CU_ASSERT_TRUE(tsl_target_runs_on(&t, &implied, why, sizeof why));
  CU_ASSERT_FALSE(tsl_target_runs_on(&t, &client, why, sizeof why));
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &t), TSL_OK);
  CU_ASSERT_TRUE(tsl_target_runs_on(&t, &hidden, why, sizeof why));
  CU_ASSERT_FALSE(tsl_target_runs_on(&t, NULL, why, sizeof why));
}

static void test_target_unknown_string_is_unsupported_and_lists_known(void) {
  tsl_target t;
  CU_ASSERT_EQUAL(tsl_target_parse("riscv64", &t), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "riscv64"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "x86-64-avx512"));
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "armv8.2-a+dotprod"));
  CU_ASSERT_EQUAL(tsl_target_parse("armv8 -march=foo", &t), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_target_parse("armv8 -mcpu=", &t), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_target_parse("armv8 -mcpu=a;b", &t), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_target_parse("", &t), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_target_parse(NULL, &t), TSL_ERR_INVALID);
}

/* ---- a small kernel used below: out[i] = fma(a[i], b[i], out[i]) over 16 lanes ---- */

static tsl_func *fma16_kernel(const char *name, int n) {
  tsl_buffer *a = cg_buf("a", TSL_F32, n), *b = cg_buf("b", TSL_F32, n), *o = cg_buf("o", TSL_F32, n);
  tsl_expr *io = tsl_var("io", TSL_I64), *base = tsl_mul(io, tsl_i64(16));
  tsl_expr *args[3] = {cg_ldv(a, base, 16), cg_ldv(b, base, 16), cg_ldv(o, base, 16)};
  tsl_expr *v = tsl_call(TSL_CALL_FMA, tsl_type_with_lanes(TSL_F32, 16), 3, args);
  tsl_stmt *s = tsl_for(io, tsl_i64(0), tsl_i64(n / 16), TSL_FOR_SERIAL, cg_stv(o, base, 16, v));
  return cg_func(name, 3, (tsl_buffer *[]){a, b, o}, s);
}

static tsl_func *popcount8_kernel(void) {
  tsl_buffer *a = cg_buf("a", TSL_U64, 64), *o = cg_buf("o", TSL_U64, 64);
  tsl_expr *io = tsl_var("io", TSL_I64), *base = tsl_mul(io, tsl_i64(8));
  tsl_expr *x = tsl_call(TSL_CALL_BIT_XOR, tsl_type_with_lanes(TSL_U64, 8), 2,
                         (tsl_expr *[]){cg_ldv(a, base, 8), cg_ldv(o, base, 8)});
  tsl_expr *v = tsl_call(TSL_CALL_POPCOUNT, x->type, 1, &x);
  return cg_func("popcount8", 2, (tsl_buffer *[]){a, o},
                 tsl_for(io, tsl_i64(0), tsl_i64(8), TSL_FOR_SERIAL, cg_stv(o, base, 8, v)));
}

static char *asm_for(tsl_func *f, const char *target) {
  tsl_target t;
  char *text = NULL;
  if (tsl_target_parse(target, &t) != TSL_OK) return NULL;
  if (tsl_codegen_asm(f, &t, &text) != TSL_OK) {
    fprintf(stderr, "\n    [asm %s: %s]\n", target, tsl_last_error());
    return NULL;
  }
  return text;
}

/* A named target keeps its class's vector width whatever -mcpu= names: x86-64-avx2 for a
 * Zen 4 is 256-bit code with the Zen 4's AVX-512 off (every AVX-512 feature with it, as in
 * LLVM), so it runs on a Zen 4 and, but for the Zen 4's GFNI, on a Zen 3; its string round
 * trips; x86-64-avx512 keeps what its CPU adds (VPOPCNTDQ); narrowing to 256 bits drops
 * the CPU's AVX-512 features from what the code may use. */
static void test_target_keeps_its_vector_width_under_any_cpu(void) {
  tsl_target t, back;
  char buf[256], implied[512];
  CU_ASSERT_TRUE(tsl_feature_string_disables("+avx2,-avx512f", "avx512vpopcntdq"));
  CU_ASSERT_TRUE(tsl_feature_string_disables("+avx2,-avx512f", "avx512f"));
  CU_ASSERT_FALSE(tsl_feature_string_disables("+avx2,-avx512f", "avxvnni")); /* VEX: not AVX-512 */
  CU_ASSERT_FALSE(tsl_feature_string_disables("+avx2,-avx512vl", "avx512f"));
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2 -mcpu=znver4", &t), TSL_OK);
  CU_ASSERT_EQUAL(t.vector_bits, 256);
  CU_ASSERT_EQUAL(tsl_target_f32_lanes(&t), 8);
  CU_ASSERT_STRING_EQUAL(t.cpu, "znver4");
  CU_ASSERT_TRUE(tsl_feature_string_disables(t.features, "avx512f"));
  tsl_target_implied_features(&t, implied, sizeof implied);
  CU_ASSERT_PTR_NULL(strstr(implied, "avx512"));
  CU_ASSERT_TRUE(tsl_feature_string_has(implied, "gfni"));
  CU_ASSERT_STRING_EQUAL(tsl_target_str(&t, buf, sizeof buf), "x86-64-avx2 -mcpu=znver4");
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse(buf, &back), TSL_OK);
  CU_ASSERT_STRING_EQUAL(back.features, t.features);
  /* where it runs: a Zen 4 (its features, AVX-512 among them) and a Zen 3 with GFNI; not
   * a Zen 3 without */
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &back), TSL_OK);
  char feats[1024], why[192] = "";
  snprintf(feats, sizeof feats, "%.700s,+avx512f,+avx512bw,+avx512vl,+gfni", back.features);
  tsl_target zen4 = machine("znver4", feats);
  CU_ASSERT_TRUE(tsl_target_runs_on(&t, &zen4, why, sizeof why));
  snprintf(feats, sizeof feats, "%.700s,+gfni", back.features);
  tsl_target zen3_gfni = machine("znver3", feats);
  CU_ASSERT_TRUE(tsl_target_runs_on(&t, &zen3_gfni, why, sizeof why));
  tsl_target zen3 = machine("znver3", back.features);
  CU_ASSERT_FALSE(tsl_target_runs_on(&t, &zen3, why, sizeof why));
  CU_ASSERT_PTR_NOT_NULL(strstr(why, "gfni"));
  /* the code itself: no zmm register, no vector popcount (AVX-512 VPOPCNTDQ) */
  tsl_func *pop = popcount8_kernel();
  char *text = asm_for(pop, "x86-64-avx2 -mcpu=znver4");
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_PTR_NULL(strstr(text, "zmm"));
  CU_ASSERT_PTR_NULL(strstr(text, "vpopcnt"));
  free(text);
  text = asm_for(pop, "x86-64-avx512 -mcpu=znver4");
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_PTR_NOT_NULL(strstr(text, "vpopcntq"));
  free(text);
  /* AVX-512 keeps what its CPU adds; narrowed to 256 bits it drops the CPU's AVX-512 */
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512 -mcpu=znver4", &t), TSL_OK);
  CU_ASSERT_EQUAL(t.vector_bits, 512);
  tsl_target_implied_features(&t, implied, sizeof implied);
  CU_ASSERT_TRUE(tsl_feature_string_has(implied, "avx512vpopcntdq"));
  CU_ASSERT_EQUAL_FATAL(tsl_target_with_vector_bits(&t, 256, &back), TSL_OK);
  tsl_target_implied_features(&back, implied, sizeof implied);
  CU_ASSERT_PTR_NULL(strstr(implied, "avx512"));
  /* AArch64 and x86 CPUs within the class are left as they are */
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8 -mcpu=cortex-a76", &t), TSL_OK);
  CU_ASSERT_EQUAL(t.vector_bits, 128);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2 -mcpu=znver3", &t), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &back), TSL_OK);
  CU_ASSERT_STRING_EQUAL(t.features, back.features);
  /* the CPUs a class can name without gaining a feature */
  char within[1024];
  CU_ASSERT(tsl_target_cpus_within(TSL_ARCH_X86_64, back.features, within, sizeof within) > 5);
  CU_ASSERT_PTR_NOT_NULL(strstr(within, "haswell"));
  CU_ASSERT_PTR_NULL(strstr(within, "znver4"));
  CU_ASSERT_PTR_NULL(strstr(within, "bdver2"));
  CU_ASSERT_EQUAL(tsl_target_cpus_within(TSL_ARCH_X86_64, back.features, within, 4), 0); /* no cut names */
  CU_ASSERT_STRING_EQUAL(within, "");
}

/* shared/cases class 18: a CPU of another architecture (or an unknown one) is refused
 * with a message naming it, instead of LLVM aborting the process; a malformed device
 * address is refused too. */
static void test_target_mcpu_of_wrong_arch_refused(void) {
  tsl_target t;
  CU_ASSERT_EQUAL(tsl_target_parse("x86-64-avx2 -mcpu=cortex-a53", &t), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "cortex-a53 is not a known x86-64 CPU"));
  CU_ASSERT_EQUAL(tsl_target_parse("armv8 -mcpu=znver3", &t), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "not a known AArch64 CPU"));
  CU_ASSERT_EQUAL(tsl_target_parse("host -mcpu=nosuchcpu", &t), TSL_ERR_UNSUPPORTED);
  CU_ASSERT_EQUAL(tsl_target_parse("armv8 -mcpu=cortex-a72", &t), TSL_OK);
  CU_ASSERT_STRING_EQUAL(t.cpu, "cortex-a72");
  CU_ASSERT_EQUAL(tsl_target_parse("host -device=foo", &t), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_target_parse("armv8 -device=tcp://127.0.0.1:0", &t), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_target_parse("armv8 -device=tcp://127.0.0.1:9190", &t), TSL_OK);
  CU_ASSERT_STRING_EQUAL(t.device, "tcp://127.0.0.1:9190");
}

static void test_asm_fma_v16f32_and_popcount_per_target(void) {
  tsl_func *f = fma16_kernel("fma16", 64);
  char *host = asm_for(f, "host");
  CU_ASSERT_PTR_NOT_NULL_FATAL(host);
  CU_ASSERT_PTR_NOT_NULL(strstr(host, "vfmadd"));
  char *avx512 = asm_for(f, "x86-64-avx512");
  CU_ASSERT_PTR_NOT_NULL_FATAL(avx512);
  CU_ASSERT_PTR_NOT_NULL(strstr(avx512, "vfmadd"));
  CU_ASSERT_PTR_NOT_NULL(strstr(avx512, "zmm")); /* the schedule's 512-bit vectors are kept */
  char *arm = asm_for(f, "armv8");
  CU_ASSERT_PTR_NOT_NULL_FATAL(arm);
  CU_ASSERT_PTR_NOT_NULL(strstr(arm, "fmla"));
  tsl_func *p = popcount8_kernel();
  char *arm_pop = asm_for(p, "armv8");
  CU_ASSERT_PTR_NOT_NULL_FATAL(arm_pop);
  CU_ASSERT_PTR_NOT_NULL(strstr(arm_pop, "cnt\t"));
  char *zen4_pop = asm_for(p, "x86-64-avx512 -mcpu=znver4");
  CU_ASSERT_PTR_NOT_NULL_FATAL(zen4_pop);
  CU_ASSERT_PTR_NOT_NULL(strstr(zen4_pop, "vpopcntq"));
  free(host), free(avx512), free(arm), free(arm_pop), free(zen4_pop);
}

static void test_llvm_ir_text_signature_attributes_and_alignment(void) {
  tsl_buffer *in = cg_buf("in", TSL_F32, 64), *out = cg_buf("out", TSL_F32, 64);
  tsl_expr *io = tsl_var("io", TSL_I64), *base = tsl_mul(io, tsl_i64(16));
  /* an aligned vector load (offset a multiple of 16 floats = 64 bytes) and an
   * unaligned one (offset + 1) */
  tsl_expr *v = tsl_add(cg_ldv(in, base, 16), cg_ldv(in, tsl_add(base, tsl_i64(1)), 16));
  tsl_stmt *s = tsl_for(io, tsl_i64(0), tsl_i64(3), TSL_FOR_SERIAL, cg_stv(out, base, 16, v));
  tsl_func *f = cg_func("ir kernel.v1", 2, (tsl_buffer *[]){in, out}, s);
  tsl_target t;
  char *ir = NULL, *opt = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_codegen_llvm_ir(f, &t, false, &ir), TSL_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(ir, "define i32 @ir_kernel_v1(ptr noalias nonnull align 64 dereferenceable(256) %in"));
  CU_ASSERT_PTR_NOT_NULL(strstr(ir, "load <16 x float>, ptr %"));
  CU_ASSERT_PTR_NOT_NULL(strstr(ir, "x float>, ptr %"));
  CU_ASSERT_PTR_NOT_NULL(strstr(ir, ", align 64\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(ir, ", align 4\n"));
  CU_ASSERT_PTR_NULL(strstr(ir, "fast")); /* no fast-math flags */
  CU_ASSERT_EQUAL_FATAL(tsl_codegen_llvm_ir(f, &t, true, &opt), TSL_OK);
  CU_ASSERT_PTR_NOT_NULL(strstr(opt, "i32 @ir_kernel_v1(ptr noalias"));
  free(ir), free(opt);
}

/* ---- errors ---- */

static void expect_codegen_error(tsl_func *f, tsl_status want, const char *needle) {
  tsl_target t;
  char *ir = NULL;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  CU_ASSERT_EQUAL(tsl_codegen_llvm_ir(f, &t, false, &ir), want);
  CU_ASSERT_PTR_NULL(ir);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), needle));
  if (!strstr(tsl_last_error(), needle)) fprintf(stderr, "\n    [got: %s]\n", tsl_last_error());
  tsl_module *m;
  CU_ASSERT_EQUAL_FATAL(tsl_module_new(&m), TSL_OK);
  CU_ASSERT_EQUAL(tsl_jit_compile(cg_jit, f, m, NULL), want);
  CU_ASSERT_EQUAL(tsl_module_num_kernels(m), 0);
  tsl_module_free(m);
}

static void test_codegen_errors_are_reported_not_aborted(void) {
  int64_t shape[2] = {4, 4};
  tsl_buffer *b2 = tsl_buffer_new("grid", TSL_F32, 2, shape, TSL_BUF_ARG), *out = cg_buf("out", TSL_F32, 4);
  tsl_expr *idx[2] = {tsl_i64(1), tsl_i64(2)};
  expect_codegen_error(cg_func("multi_index", 2, (tsl_buffer *[]){b2, out},
                               cg_st(out, tsl_i64(0), tsl_load(b2, 2, idx, NULL))),
                       TSL_ERR_CODEGEN, "grid");
  tsl_expr *loose = tsl_var("loose", TSL_I64);
  expect_codegen_error(cg_func("unbound", 1, &out, cg_st(out, loose, tsl_f32(1.0f))), TSL_ERR_CODEGEN, "loose");
  int64_t four = 4;
  tsl_buffer *local = tsl_buffer_new("scratch", TSL_F32, 1, &four, TSL_BUF_LOCAL);
  expect_codegen_error(cg_func("no_alloc", 1, &out, cg_st(local, tsl_i64(0), tsl_f32(1.0f))), TSL_ERR_CODEGEN,
                       "scratch");
  tsl_expr *k = tsl_var("k", TSL_I64);
  tsl_iter_var axis = {k, 0, 4, true};
  tsl_expr *red = tsl_reduce(TSL_REDUCE_SUM, tsl_cast(TSL_F32, k), 1, &axis, NULL);
  expect_codegen_error(cg_func("te_reduce", 1, &out, cg_st(out, tsl_i64(0), red)), TSL_ERR_CODEGEN, "reduce");
  tsl_expr *ints[3] = {tsl_i32(1), tsl_i32(2), tsl_i32(3)};
  tsl_expr *bad_fma = tsl_cast(TSL_F32, tsl_call(TSL_CALL_FMA, TSL_I32, 3, ints));
  expect_codegen_error(cg_func("int_fma", 1, &out, cg_st(out, tsl_i64(0), bad_fma)), TSL_ERR_CODEGEN, "fma");
  tsl_expr *two[2] = {tsl_f32(1.0f), tsl_f32(2.0f)};
  expect_codegen_error(cg_func("bad_arity", 1, &out, cg_st(out, tsl_i64(0), tsl_call(TSL_CALL_SQRT, TSL_F32, 2, two))),
                       TSL_ERR_CODEGEN, "sqrt");
  tsl_expr *h = tsl_var("h", TSL_F16);
  tsl_arg args[2] = {{.is_buffer = true, .buf = out}, {.is_buffer = false, .var = h}};
  expect_codegen_error(tsl_func_new("half_arg", 2, args, cg_st(out, tsl_i64(0), tsl_cast(TSL_F32, h))),
                       TSL_ERR_UNSUPPORTED, "f16");
  int64_t huge = INT64_MAX / 2;
  tsl_buffer *too_big = tsl_buffer_new("too_big", TSL_F64, 1, &huge, TSL_BUF_LOCAL);
  expect_codegen_error(cg_func("overflow", 1, &out, tsl_allocate(too_big, cg_st(too_big, tsl_i64(0), tsl_float(TSL_F64, 1)))),
                       TSL_ERR_CODEGEN, "too_big");
}

static void test_invalid_llvm_module_is_an_error_not_an_abort(void) {
  LLVMContextRef ctx = LLVMContextCreate();
  LLVMModuleRef m = LLVMModuleCreateWithNameInContext("broken", ctx);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(ctx);
  LLVMValueRef fn = LLVMAddFunction(m, "no_terminator", LLVMFunctionType(i32, NULL, 0, 0));
  LLVMBasicBlockRef bb = LLVMAppendBasicBlockInContext(ctx, fn, "entry");
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderAtEnd(b, bb);
  LLVMBuildAlloca(b, i32, "x"); /* and no return: the block lacks a terminator */
  CU_ASSERT_EQUAL(tsl_codegen_verify(m, "broken kernel"), TSL_ERR_CODEGEN);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "broken kernel: invalid LLVM module"));
  LLVMDisposeBuilder(b);
  LLVMDisposeModule(m);
  LLVMContextDispose(ctx);
}

/* ---- JIT lifecycle, targets and symbols ---- */

static void test_C12_jit_refuses_targets_the_host_cannot_run(void) {
  tsl_target t, host;
  tsl_jit *j = NULL;
  /* "host": the machine, or what TSL_HOST_TARGET says it is (its features are then the
   * machine's as far as the JIT is concerned) */
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &host), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("armv8", &t), TSL_OK);
  if (host.arch != TSL_ARCH_AARCH64) {
    CU_ASSERT_EQUAL(tsl_jit_new(&t, &j), TSL_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NULL(j);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "armv8"));
  }
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &t), TSL_OK);
  if (host.arch == TSL_ARCH_X86_64 && !tsl_target_has_feature(&host, "avx512f")) {
    CU_ASSERT_EQUAL(tsl_jit_new(&t, &j), TSL_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "avx512"));
  }
  /* on any x86 host: an AVX2 target asking for one x86 feature this machine lacks is
   * refused naming that feature (the class of avx512f on an AVX2 host) */
  static const char *const rare[] = {"amx-tile", "avx512fp16", "amx-int8", "avx10.1-512", "sha512", "usermsr"};
  const char *missing = NULL;
  for (size_t i = 0; i < sizeof rare / sizeof rare[0] && !missing; i++)
    if (!tsl_target_has_feature(&host, rare[i])) missing = rare[i];
  if (host.arch == TSL_ARCH_X86_64 && missing && tsl_test_x86_level() >= 3) { /* the base target runs here */
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &t), TSL_OK);
    size_t len = strlen(t.features);
    snprintf(t.features + len, sizeof t.features - len, ",+%s", missing);
    const char *why = NULL;
    CU_ASSERT(!tsl_target_runs_on_host(&t, &why));
    CU_ASSERT(why && strstr(why, missing));
    CU_ASSERT_EQUAL(tsl_jit_new(&t, &j), TSL_ERR_UNSUPPORTED);
    CU_ASSERT_PTR_NULL(j);
    CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), missing));
  }
}

/* C12, the class of a CPU's implied features: for every x86 CPU -mcpu= accepts, the
 * instructions LLVM emits for it (a popcount of 8 x u64, a 16-wide FMA) need only
 * features its row lists (tsl_target_cpu_features), so the runs-on check sees them: a
 * Zen 4 or Ice Lake build uses vpopcntq, which a Cascade Lake lacks (the rows listed no
 * avx512vpopcntdq before). A host target on a VM that hides one of its CPU's features
 * ("-avx512fp16" in its string) still runs on that machine. */
static void test_C12_cpu_rows_cover_the_instructions_llvm_emits(void) {
  char list[4096];
  CU_ASSERT_FALSE_FATAL(tsl_target_cpu_known(TSL_ARCH_X86_64, NULL, list, sizeof list));
  CU_ASSERT_PTR_NOT_NULL_FATAL(strstr(list, "znver5"));
  tsl_func *pop = popcount8_kernel(), *fma = fma16_kernel("fma16c", 64);
  static const struct {
    const char *insn, *feature;
  } needs[] = {{"vpopcntq", "avx512vpopcntdq"}, {"vpopcntd", "avx512vpopcntdq"}, {"vpopcntb", "avx512bitalg"},
               {"vpopcntw", "avx512bitalg"},    {"zmm", "avx512f"},                {"vfmadd1", "fma"},
               {"vfmadd2", "fma"},              {"vfmadd3", "fma"},                {"vfmaddps", "fma4"}};
  int n = 0, with_vpopcnt = 0, wide_in_avx2 = 0;
  char *names = strdup(list);
  for (char *save = NULL, *cpu = strtok_r(names, ", ", &save); cpu; cpu = strtok_r(NULL, ", ", &save), n++)
    for (int level = 0; level < 2; level++) {
      /* at each level: AVX2 keeps 256-bit vectors whatever the CPU (its AVX-512 off) */
      char target[96];
      snprintf(target, sizeof target, "%s -mcpu=%s", level ? "x86-64-avx512" : "x86-64-avx2", cpu);
      char *texts[2] = {asm_for(pop, target), asm_for(fma, target)};
      CU_ASSERT_PTR_NOT_NULL(texts[0]);
      CU_ASSERT_PTR_NOT_NULL(texts[1]);
      /* what the code may use: the target's own string and what its CPU implies */
      tsl_target tt;
      CU_ASSERT_EQUAL_FATAL(tsl_target_parse(target, &tt), TSL_OK);
      CU_ASSERT_EQUAL(tt.vector_bits, level ? 512 : 256);
      char implied[512];
      tsl_target_implied_features(&tt, implied, sizeof implied);
      for (int k = 0; k < 2; k++)
        for (size_t i = 0; texts[k] && i < sizeof needs / sizeof needs[0]; i++)
          if (strstr(texts[k], needs[i].insn) && !tsl_feature_string_has(implied, needs[i].feature) &&
              !tsl_feature_string_has(tt.features, needs[i].feature)) {
            printf("\n    %s emits %s; neither its string nor its implied features (%s) have %s", target,
                   needs[i].insn, implied, needs[i].feature);
            CU_FAIL("code uses a feature the runs-on check does not see");
          }
      if (level) with_vpopcnt += texts[0] && strstr(texts[0], "vpopcntq") != NULL;
      if (!level)
        wide_in_avx2 += (texts[0] && (strstr(texts[0], "zmm") || strstr(texts[0], "vpopcnt"))) ||
                        (texts[1] && strstr(texts[1], "zmm"));
      free(texts[0]);
      free(texts[1]);
    }
  free(names);
  CU_ASSERT(n > 60);
  CU_ASSERT(with_vpopcnt >= 10); /* knm, Ice Lake and later Xeons and clients, Zen 4 and 5 */
  CU_ASSERT_EQUAL(wide_in_avx2, 0);

  /* the Zen 4 AVX-512 build on a Cascade Lake: refused, naming the popcount feature */
  tsl_target t, cascade;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &t), TSL_OK);
  char feats[sizeof t.features]; /* the level's string (about 150 bytes) and a few features */
  snprintf(feats, sizeof feats, "%.3500s,+avx512vnni,-avx512vpopcntdq", t.features);
  cascade = machine("cascadelake", feats);
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512 -mcpu=znver4", &t), TSL_OK);
  char why[192] = "";
  CU_ASSERT_FALSE(tsl_target_runs_on(&t, &cascade, why, sizeof why));
  CU_ASSERT_PTR_NOT_NULL(strstr(why, "avx512vpopcntdq"));
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512 -mcpu=cascadelake", &t), TSL_OK);
  CU_ASSERT_TRUE(tsl_target_runs_on(&t, &cascade, why, sizeof why));
  /* a Sapphire Rapids VM hiding avx512fp16: its own host target runs on it */
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx512", &t), TSL_OK);
  snprintf(feats, sizeof feats, "%.3500s,+avx512vnni,+avx512vpopcntdq,+avx512bitalg,+avx512vbmi,+avx512vbmi2,+gfni,+avxvnni,-avx512fp16",
           t.features);
  tsl_target vm = machine("sapphirerapids", feats);
  CU_ASSERT_TRUE(tsl_target_runs_on(&vm, &vm, why, sizeof why));
  char implied[512]; /* what an AOT object's record lists besides the string */
  CU_ASSERT(tsl_target_implied_features(&vm, implied, sizeof implied) > 0);
  CU_ASSERT_PTR_NULL(strstr(implied, "avx512fp16"));
  CU_ASSERT_TRUE(tsl_feature_string_has(implied, "avx512vpopcntdq"));
  CU_ASSERT_TRUE(tsl_feature_string_has(tsl_target_cpu_features("sapphirerapids"), "avx512fp16"));
  CU_ASSERT_EQUAL(tsl_target_implied_features(&vm, implied, 12), 10); /* no cut names */
  CU_ASSERT_STRING_EQUAL(implied, "+avx,+avx2");
  /* but code built with the feature does not */
  snprintf(feats, sizeof feats, "%.3500s,+avx512fp16", t.features);
  tsl_target fp16 = machine("sapphirerapids", feats);
  CU_ASSERT_FALSE(tsl_target_runs_on(&fp16, &vm, why, sizeof why));
  CU_ASSERT_PTR_NOT_NULL(strstr(why, "avx512fp16"));
}

/* C12: one kernel compiled for two targets that differ in features runs on both
 * with identical results. */
static void test_C12_same_kernel_identical_on_host_and_avx2_target(void) {
  tsl_target t;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("x86-64-avx2", &t), TSL_OK);
  if (!tsl_target_runs_on_host(&t, NULL)) return; /* nothing to compare on this machine */
  tsl_jit *j2;
  CU_ASSERT_EQUAL_FATAL(tsl_jit_new(&t, &j2), TSL_OK);
  enum { N = 256 };
  float *a = cg_alloc(N * 4), *b = cg_alloc(N * 4), *o1 = cg_alloc(N * 4), *o2 = cg_alloc(N * 4);
  for (int i = 0; i < N; i++) a[i] = (float)i / 7.0f, b[i] = 1.0f / (float)(i + 1), o1[i] = o2[i] = (float)i * 0.1f;
  tsl_func *f = fma16_kernel("fma_c12", N);
  tsl_module *m1, *m2;
  const tsl_kernel *k1, *k2;
  CU_ASSERT_EQUAL_FATAL(tsl_module_new(&m1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_module_new(&m2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_jit_compile(cg_jit, f, m1, NULL), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_jit_compile(j2, f, m2, NULL), TSL_OK);
  tsl_jit_free(j2); /* m2 keeps its code alive */
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m1, "fma_c12", &k1), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m2, "fma_c12", &k2), TSL_OK);
  void *p1[3] = {a, b, o1}, *p2[3] = {a, b, o2};
  CU_ASSERT_EQUAL(tsl_kernel_call(k1, (void *[]){&p1[0], &p1[1], &p1[2]}, 3), TSL_OK);
  CU_ASSERT_EQUAL(tsl_kernel_call(k2, (void *[]){&p2[0], &p2[1], &p2[2]}, 3), TSL_OK);
  CU_ASSERT_EQUAL(memcmp(o1, o2, N * 4), 0);
  CU_ASSERT_EQUAL(o1[5], fmaf(a[5], b[5], (float)5 * 0.1f));
  tsl_module_free(m1);
  tsl_module_free(m2);
  free(a), free(b), free(o1), free(o2);
}

static void test_compile_time_and_module_keeps_jit_alive(void) {
  tsl_target t;
  tsl_jit *j;
  tsl_module *m;
  CU_ASSERT_EQUAL_FATAL(tsl_target_parse("host", &t), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_jit_new(&t, &j), TSL_OK);
  CU_ASSERT_STRING_EQUAL(tsl_jit_target(j)->cpu, t.cpu);
  CU_ASSERT_EQUAL_FATAL(tsl_module_new(&m), TSL_OK);
  double secs = -1;
  CU_ASSERT_EQUAL_FATAL(tsl_jit_compile(j, fma16_kernel("k1", 32), m, &secs), TSL_OK);
  CU_ASSERT(secs > 0 && secs < 60);
  CU_ASSERT_EQUAL_FATAL(tsl_jit_compile(j, fma16_kernel("k2", 64), m, NULL), TSL_OK);
  CU_ASSERT_EQUAL(tsl_jit_compile(j, fma16_kernel("k2", 64), m, NULL), TSL_ERR_INVALID); /* name taken */
  tsl_jit_free(j); /* the module now holds the only reference */
  const tsl_kernel *k;
  CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m, "k2", &k), TSL_OK);
  float *a = cg_alloc(64 * 4), *b = cg_alloc(64 * 4), *o = cg_alloc(64 * 4);
  for (int i = 0; i < 64; i++) a[i] = (float)i, b[i] = 2.0f, o[i] = 1.0f;
  void *p[3] = {a, b, o};
  CU_ASSERT_EQUAL(tsl_kernel_call(k, (void *[]){&p[0], &p[1], &p[2]}, 3), TSL_OK);
  for (int i = 0; i < 64; i++) CU_ASSERT_EQUAL(o[i], 2.0f * (float)i + 1.0f);
  tsl_module_free(m); /* frees the code and the JIT */
  free(a), free(b), free(o);
}

static tsl_func *const_kernel(const char *name, int32_t value) {
  tsl_buffer *out = cg_buf("out", TSL_I32, 1);
  return cg_func(name, 1, &out, cg_st(out, tsl_i64(0), tsl_i32(value)));
}

static void test_kernel_symbols_sanitized_and_unique(void) {
  char sym[64];
  CU_ASSERT_STRING_EQUAL(tsl_codegen_symbol_name("conv2d.nchw-16c 3x3", sym, sizeof sym), "conv2d_nchw_16c_3x3");
  CU_ASSERT_STRING_EQUAL(tsl_codegen_symbol_name("3x3", sym, sizeof sym), "_3x3");
  CU_ASSERT_STRING_EQUAL(tsl_codegen_symbol_name("", sym, sizeof sym), "_");
  /* the same name twice on one JIT (different modules), and names of process symbols */
  const char *names[4] = {"same", "same", "memcpy", "tsl_parallel_for"};
  tsl_module *m[4];
  for (int i = 0; i < 4; i++) {
    CU_ASSERT_EQUAL_FATAL(tsl_module_new(&m[i]), TSL_OK);
    CU_ASSERT_EQUAL_FATAL(tsl_jit_compile(cg_jit, const_kernel(names[i], 10 + i), m[i], NULL), TSL_OK);
  }
  for (int i = 0; i < 4; i++) {
    const tsl_kernel *k;
    int32_t *o = cg_alloc(4);
    void *p = o;
    CU_ASSERT_EQUAL_FATAL(tsl_module_get_kernel(m[i], names[i], &k), TSL_OK);
    CU_ASSERT_EQUAL(tsl_kernel_call(k, (void *[]){&p}, 1), TSL_OK);
    CU_ASSERT_EQUAL(o[0], 10 + i);
    free(o);
  }
  /* a copy loop LLVM turns into a memcpy call still reaches libc's memcpy */
  enum { N = 4096 };
  tsl_buffer *in = cg_buf("in", TSL_F32, N), *out = cg_buf("out", TSL_F32, N);
  tsl_expr *i = tsl_var("i", TSL_I64);
  tsl_func *copy = cg_func("copy", 2, (tsl_buffer *[]){in, out},
                           tsl_for(i, tsl_i64(0), tsl_i64(N), TSL_FOR_SERIAL, cg_st(out, i, cg_ld(in, i))));
  float *a = cg_alloc(N * 4), *o = cg_alloc(N * 4);
  for (int k = 0; k < N; k++) a[k] = (float)k * 0.5f;
  void *p[2] = {a, o};
  CU_ASSERT_EQUAL(cg_run(copy, (void *[]){&p[0], &p[1]}), TSL_OK);
  CU_ASSERT_EQUAL(memcmp(a, o, N * 4), 0);
  for (int k = 0; k < 4; k++) tsl_module_free(m[k]);
  free(a), free(o);
}

void cg_add_target_tests(void) {
  CU_pSuite s = CU_add_suite("codegen_target", cg_suite_init, cg_suite_clean);
  CU_add_test(s, "test_target_parse_known_targets", test_target_parse_known_targets);
  CU_add_test(s, "test_target_host_detection", test_target_host_detection);
  CU_add_test(s, "test_target_host_probe_is_llvms_view", test_target_host_probe_is_llvms_view);
  CU_add_test(s, "test_target_host_forced_by_environment", test_target_host_forced_by_environment);
  CU_add_test(s, "test_target_mcpu_of_wrong_arch_refused", test_target_mcpu_of_wrong_arch_refused);
  CU_add_test(s, "test_target_mcpu_override_and_string_round_trip", test_target_mcpu_override_and_string_round_trip);
  CU_add_test(s, "test_target_new_cpus_and_disabled_features", test_target_new_cpus_and_disabled_features);
  CU_add_test(s, "test_target_keeps_its_vector_width_under_any_cpu", test_target_keeps_its_vector_width_under_any_cpu);
  CU_add_test(s, "test_target_unknown_string_is_unsupported_and_lists_known",
              test_target_unknown_string_is_unsupported_and_lists_known);
  CU_add_test(s, "test_asm_fma_v16f32_and_popcount_per_target", test_asm_fma_v16f32_and_popcount_per_target);
  CU_add_test(s, "test_llvm_ir_text_signature_attributes_and_alignment",
              test_llvm_ir_text_signature_attributes_and_alignment);
  CU_add_test(s, "test_codegen_errors_are_reported_not_aborted", test_codegen_errors_are_reported_not_aborted);
  CU_add_test(s, "test_invalid_llvm_module_is_an_error_not_an_abort", test_invalid_llvm_module_is_an_error_not_an_abort);
  CU_add_test(s, "test_C12_jit_refuses_targets_the_host_cannot_run", test_C12_jit_refuses_targets_the_host_cannot_run);
  CU_add_test(s, "test_C12_same_kernel_identical_on_host_and_avx2_target",
              test_C12_same_kernel_identical_on_host_and_avx2_target);
  CU_add_test(s, "test_C12_cpu_rows_cover_the_instructions_llvm_emits", test_C12_cpu_rows_cover_the_instructions_llvm_emits);
  CU_add_test(s, "test_compile_time_and_module_keeps_jit_alive", test_compile_time_and_module_keeps_jit_alive);
  CU_add_test(s, "test_kernel_symbols_sanitized_and_unique", test_kernel_symbols_sanitized_and_unique);
}
