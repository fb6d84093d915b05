/* The command-line tool and the example program, run as a user runs them: exit codes,
 * the key lines of their output, and clear errors (never a signal) on bad input. */
#include <CUnit/CUnit.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tuner/cost_static.h"

/* Runs `cmd` through the shell with stderr folded into stdout; returns the exit status
 * (or 128 + signal) and the first `n` bytes of output in out. */
static int run(const char *cmd, char *out, size_t n) {
  char full[2048];
  snprintf(full, sizeof full, "%s 2>&1", cmd);
  FILE *p = popen(full, "r");
  if (!p) return -1;
  size_t len = 0, r;
  char sink[4096];
  while ((r = fread(len < n - 1 ? out + len : sink, 1, len < n - 1 ? n - 1 - len : sizeof sink, p)) > 0)
    if (len < n - 1) len += r;
  out[len] = '\0';
  int status = pclose(p);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char out[1 << 16];

#define TUNECLI TSL_TUNECLI_PATH

static void expect(const char *args, int code, const char *needle) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s %s", TUNECLI, args);
  int rc = run(cmd, out, sizeof out);
  if (rc != code || !strstr(out, needle))
    printf("\n  `tunecli %s`: exit %d (want %d), output lacks '%s':\n%.2000s\n", args, rc, code, needle, out);
  CU_ASSERT_EQUAL(rc, code);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, needle));
}

/* expect() of the command line formatted from fmt. */
static void expectf(int code, const char *needle, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void expectf(int code, const char *needle, const char *fmt, ...) {
  char args[4096];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(args, sizeof args, fmt, ap);
  va_end(ap);
  expect(args, code, needle);
}

/* dir/name := text; the path in path (n bytes). */
static void write_file(const char *dir, const char *name, const char *text, char *path, size_t n) {
  snprintf(path, n, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(text, f);
  fclose(f);
}

/* The schedule `show` printed in out (the lines between the header starting with `header`
 * and the loop IR) as the file dir/back.txt, for --schedule; its path in path. */
static void save_printed_schedule(const char *header, const char *dir, char *path, size_t n) {
  char *start = strstr(out, header);
  char *end = start ? strstr(start, "\n# loop IR") : NULL;
  char *nl = start ? strchr(start, '\n') : NULL;
  CU_ASSERT_FATAL(nl && end && nl < end);
  *end = '\0';
  write_file(dir, "back.txt", nl + 1, path, n);
}

static void test_tunecli_show_and_run_op(void) {
  expect("show conv2d --time", 0, "# loop IR");
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "# compile time"));
  expect("show matmul --shape A=10x7 --shape B=7x3 --llvm", 0, "define");
  expect("show relu --target armv8 --asm", 0, "# assembly (armv8");
  expect("run-op matmul --shape A=100x70 --shape B=70x30", 0, "check: PASS");
  expect("run-op conv2d --shape data=2x5x13x11 --shape weight=7x5x3x3 --param stride_h=2 --param dilation_w=2", 0,
         "check: PASS");
  /* a shape or param given twice is refused, not silently overridden by the last */
  expect("run-op matmul --shape A=8x8 --shape A=4x8 --shape B=8x8", 2, "the shape of A is given twice");
  expect("run-op conv2d --param stride_h=2 --param stride_h=1", 2, "--param stride_h is given twice");
  expect("list", 0, "conv2d_nchw");
  expect("help", 0, "--schedule FILE");
}

static void test_tunecli_user_dsl_file_and_schedule_file(void) {
  char dir[] = "/tmp/tessel-tunecli-XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  char op[512], sched[512], bad[512], args[2048];
  write_file(dir, "op.tsl",
             "op softplus(X: f32[M, N], beta: float = 1.0)\n  y[i, j] = log(1.0 + exp(beta * X[i, j])) / beta\n", op,
             sizeof op);
  write_file(dir, "s.txt", "split(y, j, 4)\nvectorize(y, j.inner)\n", sched, sizeof sched);
  write_file(dir, "bad.tsl", "op broken(X: f32[M, N])\n  y[i, j] = X[i, j] +\n", bad, sizeof bad);
  snprintf(args, sizeof args, "run-op --file %s --shape X=7x9 --param beta=0.5", op);
  expect(args, 0, "check: PASS");
  snprintf(args, sizeof args, "run-op --file %s --shape X=7x9 --schedule %s", op, sched);
  expect(args, 0, "check: PASS");
  snprintf(args, sizeof args, "run-op --file %s", op);
  expect(args, 2, "give the shape of input X");
  /* the values of run-op's and compile's own options are not the OP (they were: "no op '3'") */
  snprintf(args, sizeof args, "run-op --file %s --repeat 3 --shape X=7x9 --seed 5", op);
  expect(args, 0, "check: PASS");
  char so[600];
  snprintf(so, sizeof so, "%s/k.so", dir);
  snprintf(args, sizeof args, "compile --file %s --shape X=7x9 -o %s", op, so);
  expect(args, 0, "softplus");
  remove(so);
  snprintf(args, sizeof args, "show --file %s", bad);
  expect(args, 2, "bad.tsl:3:1: error");
  snprintf(args, sizeof args, "show matmul --schedule %s", dir);
  expect(args, 1, "is not a regular file");
  remove(op);
  remove(sched);
  remove(bad);
  rmdir(dir);
}

/* --schedule and --records in show, run-op, compile and tune-op: a schedule file's errors
 * are located; tune-op measures the file's schedule as the starting point; the records
 * it writes give show/run-op/compile the best schedule, which show prints as text that
 * --schedule takes back. */
static void test_tunecli_schedule_and_records_options(void) {
  char dir[] = "/tmp/tessel-tunecli-sr-XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  char sched[512], bad[512], rec[512], back[512], so[512];
  write_file(dir, "s.txt", "# the user's start\nsplit(C, j, 8)\nvectorize(C, j.inner)\n", sched, sizeof sched);
  write_file(dir, "bad.txt", "split(C, j, 8)\n\n   reorder(C, j.inner, q)\n", bad, sizeof bad);
  snprintf(rec, sizeof rec, "%s/r.jsonl", dir);
  snprintf(back, sizeof back, "%s/back.txt", dir);
  snprintf(so, sizeof so, "%s/k.so", dir);
  const char *shape = "--shape A=24x16 --shape B=16x40";
  expectf(1, "bad.txt:3:4: error: step reorder(C, j.inner, q) does not apply",
          "show matmul %s --schedule %s", shape, bad);
  expectf(0, "check: PASS", "run-op matmul %s --schedule %s", shape, sched);
  /* errors only lowering finds name the step's line too (they named no line) */
  char late[512];
  write_file(dir, "late.txt", "split(C, i, 8)\nunroll(C, j)\n# more\n  unroll(C, k)\n", late, sizeof late);
  expectf(1, "late.txt:4:3: error: step unroll(C, k) applies, but the schedule then fails: unroll: axis k",
          "run-op matmul --shape A=64x64 --shape B=64x64 --schedule %s", late);
  expectf(1, "late.txt:4:3: error", "compile matmul --shape A=64x64 --shape B=64x64 --schedule %s -o %s", late, so);
  write_file(dir, "late.txt", "\nvectorize(C, j)\n", late, sizeof late);
  expectf(1, "late.txt:2:1: error: step vectorize(C, j) applies, but the schedule then fails: vectorize: axis j",
          "show matmul --shape A=8x100 --shape B=100x100 --schedule %s", late);
  write_file(dir, "late.txt", "split(C, j, 16)\nvector_width(512)\nvectorize(C, j.inner)\n", late, sizeof late);
  expectf(1, "late.txt:2:1: error: step vector_width(512) applies, but the schedule then fails",
          "show matmul --shape A=8x64 --shape B=64x64 --target x86-64-avx2 --schedule %s", late);
  expectf(0, "# loop IR", "show matmul --shape A=8x64 --shape B=64x64 --target x86-64-avx512 --schedule %s", late);
  /* a width the target does not offer, narrower than its own: located, not a codegen error */
  write_file(dir, "late.txt", "# narrow\nvector_width(128)\n", late, sizeof late);
  expectf(1, "late.txt:2:1: error: step vector_width(128) applies, but the schedule then fails: target x86-64-avx512",
          "show matmul --shape A=8x64 --shape B=64x64 --target x86-64-avx512 --schedule %s", late);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, ": no 128-bit vectors (widths: 512, 256)"));
  expectf(1, "late.txt:2:1: error", "show matmul --shape A=8x64 --shape B=64x64 --target x86-64-avx2 --schedule %s",
          late);
  expectf(0, "# loop IR", "show matmul --shape A=8x64 --shape B=64x64 --target armv8 --schedule %s", late);
  /* a prefix failing otherwise than the whole (the unroll is split away later) is not blamed */
  write_file(dir, "late.txt", "unroll(C, k)\nunroll(C, j)\nsplit(C, j, 128)\nvectorize(C, j.inner)\n", late,
             sizeof late);
  expectf(1, "late.txt:4:1: error: step vectorize(C, j.inner) applies, but the schedule then fails: vectorize",
          "show matmul --shape A=64x64 --shape B=64x256 --schedule %s", late);
  /* the step blamed is the one after the last prefix that passes, though the message (the
   * whole schedule's) counts the copies the later unroll adds */
  write_file(dir, "late.txt", "unroll(C, j)\nunroll(C, k)\nsplit(C, i, 2)\nunroll(C, i.inner)\n", late, sizeof late);
  expectf(1, "late.txt:2:1: error: step unroll(C, k) applies, but the schedule then fails: unroll: axis k",
          "show matmul --shape A=64x64 --shape B=64x64 --schedule %s", late);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "8192 copies"));
  /* a tab before the step: the caret line keeps it, so the caret lines up */
  write_file(dir, "late.txt", "split(C, j, 8)\n\treorder(C, j.inner, q)\n", late, sizeof late);
  expectf(1, "late.txt:2:2: error: step reorder(C, j.inner, q) does not apply", "show matmul %s --schedule %s", shape,
          late);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  \treorder(C, j.inner, q)\n  \t^"));
  remove(late);
  expectf(1, "cannot open", "run-op matmul %s --records %s", shape, rec);
  expectf(1, "bad.txt:3:4: error",
          "tune-op matmul %s --trials 4 --no-peak --records %s --schedule %s", shape, rec, bad);
  expectf(0, "your schedule (matmul.schedule_text):",
          "tune-op matmul %s --trials 4 --no-peak --records %s --schedule %s", shape, rec, sched);
  expectf(0, "# schedule (from ", "show matmul %s --records %s", shape, rec);
  save_printed_schedule("# schedule (from ", dir, back, sizeof back);
  expectf(0, "check: PASS", "run-op matmul %s --schedule %s", shape, back);
  expectf(0, "check: PASS", "run-op matmul %s --records %s", shape, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "schedule from "));
  expectf(0, "# schedule from ", "compile matmul %s --records %s -o %s", shape, rec, so);
  /* another instance has no record */
  expectf(1, "holds no usable record of matmul(A:f32[8,8]",
          "run-op matmul --shape A=8x8 --shape B=8x8 --records %s", rec);
  expectf(2, "give one of --schedule FILE, --records FILE, --template NAME", "show matmul --records %s --schedule %s",
          rec, sched);
  /* a static run (armv8 without a device: docs/cost_static.md) says its costs are
   * estimates in the table and the sum, and show --records says so of its record */
  char srec[512];
  snprintf(srec, sizeof srec, "%s/s.jsonl", dir);
  expectf(0, "(2 estimated now, 0 errors)", "tune-op matmul %s --target armv8 --trials 2 --records %s", shape, srec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "est. (us)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "sum of layer estimates (static cost model)"));
  CU_ASSERT_PTR_NULL(strstr(out, "measured now"));
  expectf(0, "ms, estimated by the static cost model (" TSL_COST_STATIC_MODEL ") for armv8",
          "show matmul %s --target armv8 --records %s", shape, srec);
  CU_ASSERT_PTR_NULL(strstr(out, "measured on"));
  expectf(0, "ms, measured on ", "show matmul %s --records %s", shape, rec); /* host, or x86-64-avx2 at 8 lanes */
  CU_ASSERT_PTR_NULL(strstr(out, "estimated by"));
  remove(srec);
  remove(sched);
  remove(bad);
  remove(rec);
  remove(back);
  remove(so);
  rmdir(dir);
}

/* Rewrites the records file `path` in place: every record of template `fast_tpl` gets the
 * cost `fast` (seconds) and `fast_threads` threads, every other one `slow` and
 * `slow_threads`, and measured inside a model when slow_in_model (the known costs the
 * lookup is checked against; docs/records.md: "result":[[COSTS...], ...], "threads":N,
 * "context":"model NAME", one JSON object a line). */
static void set_record_costs(const char *path, const char *fast_tpl, double fast, int fast_threads, double slow,
                             int slow_threads, bool slow_in_model) {
  FILE *f = fopen(path, "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  static char text[1 << 20], line[1 << 14];
  size_t len = 0;
  int n = 0;
  char tpl[160];
  snprintf(tpl, sizeof tpl, "\"template\":\"%s\"", fast_tpl);
  while (fgets(line, sizeof line, f)) {
    char *res = strstr(line, "\"result\":[["), *close = res ? strchr(res, ']') : NULL;
    char *thr = strstr(line, "\"threads\":");
    CU_ASSERT_FATAL(res && close && thr && thr > close);
    bool is_fast = strstr(line, tpl) != NULL;
    char *thr_end = thr + strlen("\"threads\":");
    while (*thr_end >= '0' && *thr_end <= '9') thr_end++;
    char *body = line[0] == '{' && strncmp(line, "{\"context\":", 11) == 0 ? strchr(line, ',') + 1 : line + 1;
    if (!is_fast && slow_in_model) len += (size_t)snprintf(text + len, sizeof text - len, "{\"context\":\"model t\",");
    else len += (size_t)snprintf(text + len, sizeof text - len, "{");
    len += (size_t)snprintf(text + len, sizeof text - len, "%.*s%.9f%.*s%d%s", (int)(res + 11 - body), body,
                            is_fast ? fast : slow, (int)(thr + 10 - close), close, is_fast ? fast_threads : slow_threads,
                            thr_end);
    CU_ASSERT_FATAL(len < sizeof text);
    n++;
  }
  fclose(f);
  CU_ASSERT_FATAL(n >= 2);
  f = fopen(path, "w");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs(text, f);
  fclose(f);
}

/* tune-op of an algorithm's own operator (Winograd F(2x2), keyed by its own shapes: U,
 * not the weights) serves that operator in run-op and show, and the conv layer it computes
 * (show of the family operator: the graph compiler's lookup); another instance of the
 * operator has no record. Before, run-op and show looked only under the layer's family key
 * and refused the records tune-op had just written. */
static void test_tunecli_tune_op_records_serve_the_algorithms_layer(void) {
  char dir[] = "/tmp/tessel-tunecli-opkey-XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  char rec[512];
  snprintf(rec, sizeof rec, "%s/r.jsonl", dir);
  const char *op = "conv2d_winograd_f2 --shape data=1x2x8x8x8 --shape U=4x4x2x16x8 --shape bias=2x8";
  expectf(0, "records: ", "tune-op %s --trials 2 --no-peak --records %s", op, rec);
  expectf(0, "check: PASS", "run-op %s --records %s --repeat 2", op, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "schedule from "));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "template conv2d_winograd_f2.blocked"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "isolated record"));
  expectf(0, "algorithm conv2d_nchwc_bias.winograd_f2 (operator conv2d_winograd_f2)",
          "show conv2d_nchwc_bias --shape data=1x2x8x8x8 --shape weight=2x2x3x3x8x8 --shape bias=2x8 --records %s", rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "op conv2d_winograd_f2(data: f32[1, 2, 8, 8, 8], U: f32[4, 4, 2, 16, 8]"));
  /* 10x10 images: another instance */
  expectf(1, "holds no usable record",
          "run-op conv2d_winograd_f2 --shape data=1x2x10x10x8 --shape U=4x4x2x16x8 --shape bias=2x8 --records %s", rec);
  /* an im2col instance at a pack_rows the compiler does not use (its example's): its own
   * records, its own pack_rows */
  const char *im2col = "conv2d_nchwc_im2col --param pack_rows=4";
  expectf(0, "records: ", "tune-op %s --trials 2 --no-peak --records %s", im2col, rec);
  expectf(0, "check: PASS", "run-op %s --records %s --repeat 2", im2col, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "template conv2d_nchwc_im2col.blocked"));
  expectf(0, "pack_rows=4", "show %s --records %s", im2col, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "po * 4 + pi")); /* the program of pack_rows 4, not 6 */
  unlink(rec);
  rmdir(dir);
}

/* --records of a conv layer's family operator resolves as the graph compiler does: the
 * best record over every algorithm of the family (here direct and im2col), whose operator
 * then runs; an algorithm's own operator (im2col, whose key holds pack_rows) takes that
 * algorithm's best record of the layer it computes (family key); records timed with
 * --threads N come first; bad --threads is refused. */
static void test_tunecli_records_of_conv_layer_pick_the_family_best(void) {
  char dir[] = "/tmp/tessel-tunecli-fam-XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  char rec[512];
  snprintf(rec, sizeof rec, "%s/r.jsonl", dir);
  const char *layer = "conv2d_nchwc_bias --shape data=1x2x8x8x8 --shape weight=2x2x3x3x8x8 --shape bias=2x8";
  expectf(0, "conv2d_nchwc_bias.direct", "tune-op %s --template conv2d_nchwc_bias.direct --trials 2 --no-peak --records %s",
          layer, rec);
  expectf(0, "conv2d_nchwc_im2col.blocked",
          "tune-op %s --template conv2d_nchwc_im2col.blocked --trials 2 --no-peak --records %s", layer, rec);
  /* im2col 1 us, direct 1 ms, both at 1 thread: the family's best is im2col */
  set_record_costs(rec, "conv2d_nchwc_im2col.blocked", 1e-6, 1, 1e-3, 1, false);
  expectf(0, "algorithm conv2d_nchwc_bias.im2col (operator conv2d_nchwc_im2col), template conv2d_nchwc_im2col.blocked",
          "show %s --records %s --threads 1", layer, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "isolated record, 0.0010 ms"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "# tensor expression\n")); /* the im2col operator's program */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "col["));
  expectf(0, "check: PASS", "run-op %s --records %s --threads 1", layer, rec);
  /* direct faster: direct */
  set_record_costs(rec, "conv2d_nchwc_bias.direct", 1e-6, 1, 1e-3, 1, false);
  expectf(0, "algorithm conv2d_nchwc_bias.direct (operator conv2d_nchwc_bias), template conv2d_nchwc_bias.direct",
          "show %s --records %s --threads 1", layer, rec);
  /* the im2col operator named itself (its example pack_rows 4, the compiler's 6): the
   * layer's im2col record, found under the family key, though direct wins the layer */
  const char *im2col = "conv2d_nchwc_im2col --shape data=1x2x8x8x8 --shape weight=2x16x3x3x8 --shape bias=2x8 "
                       "--param stride_h=1 --param stride_w=1";
  expectf(0, "algorithm conv2d_nchwc_bias.im2col (operator conv2d_nchwc_im2col), template conv2d_nchwc_im2col.blocked",
          "show %s --records %s --threads 1", im2col, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "isolated record, 1.0000 ms"));
  expectf(0, "check: PASS", "run-op %s --records %s --threads 1", im2col, rec);
  /* another im2col layer (K = 8) has no record; the GEMM 1x1 operator does not state H and W */
  expectf(1, "holds no usable record of conv2d_nchwc_bias(data:f32[1,2,8,8,8],weight:f32[1,2,3,3,8,8]",
          "show conv2d_nchwc_im2col --shape data=1x2x8x8x8 --shape weight=1x16x3x3x8 --shape bias=1x8 "
          "--param stride_h=1 --param stride_w=1 --records %s", rec);
  expectf(1, "states H x W as one extent", "show conv2d_nchwc_1x1_bias --records %s", rec);
  /* im2col faster but timed at 2 threads: at --threads 1 the slower direct one of 1 thread
   * wins (docs/records.md: records of the compiling thread count first), at 2 im2col */
  set_record_costs(rec, "conv2d_nchwc_im2col.blocked", 1e-6, 2, 1e-3, 1, false);
  expectf(0, "template conv2d_nchwc_bias.direct", "show %s --records %s --threads 1", layer, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "1.0000 ms"));
  expectf(0, "template conv2d_nchwc_im2col.blocked", "show %s --records %s --threads 2", layer, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, ", 2 threads)"));
  /* im2col faster in isolation, direct measured inside the model: the in-model record wins */
  set_record_costs(rec, "conv2d_nchwc_im2col.blocked", 1e-6, 1, 1e-3, 1, true);
  expectf(0, "template conv2d_nchwc_bias.direct", "show %s --records %s --threads 1", layer, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "in-model record, 1.0000 ms"));
  expect("show matmul --threads 0", 2, "--threads wants a thread count from 1 to 256, got '0'");
  expect("run-op matmul --threads two", 2, "--threads wants a thread count from 1 to 256, got 'two'");
  expect("show matmul --threads", 2, "--threads needs a value");
  remove(rec);
  rmdir(dir);
}

/* --template NAME: show lists an operator's templates under its default loop nest and prints
 * the one named with its default config; that schedule, and the text show prints of it fed
 * back through --schedule, runs and matches the TE's interpretation (run-op's check); a name
 * of another operator's template is refused with the operator's own. run-op --repeat N
 * takes N samples. */
static void test_tunecli_template_option_and_run_op_repeat(void) {
  char dir[] = "/tmp/tessel-tunecli-tp-XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  char back[512];
  const char *op = "conv2d_nchwc_bias --shape data=1x2x7x9x8 --shape weight=2x2x3x3x8x8 --shape bias=2x8";
  expectf(0, "its templates, whose default config", "show %s", op);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "conv2d_nchwc_bias.direct"));
  expectf(0, "# schedule (template conv2d_nchwc_bias.direct, default config: ", "show %s --template %s", op,
          "conv2d_nchwc_bias.direct");
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "vectorize(conv, k)")); /* a template's schedule, not the bare loop nest */
  save_printed_schedule("# schedule (template ", dir, back, sizeof back);
  expectf(0, "check: PASS", "run-op %s --schedule %s", op, back);
  expectf(0, "check: PASS", "run-op %s --template conv2d_nchwc_bias.direct --repeat 7", op);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "(7 samples)"));
  expectf(0, "check: PASS", "run-op matmul --shape A=30x20 --shape B=20x50 --template matmul.blis");
  expectf(1, "its templates: conv2d_nchwc_bias.direct", "show %s --template matmul.blis", op);
  expectf(1, "it has none", "show relu --template matmul.blis");
  expectf(2, "give one of", "run-op %s --template conv2d_nchwc_bias.direct --schedule %s", op, back);
  expect("run-op matmul --repeat 0", 2, "--repeat wants a whole number from 1 to 1000, got '0'");
  expect("run-op matmul --repeat 1001", 2, "--repeat wants a whole number");
  remove(back);
  rmdir(dir);
}

/* tune-op --file searches the op's schedule block (docs/dsl.md section 11), or the
 * auto-scheduler's sketches for an op without one; the records give run-op/show/compile
 * --records the tuned schedule; bad knobs stop tune-op with the file's line and column
 * before any measurement. */
static void test_tunecli_tune_op_file_template(void) {
  char dir[] = "/tmp/tessel-tunecli-tpl-XXXXXX";
  CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
  char op[512], bad[512], plain[512], rec[512];
  write_file(dir, "ops.tsl",
             "op rowmax(X: f32[M, N])\n  out[i] = max(j: X[i, j])\n  schedule\n"
             "    knob ti = split(out, i, max = 8)\n    knob tj = split(out, j, [5, 10, 1])\n"
             "    knob vec = annotate(vectorize)\n    split(out, i, ti)\n    split(out, j, tj)\n"
             "    reorder(out, i.outer, j.outer, j.inner, i.inner)\n    vectorize(out, i.inner) if vec\n",
             op, sizeof op);
  write_file(dir, "bad.tsl",
             "op rowmax(X: f32[M, N])\n  out[i] = max(j: X[i, j])\n  schedule\n    knob tj = split(out, j, [3])\n"
             "    split(out, j, tj)\n",
             bad, sizeof bad);
  write_file(dir, "plain.tsl", "op rowmax(X: f32[M, N])\n  out[i] = max(j: X[i, j])\n", plain, sizeof plain);
  snprintf(rec, sizeof rec, "%s/r.jsonl", dir);
  expectf(0, "template rowmax.dsl: 3 knobs, 24 configs",
          "tune-op rowmax --file %s --shape X=16x40 --trials 6 --no-peak --records %s", op, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "config ti="));
  expectf(0, "check: PASS", "run-op --file %s --shape X=16x40 --records %s", op, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "template rowmax.dsl"));
  expectf(0, "split(out, i, ", "show --file %s --shape X=16x40 --records %s", op, rec);
  expectf(1, "bad.tsl:4:10: error: knob tj: split factor 3 does not divide the extent 40 of out.j",
          "tune-op rowmax --file %s --shape X=16x40 --trials 2 --records %s", bad, rec);
  /* the edited op (another text) does not take the first one's records */
  expectf(1, "holds no usable record of rowmax(X:f32[16,40];)",
          "run-op --file %s --shape X=16x40 --records %s", plain, rec);
  /* without a schedule block: the auto-scheduler's sketches (tuner/autosched.h) */
  expectf(0, "searching the auto-scheduler's sketches (template rowmax.auto)",
          "tune-op --file %s --shape X=16x40 --trials 4 --no-peak --search evolution --records %s", plain, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "config sketch="));
  expectf(0, "check: PASS", "run-op --file %s --shape X=16x40 --records %s", plain, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "template rowmax.auto"));
  /* every step of the text form is a template step, storage_order too (docs/dsl.md 11):
   * every config tried passes the runner's check against the interpretation */
  char packed[512];
  write_file(dir, "packed.tsl",
             "op mm(A: f32[M, K], B: f32[K, N])\n  out[i, j] = sum(k: A[i, k] * B[k, j])\n  schedule\n"
             "    knob ti = split(out, i, [2, 4])\n    knob u = annotate(unroll)\n    cache_write(out, local)\n"
             "    split(out, i, ti)\n    compute_at(out.local, out, i.outer)\n"
             "    storage_order(out.local, j, i)\n    unroll(out.local, j) if u\n",
             packed, sizeof packed);
  expectf(0, "template mm.dsl: 2 knobs, 4 configs",
          "tune-op mm --file %s --shape A=8x5 --shape B=5x6 --trials 2 --no-peak --records %s", packed, rec);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "(2 measured now, 0 errors)"));
  expectf(0, "storage_order(out.local, j, i)", "show --file %s --shape A=8x5 --shape B=5x6 --records %s", packed, rec);
  remove(packed);
  remove(op);
  remove(bad);
  remove(plain);
  remove(rec);
  rmdir(dir);
}

/* Malformed input: a clear message and exit 1 or 2, never a crash. */
static void test_tunecli_bad_input_is_refused_clearly(void) {
  expect("run-op nosuchop", 2, "unknown operator 'nosuchop'");
  expect("show matmul --shape A=1x", 2, "want 1 to 8 positive extents");
  expect("show matmul --shape A=0x3", 2, "positive extents");
  expect("show matmul --shape Q=3x3", 2, "name one input of matmul");
  expect("show matmul --param foo=0x2", 1, "no parameter named 'foo'");
  expect("show conv2d --param stride_h=0", 1, "stride");
  expect("show conv2d --shape data=1x4x8x8", 1, "size C is");
  expect("show matmul --shape A=4294967296x4294967296 --shape B=4294967296x4294967296", 1, "too large");
  expect("run-op conv2d --seed abc", 2, "--seed wants");
  expect("run-op matmul --target nosuchtarget", 1, "nosuchtarget");
  expect("run-op matmul --target \"x86-64-avx2 -mcpu=cortex-a53\"", 1, "not a known x86-64 CPU");
  expect("run-op matmul --target armv8", 1, "armv8");
  expect("frobnicate", 2, "unknown command");
}

#include "target/target.h"
#include "tests/x86_level.h"

/* The five (class, score) pairs of a `tunecli run` output's top-5 line; false without one. */
static bool parse_top5(const char *text, int cls[5], double score[5]) {
  const char *p = strstr(text, "top-5 of output 0:");
  if (!p) return false;
  p += strlen("top-5 of output 0:");
  for (int i = 0; i < 5; i++) {
    int used = 0;
    if (sscanf(p, " %d (%lf)%n", &cls[i], &score[i], &used) != 2) return false;
    p += used;
  }
  return true;
}

/* C12 through the tool: every x86-64 target this machine runs gives the host's results
 * from `run-op`, `run` (squeezenet1_1, seeded input: the same top-5 classes, scores
 * within 1e-2) and `tune-op` (records of that target); one it cannot run (AVX-512 on an
 * AVX2 machine, or under TSL_HOST_TARGET=x86-64-avx2) is refused by each command with
 * exit 1 and the missing feature named, never an illegal-instruction signal. Which
 * targets run comes from the compiler's CPU detection (tests/x86_level.h). */
static void test_C12_tunecli_on_every_x86_target_runs_as_host_or_is_refused(void) {
  tsl_target host;
  CU_ASSERT_EQUAL_FATAL(tsl_target_detected_host(&host), TSL_OK);
  if (host.arch != TSL_ARCH_X86_64) return;
  const char *run_args = "run squeezenet1_1 --repeat 1 --threads 1";
  char args[1024];
  int want_cls[5];
  double want_score[5];
  snprintf(args, sizeof args, "%s --target host", run_args);
  expect(args, 0, "top-5 of output 0:");
  CU_ASSERT_FATAL(parse_top5(out, want_cls, want_score));
  char records[] = "/tmp/tessel-tunecli-target-XXXXXX";
  int fd = mkstemp(records);
  CU_ASSERT_FATAL(fd >= 0);
  close(fd);
  const char *const targets[] = {"x86-64-avx2", "x86-64-avx512"};
  for (int i = 0; i < 2; i++) {
    tsl_target t;
    const char *why = NULL;
    CU_ASSERT_EQUAL_FATAL(tsl_target_parse(targets[i], &t), TSL_OK);
    bool runs = tsl_test_x86_effective_level() >= (i == 0 ? 3 : 4);
    CU_ASSERT_EQUAL(tsl_target_runs_on_host(&t, &why), runs);
    char missing[96] = "feature";
    if (!runs && why) snprintf(missing, sizeof missing, "%s", why); /* "feature avx512f" */
    snprintf(args, sizeof args, "run-op conv2d --target %s", targets[i]);
    expect(args, runs ? 0 : 1, runs ? "check: PASS" : missing);
    snprintf(args, sizeof args, "%s --target %s", run_args, targets[i]);
    expect(args, runs ? 0 : 1, runs ? "top-5 of output 0:" : missing);
    if (runs) {
      int cls[5];
      double score[5];
      CU_ASSERT_FATAL(parse_top5(out, cls, score));
      for (int k = 0; k < 5; k++) {
        CU_ASSERT_EQUAL(cls[k], want_cls[k]);
        CU_ASSERT_DOUBLE_EQUAL(score[k], want_score[k], 1e-2);
      }
    }
    unlink(records);
    snprintf(args, sizeof args, "tune-op conv2d --trials 2 --target %s --records %s", targets[i], records);
    expect(args, runs ? 0 : 1, runs ? "records:" : missing);
    FILE *f = fopen(records, "r");
    char line[4096] = "", want[128];
    snprintf(want, sizeof want, "{\"input\":[\"%s\",", targets[i]);
    if (f) {
      if (!fgets(line, sizeof line, f)) line[0] = '\0';
      fclose(f);
    }
    if (runs) {
      CU_ASSERT_PTR_NOT_NULL(strstr(line, want));
    } else {
      CU_ASSERT_STRING_EQUAL(line, ""); /* refused before any record */
    }
  }
  unlink(records);
}

static void test_custom_op_example_prints_scaled_add(void) {
  int rc = run(TSL_CUSTOM_OP_PATH, out, sizeof out);
  CU_ASSERT_EQUAL(rc, 0);
  /* C = A + 0.5 * B with A = 0..14, B = 10 */
  CU_ASSERT_STRING_EQUAL(out, "5 6 7 8 9\n10 11 12 13 14\n15 16 17 18 19\n");
}

void tsl_tests_e2e_tunecli(void) {
  CU_pSuite s = CU_add_suite("e2e_tunecli", NULL, NULL);
  CU_add_test(s, "test_tunecli_show_and_run_op", test_tunecli_show_and_run_op);
  CU_add_test(s, "test_tunecli_user_dsl_file_and_schedule_file", test_tunecli_user_dsl_file_and_schedule_file);
  CU_add_test(s, "test_tunecli_bad_input_is_refused_clearly", test_tunecli_bad_input_is_refused_clearly);
  CU_add_test(s, "test_tunecli_schedule_and_records_options", test_tunecli_schedule_and_records_options);
  CU_add_test(s, "test_tunecli_tune_op_file_template", test_tunecli_tune_op_file_template);
  CU_add_test(s, "test_tunecli_records_of_conv_layer_pick_the_family_best",
              test_tunecli_records_of_conv_layer_pick_the_family_best);
  CU_add_test(s, "test_tunecli_template_option_and_run_op_repeat", test_tunecli_template_option_and_run_op_repeat);
  CU_add_test(s, "test_custom_op_example_prints_scaled_add", test_custom_op_example_prints_scaled_add);
  CU_add_test(s, "test_tunecli_tune_op_records_serve_the_algorithms_layer",
              test_tunecli_tune_op_records_serve_the_algorithms_layer);
  CU_add_test(s, "test_C12_tunecli_on_every_x86_target_runs_as_host_or_is_refused",
              test_C12_tunecli_on_every_x86_target_runs_as_host_or_is_refused);
}
