/* llvm-mca as a subprocess (tuner/mca.h): one run of the tool for many blocks (code
 * regions) gives each block the cycles llvm-mca gives it alone, and a block the tool
 * rejects is reported by its index.
 *
 * The reference is the tool itself, run here through popen on a file holding one block
 * and no region markers (the form tessel used before batching), its JSON read with
 * strstr/strtod: TotalCycles / Iterations of its only region. One x86 CPU (znver3 with
 * AVX2 code) and one ARM CPU (neoverse-n1).
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/arena.h"
#include "ir/ir.h"
#include "tuner/cost_static.h"
#include "tuner/mca.h"
#include "tuner/mca_proxy.h"
#include "tuner_tests.h"

static const char *const cpus[2] = {"x86-64-avx2 -mcpu=znver3", "armv8 -mcpu=neoverse-n1"};

/* Loop bodies as the static model hands them over (instructions only, a branch to a
 * label the file does not define), different dependence and port patterns. */
static const char *const x86_blocks[4] = {
    "vfmadd231ps %ymm1, %ymm2, %ymm0\nvfmadd231ps %ymm1, %ymm2, %ymm0\nvfmadd231ps %ymm1, %ymm2, %ymm0\n",
    "vmovups (%rdi,%rax,4), %ymm0\nvaddps (%rsi,%rax,4), %ymm0, %ymm0\nvmovups %ymm0, (%rdx,%rax,4)\n"
    "addq $8, %rax\ncmpq %rcx, %rax\njb .LBB0_2\n",
    "vbroadcastss (%rdi), %ymm3\nvfmadd231ps (%rsi), %ymm3, %ymm4\nvfmadd231ps 32(%rsi), %ymm3, %ymm5\n"
    "vfmadd231ps 64(%rsi), %ymm3, %ymm6\naddq $4, %rdi\naddq $96, %rsi\ndecq %rcx\njne .LBB3_7\n",
    "vdivps %ymm1, %ymm0, %ymm0\nvsqrtps %ymm0, %ymm2\n",
};
static const char *const arm_blocks[4] = {
    "fmla v0.4s, v1.4s, v2.4s\nfmla v0.4s, v1.4s, v2.4s\nfmla v0.4s, v1.4s, v2.4s\n",
    "ldr q0, [x0, x8]\nldr q1, [x1, x8]\nfadd v0.4s, v0.4s, v1.4s\nstr q0, [x2, x8]\nadd x8, x8, #16\n"
    "cmp x8, x9\nb.ne .LBB0_2\n",
    "ld1r { v3.4s }, [x0], #4\nldp q4, q5, [x1], #32\nfmla v6.4s, v4.4s, v3.4s\nfmla v7.4s, v5.4s, v3.4s\n"
    "subs x3, x3, #1\nb.ne .LBB3_7\n",
    "fdiv v0.4s, v0.4s, v1.4s\nfsqrt v2.4s, v0.4s\n",
};

static bool model_here(const tsl_target *t) {
  if (tsl_cost_static_check(t) == TSL_OK) return true;
  fprintf(stderr, "\n  (skipped: %s)\n", tsl_last_error());
  return false;
}

/* The number after "\"KEY\":" in text, or -1. */
static double json_number(const char *text, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(text, pat);
  return p ? strtod(p + strlen(pat), NULL) : -1;
}

/* Cycles per iteration of `block` from the tool run directly on a file of that block
 * alone; -1 when it fails. */
static double reference_cycles(const tsl_target *t, const char *block, int iterations) {
  char path[] = "/tmp/tessel-mca-ref-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  FILE *f = fdopen(fd, "w");
  fputs(block, f);
  fclose(f);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s -mtriple=%s -mcpu=%s --json -iterations=%d %s 2>/dev/null", tsl_mca_tool(),
           t->triple, t->cpu, iterations, path);
  FILE *p = popen(cmd, "r");
  static char out[1 << 16];
  size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
  out[n] = '\0';
  int rc = p ? pclose(p) : -1;
  unlink(path);
  double total = json_number(out, "TotalCycles"), iters = json_number(out, "Iterations");
  return rc == 0 && total > 0 && iters > 0 ? total / iters : -1;
}

static void test_batched_regions_cost_what_single_runs_cost(void) {
  for (int c = 0; c < 2; c++) {
    tsl_target t;
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse(cpus[c], &t), TSL_OK);
    if (!model_here(&t)) continue;
    const char *const *b = t.arch == TSL_ARCH_AARCH64 ? arm_blocks : x86_blocks;
    /* the four blocks and the first again (one run for both copies); an iteration
     * count of its own, so no block comes from the cache of another test */
    const char *blocks[5] = {b[0], b[1], b[2], b[3], b[0]};
    const int iterations = 73;
    double cyc[5] = {0}, want[4];
    int bad = 7;
    CU_ASSERT_EQUAL_FATAL(tsl_mca_blocks_cycles(t.triple, t.cpu, blocks, 5, iterations, 20.0, cyc, &bad), TSL_OK);
    CU_ASSERT_EQUAL(bad, -1);
    for (int k = 0; k < 4; k++) {
      want[k] = reference_cycles(&t, b[k], iterations);
      CU_ASSERT(want[k] > 0);
      CU_ASSERT_DOUBLE_EQUAL(cyc[k], want[k], 0); /* bit-identical: same integers divided */
      if (cyc[k] != want[k]) fprintf(stderr, "\n  %s block %d: batched %.17g, alone %.17g\n", t.cpu, k, cyc[k], want[k]);
    }
    CU_ASSERT_DOUBLE_EQUAL(cyc[4], cyc[0], 0);
    /* the single-block call gives the same (from the cache the batch filled) */
    double one = 0;
    CU_ASSERT_EQUAL(tsl_mca_block_cycles(t.triple, t.cpu, b[2], iterations, 20.0, &one), TSL_OK);
    CU_ASSERT_DOUBLE_EQUAL(one, want[2], 0);
  }
}

/* A wrapper script around the tool that appends a line to `log` per run; its path into
 * script. */
static bool counting_tool(char *script, size_t n, const char *log) {
  snprintf(script, n, "/tmp/tessel-mca-count-XXXXXX");
  int fd = mkstemp(script);
  if (fd < 0) return false;
  FILE *f = fdopen(fd, "w");
  fprintf(f, "#!/bin/sh\necho run >> '%s'\nexec '%s' \"$@\"\n", log, tsl_mca_tool());
  fclose(f);
  return chmod(script, 0700) == 0;
}

static int lines_of(const char *path) {
  FILE *f = fopen(path, "r");
  int n = 0;
  for (int ch; f && (ch = fgetc(f)) != EOF;) n += ch == '\n';
  if (f) fclose(f);
  return n;
}

/* Two loops in a row over whole vectors: out[i] = a[i + off1] + b[i], then
 * out[i] = a[i + off2] * b[i] (offsets of their own: loop bodies no other test has). */
static tsl_func *kernel_two_loops(const tsl_target *t, int64_t n, int64_t off1, int64_t off2) {
  int lanes = tsl_target_f32_lanes(t);
  const int64_t len = (n + off1 + off2) * lanes;
  tsl_buffer *a = tsl_buffer_new("a", TSL_F32, 1, &len, TSL_BUF_ARG), *b = tsl_buffer_new("b", TSL_F32, 1, &len, TSL_BUF_ARG);
  tsl_buffer *out = tsl_buffer_new("out", TSL_F32, 1, &len, TSL_BUF_ARG);
  tsl_expr *i = tsl_var("i", TSL_I64), *j = tsl_var("j", TSL_I64);
  tsl_expr *vi = tsl_ramp(tsl_mul(i, tsl_i64(lanes)), tsl_i64(1), lanes);
  tsl_expr *vi1 = tsl_ramp(tsl_mul(tsl_add(i, tsl_i64(off1)), tsl_i64(lanes)), tsl_i64(1), lanes);
  tsl_expr *vj = tsl_ramp(tsl_mul(j, tsl_i64(lanes)), tsl_i64(1), lanes);
  tsl_expr *vj2 = tsl_ramp(tsl_mul(tsl_add(j, tsl_i64(off2)), tsl_i64(lanes)), tsl_i64(1), lanes);
  tsl_stmt *s[2] = {
      tsl_for(i, tsl_i64(0), tsl_i64(n), TSL_FOR_SERIAL,
              tsl_store(out, 1, &vi, tsl_add(tsl_load(a, 1, &vi1, NULL), tsl_load(b, 1, &vi, NULL)), NULL)),
      tsl_for(j, tsl_i64(0), tsl_i64(n), TSL_FOR_SERIAL,
              tsl_store(out, 1, &vj, tsl_mul(tsl_load(a, 1, &vj2, NULL), tsl_load(b, 1, &vj, NULL)), NULL)),
  };
  tsl_arg fa[3] = {{.is_buffer = true, .buf = a}, {.is_buffer = true, .buf = b}, {.is_buffer = true, .buf = out}};
  return tsl_func_new("two_loops", 3, fa, tsl_seq(2, s));
}

static void test_a_candidate_is_one_run_of_the_tool(void) {
  for (int c = 0; c < 2; c++) {
    tsl_target t;
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse(cpus[c], &t), TSL_OK);
    if (!model_here(&t)) continue; /* also caches the check: no run of the wrapper for it */
    char log[] = "/tmp/tessel-mca-log-XXXXXX", script[128];
    int fd = mkstemp(log);
    CU_ASSERT_FATAL(fd >= 0);
    close(fd);
    CU_ASSERT_FATAL(counting_tool(script, sizeof script, log));
    const char *old = getenv(TSL_MCA_ENV);
    char *saved = old ? strdup(old) : NULL;
    setenv(TSL_MCA_ENV, script, 1);
    tsl_arena *ar = tsl_arena_new(), *prev = tsl_arena_set_current(ar);
    tsl_cost_static_detail d;
    CU_ASSERT_EQUAL(tsl_cost_static_func(kernel_two_loops(&t, 1000 + c, 7919, 7927), &t, 1, &d), TSL_OK);
    CU_ASSERT(d.loops >= 2);
    CU_ASSERT_EQUAL(lines_of(log), 1);
    if (d.loops < 2 || lines_of(log) != 1)
      fprintf(stderr, "\n  %s: %d loops, %d runs of the tool\n", t.cpu, d.loops, lines_of(log));
    tsl_arena_set_current(prev);
    tsl_arena_free(ar);
    if (saved) setenv(TSL_MCA_ENV, saved, 1);
    else unsetenv(TSL_MCA_ENV);
    free(saved);
    unlink(script);
    unlink(log);
  }
}

static void test_a_bad_block_is_reported_by_its_index(void) {
  for (int c = 0; c < 2; c++) {
    tsl_target t;
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse(cpus[c], &t), TSL_OK);
    if (!model_here(&t)) continue;
    bool arm = t.arch == TSL_ARCH_AARCH64;
    const char *const *b = arm ? arm_blocks : x86_blocks;
    /* a mnemonic the assembler does not know (the tool names its line) */
    const char *malformed = arm ? "fadd v0.4s, v0.4s, v1.4s\nbogus x0, x1\n" : "vaddps %ymm0, %ymm1, %ymm1\nbogus %eax\n";
    const char *blocks[3] = {b[0], malformed, b[1]};
    double cyc[3];
    int bad = -1;
    CU_ASSERT_EQUAL(tsl_mca_blocks_cycles(t.triple, t.cpu, blocks, 3, 71, 20.0, cyc, &bad), TSL_ERR_RUNTIME);
    CU_ASSERT_EQUAL(bad, 1);
    CU_ASSERT(strncmp(tsl_last_error(), "block 1: ", 9) == 0);
    CU_ASSERT(strstr(tsl_last_error(), "bogus") != NULL);
    /* an instruction the CPU lacks (the tool quotes it, names no line): AVX-512 on
     * znver3, SVE on neoverse-n1 */
    const char *lacking = arm ? "fadd z0.s, z1.s, z2.s\n" : "vaddps %zmm0, %zmm1, %zmm1\n";
    const char *blocks2[3] = {b[2], b[3], lacking};
    bad = -1;
    CU_ASSERT_EQUAL(tsl_mca_blocks_cycles(t.triple, t.cpu, blocks2, 3, 71, 20.0, cyc, &bad), TSL_ERR_RUNTIME);
    CU_ASSERT_EQUAL(bad, 2);
    CU_ASSERT(strncmp(tsl_last_error(), "block 2: ", 9) == 0);
    if (bad != 2) fprintf(stderr, "\n  %s: %s\n", t.cpu, tsl_last_error());
    /* the good blocks of a failed batch still cost what they cost alone */
    double one = 0;
    CU_ASSERT_EQUAL(tsl_mca_block_cycles(t.triple, t.cpu, b[2], 71, 20.0, &one), TSL_OK);
    CU_ASSERT_DOUBLE_EQUAL(one, reference_cycles(&t, b[2], 71), 0);
  }
}

/* The Zen 5 proxy rewrite, against hand-written expectations: zmm as ymm with halved
 * embedded broadcasts, broadcasts from memory as loads, register broadcasts and other
 * CPUs untouched. */
static void test_znver5_blocks_are_rewritten_for_the_zen4_model(void) {
  const char *in = "vbroadcastss\t64(%r13,%rbp), %zmm24\n"
                   "vfmadd231ps\t(%rcx,%r14,4){1to16}, %zmm20, %zmm3\n"
                   "vaddpd\t8(%rax){1to8}, %zmm1, %zmm2\n"
                   "vbroadcastss\t%xmm0, %ymm1\n"
                   "vpbroadcastd\t(%rax), %zmm17 {%k1}\n"
                   "vpbroadcastq\t8(%rax), %zmm30\n"
                   "addq\t$64, %r15\n";
  /* integer broadcasts become the EVEX loads (vmovdqu32/64): VEX vmovdqu cannot name
   * ymm16-31 or take a mask, and llvm-mca would refuse the block */
  const char *want = "vmovups     \t64(%r13,%rbp), %ymm24\n"
                     "vfmadd231ps\t(%rcx,%r14,4){1to8}, %ymm20, %ymm3\n"
                     "vaddpd\t8(%rax){1to4}, %ymm1, %ymm2\n"
                     "vbroadcastss\t%xmm0, %ymm1\n"
                     "vmovdqu32   \t(%rax), %ymm17 {%k1}\n"
                     "vmovdqu64   \t8(%rax), %ymm30\n"
                     "addq\t$64, %r15\n";
  char *out = NULL;
  CU_ASSERT_EQUAL(tsl_mca_proxy_block("znver5", in, &out), TSL_OK);
  CU_ASSERT_PTR_NOT_NULL_FATAL(out);
  CU_ASSERT_STRING_EQUAL(out, want);
  free(out);
  out = (char *)in;
  CU_ASSERT_EQUAL(tsl_mca_proxy_block("znver4", in, &out), TSL_OK);
  CU_ASSERT_PTR_NULL(out);
  out = (char *)in;
  CU_ASSERT_EQUAL(tsl_mca_proxy_block("znver5", "addq\t$64, %r15\n", &out), TSL_OK);
  CU_ASSERT_PTR_NULL(out);
}

void tsl_tests_tuner_mca(void) {
  CU_pSuite s = CU_add_suite("tuner_mca", NULL, NULL);
  CU_add_test(s, "znver5 blocks are rewritten for the Zen 4 model", test_znver5_blocks_are_rewritten_for_the_zen4_model);
  CU_add_test(s, "batched code regions cost what single runs cost (znver3, neoverse-n1)",
              test_batched_regions_cost_what_single_runs_cost);
  CU_add_test(s, "a candidate's loops are one run of llvm-mca", test_a_candidate_is_one_run_of_the_tool);
  CU_add_test(s, "a bad block of a batch is reported by its index", test_a_bad_block_is_reported_by_its_index);
}
