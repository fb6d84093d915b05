/* The target description: what machine a kernel is compiled for (no LLVM).
 *
 * A target string names one of the known targets, optionally followed by
 * " -mcpu=NAME" (and, for the tuner, " -device=tcp://HOST:PORT", which is recorded
 * but does not change code generation):
 *
 *   host                the machine tessel runs on: LLVM's host CPU and features,
 *                       cache sizes read from /sys (or sysconf); or, when the
 *                       environment variable TSL_HOST_TARGET names another target
 *                       that runs here (e.g. TSL_HOST_TARGET=x86-64-avx2 on an
 *                       AVX-512 machine), that target: the process treats the machine
 *                       as that target. Every "host" (JIT, graph compiler, tuner,
 *                       tunecli) compiles for it, and code for features it lacks
 *                       (x86-64-avx512 then) is refused as on such a machine, so the
 *                       AVX2 code path and its refusals are tested on an AVX-512 host
 *   x86-64-avx2         x86-64-v3 (AVX2, FMA, F16C, BMI2), 256-bit vectors
 *   x86-64-avx512       x86-64-v4 (AVX-512 F/BW/CD/DQ/VL), 512-bit vectors
 *   armv8               AArch64 + NEON, Cortex-A53 class, 128-bit vectors
 *   armv8.2-a+dotprod   AArch64 v8.2 + NEON + dot product (Cortex-A76 class)
 *
 * "-mcpu=NAME" after a named target schedules the code for that CPU and lets it use the
 * features the CPU implies (tsl_target_cpu_features: VPOPCNTDQ for x86-64-avx512
 * -mcpu=znver4), but on x86 never a wider vector ISA than the target's class:
 * x86-64-avx2 -mcpu=znver4 is 256-bit code with the Zen 4's AVX-512 turned off
 * ("-avx512f", as GCC's -march=x86-64-v3 -mtune=znver4), tsl_target_keep_vector_bits
 * (arch.h). AArch64 code is NEON's 128 bits whatever the CPU.
 *
 * A tsl_target is a plain value (fixed-size strings, no heap): copy it freely.
 *
 * target/ is a leaf: schedules, operators, the tuner and codegen/ read it, and it
 * includes none of them. The one thing it cannot do without LLVM, asking for the
 * running machine's triple, CPU and features, goes through the probe declared in
 * target/host_probe.h and defined in codegen/host_probe.c (a link-time seam); the
 * per-architecture tables (presets, triples, vector widths) are target/arch.h.
 */
#ifndef TESSEL_TARGET_TARGET_H
#define TESSEL_TARGET_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tsl_arch {
  TSL_ARCH_X86_64 = 0,
  TSL_ARCH_AARCH64 = 1
} tsl_arch;

typedef struct tsl_target {
  char name[32];       /* the known target this came from: "host", "armv8", ... */
  char triple[64];     /* LLVM target triple, e.g. "x86_64-pc-linux-gnu" */
  char cpu[64];        /* LLVM CPU name, e.g. "znver3", "x86-64-v4", "cortex-a53" */
  char features[4096]; /* LLVM feature string, "+avx2,+fma,..." (may be empty) */
  char device[128];    /* "-device=" value (remote measurement), "" when local */
  tsl_arch arch;
  int vector_bits;     /* native SIMD register width: 512 AVX-512, 256 AVX2, 128 NEON/SSE */
  int64_t l1d_bytes;   /* L1 data cache per core, bytes */
  int64_t l2_bytes;    /* L2 cache per core (or per cluster on small ARM cores), bytes */
  bool is_host;        /* detected from the running machine */
  bool cpu_overridden; /* "-mcpu=" was given */
} tsl_target;

/* The environment variable that redefines "host" (above). */
#define TSL_HOST_TARGET_ENV "TSL_HOST_TARGET"

/* Parse a target string (see the top of this file) into *out.
 * Errors: TSL_ERR_UNSUPPORTED for an unknown target name (the message names the
 * string and lists the known ones), or for "host" when TSL_HOST_TARGET names a target
 * this machine cannot run (the message names the variable and the missing feature);
 * TSL_ERR_INVALID for a malformed option (unknown "-flag", empty or over-long -mcpu
 * value) or a TSL_HOST_TARGET that names host or a -device, or whose -mcpu= adds a
 * feature to its target's (the message names CPUs that add none); TSL_ERR_UNSUPPORTED
 * also when a feature string has no room to keep the target's vector width
 * (tsl_target_keep_vector_bits). */
tsl_status tsl_target_parse(const char *s, tsl_target *out);

/* The machine's own target as detected (LLVM's host CPU and features, caches from
 * /sys), whatever TSL_HOST_TARGET says. Errors: TSL_ERR_UNSUPPORTED (an architecture
 * tessel has no backend for). */
tsl_status tsl_target_detected_host(tsl_target *out);

/* The canonical string of a target, written into buf (n bytes, truncated if
 * shorter) and returned: the name, then " -mcpu=CPU" when the CPU was overridden
 * or the target is the host (so records say which machine measured them), then
 * " -device=..." if set. Parsing the result on the same machine gives the same
 * target. */
const char *tsl_target_str(const tsl_target *t, char *buf, size_t n);

/* The f32 lanes of t's native vector register: vector_bits / 32 (4 with NEON or SSE, 8
 * with AVX2, 16 with AVX-512); 4 for a NULL target or one narrower than 128 bits. This
 * is the NCHW[x]c block x the graph compiler and the default schedules use: every lane
 * count in the library comes from here. */
int tsl_target_f32_lanes(const tsl_target *t);

/* Vector registers of t's ISA: 32 with AVX-512 or AArch64 NEON, 16 with AVX2/SSE (what
 * register tiles of the default schedules are sized against). */
int tsl_target_vector_registers(const tsl_target *t);

/* Does the target's feature string enable `feature` (given without the '+', e.g.
 * "avx512f")? */
bool tsl_target_has_feature(const tsl_target *t, const char *feature);

/* The vector ISA features ("+x,+y") LLVM's model of CPU `cpu` enables on its own, for
 * the CPU names -mcpu= accepts ("+avx,+avx2,+fma,+f16c" for znver3, "+v8.2a,+dotprod,+fullfp16"
 * for cortex-a76, ... ; "" for an unknown name): limited to those generated code can use
 * without intrinsics (what the vectorizer and instruction selection pick: vector
 * popcount is avx512vpopcntdq, f16 casts f16c; the rows and how they were read from
 * LLVM: target/cpus.c). A target's code may use them besides its feature string, so they
 * count wherever code is checked against a machine (tsl_target_runs_on_host, the AOT
 * loader's record), except those the target's own string disables ("-avx512fp16": the
 * code was built without it). */
const char *tsl_target_cpu_features(const char *cpu);

/* The features t's CPU implies (tsl_target_cpu_features) that t's own feature string
 * does not turn off ("-x"), as "+x,+y" in out (n bytes; a name that does not fit is left
 * out whole): what t's code may use besides its string. Returns the length written; 0
 * for NULL arguments. */
size_t tsl_target_implied_features(const tsl_target *t, char *out, size_t n);

/* Can code compiled for t run on this machine? True when t has the host's
 * architecture and every feature t enables ("+x", and those its CPU implies:
 * tsl_target_cpu_features) is enabled on the host (the target TSL_HOST_TARGET names,
 * with its CPU's, when it is set; the detected machine otherwise).
 * On false, *why (if non-NULL) points at a description of the first missing piece
 * ("architecture aarch64 (host is x86_64)", "feature avx512f"), valid until the next
 * call on the same thread. */
bool tsl_target_runs_on_host(const tsl_target *t, const char **why);

/* Can code compiled for t run on a machine described as `machine` (its arch, feature
 * string and CPU; e.g. a detected host)? The rule of tsl_target_runs_on_host: every
 * feature t and its CPU enable must be enabled by the machine's feature string or
 * implied by the machine's CPU (tsl_target_cpu_features), except that a feature the
 * machine's string disables ("-avx512f": a VM or an OS hiding AVX-512 on a CPU that has
 * it) is missing whatever its CPU implies. On false, why (n bytes, may be NULL) says
 * what is missing ("feature avx512f"). */
bool tsl_target_runs_on(const tsl_target *t, const tsl_target *machine, char *why, size_t n);

/* Most vector widths one target offers (tsl_target_vector_widths). */
#define TSL_TARGET_MAX_VECTOR_WIDTHS 4

/* The vector register widths in bits that kernels for t may be compiled for, widest
 * (t->vector_bits) first, written to widths[0..TSL_TARGET_MAX_VECTOR_WIDTHS); returns how
 * many. x86-64 with AVX-512: 512 and 256 (the AVX2 subset: ymm registers, no mask
 * registers); x86-64 with AVX2: 256; AArch64: 128 (NEON). A schedule's vector_width
 * step (schedule/schedule.h) picks one (target/vector_width.c). 0 for NULL arguments. */
int tsl_target_vector_widths(const tsl_target *t, int *widths);

/* *out = t compiled at `bits` wide vectors: bits == t->vector_bits gives t itself; a
 * narrower width that tsl_target_vector_widths offers gives t without the features of the
 * wider registers (x86-64 at 256 on AVX-512: every "+avx512*", "+evex512" and "+avx10*"
 * feature left out and "-avx512f" appended, since the CPU name alone implies them), so
 * vector_bits, f32 lanes and vector registers (16) are those of the narrower ISA and
 * codegen emits none of its instructions. Errors: TSL_ERR_INVALID for NULL arguments;
 * TSL_ERR_UNSUPPORTED for a width t does not offer ("target x86-64-avx2: no 512-bit
 * vectors (widths: 256)"). */
tsl_status tsl_target_with_vector_bits(const tsl_target *t, int bits, tsl_target *out);

/* Names of the known targets, for messages and help text: a static array of
 * *count strings. */
const char *const *tsl_target_known_names(int *count);

#ifdef __cplusplus
}
#endif
#endif
