/* tunecli report (tools/tunecli/cmd_report.c) as a user runs it, on a records file
 * written here with known costs: the page's charts are counted (one curve per layer
 * with a successful isolated trial, two more with --model), the best GFLOP/s of a
 * template is checked against the FLOPs computed here (2*M*N*K of a matmul over the
 * fastest cost written), the choice is the in-model record where there is one, a bad
 * line is skipped with its FILE:LINE, and nothing on the page reaches the network.
 * Then headless Chromium renders the page (skipped with a message where `chromium` is
 * absent: scripts/setup.sh installs it) and the screenshot, decoded with stb_image, must
 * not be blank and must show the charts' series color. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dsl/dsl_tests.h" /* dsl_read_file */
#include "tuner/records.h"
#include "tuner_tests.h"

#ifdef TSL_HAVE_STB
#include "stb_image.h"
#endif

/* An isolated (context NULL) or in-model record of `workload` on target "host". */
static void report_record(tsl_record *r, const char *workload, const char *tpl, int64_t tile, double cost,
                          int error_no, const char *context) {
  memset(r, 0, sizeof *r);
  snprintf(r->target, sizeof r->target, "host");
  snprintf(r->task, sizeof r->task, "matmul");
  snprintf(r->workload, sizeof r->workload, "%s", workload);
  snprintf(r->algorithm, sizeof r->algorithm, "matmul.%s", tpl);
  snprintf(r->template_name, sizeof r->template_name, "matmul.%s", tpl);
  r->space_hash = 7;
  r->config_index = tile;
  r->nknobs = 1;
  snprintf(r->knob_names[0], TSL_KNOB_NAME_LEN, "tile");
  r->knob_kinds[0] = TSL_KNOB_SPLIT;
  r->config.nknobs = 1;
  r->config.values[0] = tile;
  r->error_no = error_no;
  if (error_no == 0) {
    r->ncosts = 2;
    r->costs[0] = cost * 1.1;
    r->costs[1] = cost; /* the fastest: the record's cost */
  }
  r->timestamp = 1.7e9;
  r->threads = 2;
  if (context) snprintf(r->context, sizeof r->context, "%s", context);
}

static char *slurp_cmd(const char *cmd, int *status) {
  FILE *f = popen(cmd, "r");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  size_t k;
  while (buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += k;
    if (n + 1 == cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        buf = NULL;
      }
      buf = nb;
    }
  }
  if (buf) buf[n] = '\0';
  *status = pclose(f);
  return buf;
}

static int count_of(const char *text, const char *what) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what)) n++;
  return n;
}

static const char *const WA = "matmul(A:f32[64,32],B:f32[32,48];)"; /* 2*64*48*32 FLOPs */
static const char *const WB = "matmul(A:f32[16,16],B:f32[16,16];)";
static const char *const WC = "matmul(A:f32[8,8],B:f32[8,8];)"; /* errors only: no curve */

/* The records file: layer A with two templates (the faster "blis" improving at trial
 * 3, an error at trial 4), a bad line, layer B with an in-model record, layer C with
 * only an error. */
static void write_records(const char *path) {
  tsl_record r;
  report_record(&r, WA, "blis", 1, 100e-6, 0, NULL);
  CU_ASSERT_EQUAL(tsl_record_append(path, &r), TSL_OK);
  report_record(&r, WA, "naive", 2, 400e-6, 0, NULL);
  CU_ASSERT_EQUAL(tsl_record_append(path, &r), TSL_OK);
  report_record(&r, WA, "blis", 3, 50e-6, 0, NULL);
  CU_ASSERT_EQUAL(tsl_record_append(path, &r), TSL_OK);
  report_record(&r, WA, "blis", 4, 0, TSL_MEASURE_COMPILE, NULL);
  CU_ASSERT_EQUAL(tsl_record_append(path, &r), TSL_OK);
  FILE *f = fopen(path, "a");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  fputs("{\"input\": [\"host\", \"matmul\"\n", f); /* line 5: cut short */
  fclose(f);
  report_record(&r, WB, "blis", 5, 20e-6, 0, NULL);
  CU_ASSERT_EQUAL(tsl_record_append(path, &r), TSL_OK);
  report_record(&r, WB, "blis", 6, 10e-6, 0, NULL);
  CU_ASSERT_EQUAL(tsl_record_append(path, &r), TSL_OK);
  report_record(&r, WB, "blis", 5, 30e-6, 0, "model m"); /* slower, but in the model: the choice */
  CU_ASSERT_EQUAL(tsl_record_append(path, &r), TSL_OK);
  report_record(&r, WC, "blis", 1, 0, TSL_MEASURE_RUNTIME, NULL);
  CU_ASSERT_EQUAL(tsl_record_append(path, &r), TSL_OK);
}

/* Renders `html` with headless Chromium into a PNG and checks the picture: not blank
 * (over 2% of the pixels not white) and the series blue (#1f77b4) of the charts drawn. */
static void check_rendering(const char *html, const char *png) {
  int st = 0;
  char *where = slurp_cmd("command -v chromium 2>/dev/null", &st);
  bool have = where && where[0];
  free(where);
  if (!have) {
    printf("\n  skipped: chromium is not installed (scripts/setup.sh installs Debian's chromium)");
    return;
  }
#ifndef TSL_HAVE_STB
  printf("\n  skipped: no stb_image to decode the screenshot (libstb-dev)");
  return;
#else
  char cmd[1024], profile[96];
  snprintf(profile, sizeof profile, "/tmp/tsl_report_chrome_%ld", (long)getpid());
  unlink(png);
  /* Chromium runs at the normal policy (chrt -o 0): under a real-time parent (a suite run
   * with `chrt -f 50`) it would inherit SCHED_FIFO, and its busy threads, never
   * time-sliced, starved `timeout` itself for minutes on a 2-core machine. -k: SIGKILL
   * when SIGTERM is ignored. */
  snprintf(cmd, sizeof cmd,
           "timeout -k 10 50 chrt -o 0 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars "
           "--user-data-dir=%s --window-size=1000,1600 --screenshot=%s file://%s >/dev/null 2>&1; rm -rf %s",
           profile, png, html, profile);
  char *out = slurp_cmd(cmd, &st);
  free(out);
  int w = 0, h = 0, ch = 0;
  unsigned char *img = stbi_load(png, &w, &h, &ch, 3);
  CU_ASSERT_PTR_NOT_NULL_FATAL(img);
  CU_ASSERT_EQUAL(w, 1000);
  CU_ASSERT_EQUAL(h, 1600);
  long nonwhite = 0, blue = 0;
  for (long i = 0; i < (long)w * h; i++) {
    const unsigned char *p = img + 3 * i;
    nonwhite += p[0] < 240 || p[1] < 240 || p[2] < 240;
    blue += abs(p[0] - 0x1f) < 24 && abs(p[1] - 0x77) < 24 && abs(p[2] - 0xb4) < 24;
  }
  stbi_image_free(img);
  CU_ASSERT(nonwhite > (long)w * h / 50);
  CU_ASSERT(blue > 200);
  if (nonwhite <= (long)w * h / 50 || blue <= 200)
    printf("\n  %s: %ld non-white pixels, %ld series-blue ones of %dx%d", png, nonwhite, blue, w, h);
  unlink(png);
#endif
}

static void test_tunecli_report_page(void) {
  char rec[96], html[96], html_model[96], png[96], cmd[1024];
  long pid = (long)getpid();
  snprintf(rec, sizeof rec, "/tmp/tsl_report_%ld.jsonl", pid);
  snprintf(html, sizeof html, "/tmp/tsl_report_%ld.html", pid);
  snprintf(html_model, sizeof html_model, "/tmp/tsl_report_model_%ld.html", pid);
  snprintf(png, sizeof png, "/tmp/tsl_report_%ld.png", pid);
  unlink(rec);
  write_records(rec);

  int st = 0;
  snprintf(cmd, sizeof cmd, "%s report %s -o %s 2>&1", TSL_TUNECLI_PATH, rec, html);
  char *out = slurp_cmd(cmd, &st);
  CU_ASSERT_EQUAL(st, 0);
  char where[160];
  snprintf(where, sizeof where, "%s:5: skipped", rec);
  CU_ASSERT_PTR_NOT_NULL(out ? strstr(out, where) : NULL);
  free(out);
  char *page = dsl_read_file(html);
  CU_ASSERT_PTR_NOT_NULL_FATAL(page);
  CU_ASSERT_EQUAL(count_of(page, "<svg"), 2); /* layers A and B; C has no successful trial */
  CU_ASSERT_EQUAL(count_of(page, "</svg>"), 2);
  CU_ASSERT_EQUAL(count_of(page, "<section class=\"layer\""), 3);
  CU_ASSERT_EQUAL(count_of(page, "<a href=\"#layer-"), 3); /* the summary links every layer */
  /* self-contained: no script, no link, no URL */
  CU_ASSERT_PTR_NULL(strstr(page, "<script"));
  CU_ASSERT_PTR_NULL(strstr(page, "<link"));
  CU_ASSERT_PTR_NULL(strstr(page, "http"));
  /* layer A: blis's best is 50 us, 2*64*48*32 FLOPs over it */
  char row[160];
  double gflops = 2.0 * 64 * 48 * 32 / 50e-6 * 1e-9;
  snprintf(row, sizeof row, "<td>3</td><td>50.0</td><td>%.2f</td>", gflops);
  CU_ASSERT_PTR_NOT_NULL(strstr(page, row));
  CU_ASSERT_PTR_NOT_NULL(strstr(page, "; 4 trials (1 errors), 0 in-model records"));
  CU_ASSERT_PTR_NOT_NULL(strstr(page, "chosen: <b>blis</b> (template <code>matmul.blis</code>, config index 3)"));
  /* layer B: the in-model record is chosen over the faster isolated one */
  CU_ASSERT_PTR_NOT_NULL(strstr(page, "30.0 us, 0.27 GFLOP/s, measured in model m"));
  CU_ASSERT_PTR_NOT_NULL(strstr(page, "chosen: none"));
  free(page);

  /* --model: two more charts (end to end, per layer), from real runs of a zoo model */
  snprintf(cmd, sizeof cmd, "%s report %s --model squeezenet1_1 --runs 3 -o %s 2>&1", TSL_TUNECLI_PATH, rec,
           html_model);
  out = slurp_cmd(cmd, &st);
  CU_ASSERT_EQUAL(st, 0);
  if (st != 0 && out) printf("\n%s", out);
  free(out);
  page = dsl_read_file(html_model);
  CU_ASSERT_PTR_NOT_NULL_FATAL(page);
  CU_ASSERT_EQUAL(count_of(page, "<svg"), 4);
  CU_ASSERT_EQUAL(count_of(page, "data-chart=\"e2e\""), 1);
  CU_ASSERT_EQUAL(count_of(page, "data-chart=\"layers\""), 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(page, "class=\"e2e\">end to end: default "));
  free(page);

  check_rendering(html_model, png);

  /* usage errors: exit 2, no crash */
  snprintf(cmd, sizeof cmd, "%s report %s 2>&1", TSL_TUNECLI_PATH, rec);
  out = slurp_cmd(cmd, &st);
  CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 2);
  free(out);
  snprintf(cmd, sizeof cmd, "%s report /nonexistent/records.jsonl -o %s 2>&1", TSL_TUNECLI_PATH, html);
  out = slurp_cmd(cmd, &st);
  CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 1);
  free(out);
  unlink(rec);
  unlink(html);
  unlink(html_model);
}

void tsl_tests_tuner_report(void) {
  CU_pSuite s = CU_add_suite("tuner_report", NULL, NULL);
  CU_add_test(s, "test_tunecli_report_page", test_tunecli_report_page);
}
