/* Helpers of the ops test module (ops_util.h) and its registration function. */
#include "ops/ops_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codegen/build.h"
#include "codegen/jit.h"
#include "ref/ref_ops2.h"
#include "runtime/module.h"
#include "ops/algorithm.h"

static tsl_jit *jit;
static tsl_target target;

int ops_suite_init(void) {
  if (tsl_target_parse("host", &target) != TSL_OK) return 1;
  return tsl_jit_new(&target, &jit) != TSL_OK;
}

int ops_suite_clean(void) {
  tsl_jit_free(jit);
  jit = NULL;
  return 0;
}

const tsl_target *ops_target(void) { return &target; }

int64_t ops_lanes(void) { return tsl_target_f32_lanes(&target); }

/* ---- guarded buffers ---- */

enum { MAX_GUARDED = 256 };
static struct guarded {
  float *p;
  void *map;
  size_t map_bytes, data_bytes, slack;
} guarded[MAX_GUARDED];

static const unsigned char SENTINEL = 0xA5;

float *ops_alloc(int64_t n) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t bytes = (size_t)(n > 0 ? n : 1) * sizeof(float);
  size_t rounded = (bytes + 63) & ~(size_t)63;
  size_t data_pages = (rounded + page - 1) / page;
  size_t map_bytes = (data_pages + 1) * page;
  unsigned char *m = mmap(NULL, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    perror("ops_alloc: mmap");
    abort();
  }
  if (mprotect(m + data_pages * page, page, PROT_NONE) != 0) {
    perror("ops_alloc: mprotect");
    abort();
  }
  float *p = (float *)(m + data_pages * page - rounded);
  memset(p, 0, bytes);
  memset((unsigned char *)p + bytes, SENTINEL, rounded - bytes);
  for (int i = 0; i < MAX_GUARDED; i++)
    if (!guarded[i].p) {
      guarded[i] = (struct guarded){p, m, map_bytes, bytes, rounded - bytes};
      return p;
    }
  fprintf(stderr, "ops_alloc: more than %d live buffers\n", MAX_GUARDED);
  abort();
}

bool ops_check_guard(const float *p) {
  for (int i = 0; i < MAX_GUARDED; i++)
    if (guarded[i].p == p) {
      const unsigned char *s = (const unsigned char *)p + guarded[i].data_bytes;
      for (size_t k = 0; k < guarded[i].slack; k++)
        if (s[k] != SENTINEL) return false;
      return true;
    }
  return false;
}

void ops_free(float *p) {
  if (!p) return;
  for (int i = 0; i < MAX_GUARDED; i++)
    if (guarded[i].p == p) {
      munmap(guarded[i].map, guarded[i].map_bytes);
      guarded[i].p = NULL;
      return;
    }
}

/* ---- build and run ---- */

bool ops_build_run(const tsl_schedule *s, const char *name, float *const *bufs) {
  tsl_module *m = NULL;
  const tsl_kernel *k = NULL;
  tsl_status st = tsl_module_new(&m);
  if (st == TSL_OK) st = tsl_build(s, name, jit, m, NULL, NULL);
  if (st == TSL_OK) st = tsl_module_get_kernel(m, name, &k);
  if (st == TSL_OK) {
    int n = s->program->ninputs + s->program->noutputs;
    void *ptrs[16], *args[16];
    for (int i = 0; i < n && i < 16; i++) {
      ptrs[i] = bufs[i];
      args[i] = &ptrs[i];
    }
    st = tsl_kernel_call(k, args, n);
  }
  if (st != TSL_OK) {
    printf("\n  %s: %s\n", name, tsl_last_error());
    char *text = tsl_schedule_to_string(s);
    if (text) printf("  schedule:\n%s", text);
    free(text);
  }
  tsl_module_free(m);
  return st == TSL_OK;
}

/* ---- templates and configs ---- */

const tsl_template *ops_template(const char *op, const char *suffix) {
  tsl_tuner_register_templates(); /* the library's registration of every template */
  enum { MAX_PER_OP = 16 };
  const tsl_template *t[MAX_PER_OP];
  int n = tsl_template_list(op, t, MAX_PER_OP);
  for (int i = 0; i < n && i < MAX_PER_OP; i++) {
    size_t ln = strlen(t[i]->name), ls = suffix ? strlen(suffix) : 0;
    if (!suffix || (ln >= ls && strcmp(t[i]->name + ln - ls, suffix) == 0)) return t[i];
  }
  return NULL;
}

static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int ops_random_configs(const tsl_template *tpl, const tsl_te_program *p, uint64_t seed, int n, int64_t max_tile,
                       tsl_config *out) {
  tsl_config_space space;
  if (!tpl || tpl->space(p, &target, &space) != TSL_OK) return 0;
  int made = 0;
  for (int attempt = 0; attempt < 50 * n && made < n; attempt++) {
    tsl_config c;
    c.nknobs = space.nknobs;
    int64_t tile = 1;
    for (int i = 0; i < space.nknobs; i++) {
      const tsl_knob *k = &space.knobs[i];
      c.values[i] = k->values[next_random(&seed) % (uint64_t)k->nvalues];
      size_t ln = strlen(k->name);
      if ((ln > 6 && strcmp(k->name + ln - 6, "_block") == 0) || (ln > 7 && strcmp(k->name + ln - 7, "_blocks") == 0))
        tile *= c.values[i];
      if (strcmp(k->name, "tile") == 0) /* oc * 10000 + oh * 100 + ow */
        tile *= (c.values[i] % 100) * (c.values[i] / 100 % 100) * (c.values[i] / 10000);
    }
    if (tile <= max_tile) out[made++] = c;
  }
  return made;
}

bool ops_config_with(const tsl_template *tpl, const tsl_te_program *p, const char *knobs, tsl_config *out) {
  tsl_config_space space;
  if (!tpl || tpl->space(p, &target, &space) != TSL_OK || tpl->default_config(p, &target, &space, out) != TSL_OK)
    return false;
  int t = tsl_space_knob_index(&space, "tile");
  int64_t part[3] = {0, 0, 0}; /* ow, oh, oc of the tile knob */
  if (t >= 0) {
    part[0] = out->values[t] % 100;
    part[1] = out->values[t] / 100 % 100;
    part[2] = out->values[t] / 10000;
  }
  char buf[512];
  snprintf(buf, sizeof buf, "%s", knobs ? knobs : "");
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(tok, '=');
    if (!eq) return false;
    *eq = '\0';
    int64_t v = strtoll(eq + 1, NULL, 10);
    static const char *const parts[3] = {"ow_block", "oh_block", "oc_blocks"};
    int pi = -1;
    for (int i = 0; i < 3; i++)
      if (strcmp(tok, parts[i]) == 0) pi = i;
    int k = tsl_space_knob_index(&space, tok);
    if (pi >= 0 && t >= 0) part[pi] = v;
    else if (k >= 0) out->values[k] = v;
    else return false;
  }
  if (t >= 0) out->values[t] = part[2] * 10000 + part[1] * 100 + part[0];
  return true;
}

tsl_schedule *ops_schedule_config(const tsl_template *tpl, const tsl_te_program *p, const tsl_config *c) {
  tsl_config_space space;
  tsl_config def;
  tsl_schedule *s = NULL;
  tsl_status st = tpl->space(p, &target, &space);
  if (st == TSL_OK && !c) {
    st = tpl->default_config(p, &target, &space, &def);
    c = &def;
  }
  if (st == TSL_OK) st = tpl->apply(p, &target, &space, c, &s);
  if (st != TSL_OK) {
    char buf[512];
    printf("\n  template %s on %s: %s (config %s)\n", tpl->name, p->name, tsl_last_error(),
           c ? tsl_config_str(&space, c, buf, sizeof buf) : "-");
    return NULL;
  }
  return s;
}

double ops_rel_error(const float *got, const double *want, int64_t n) {
  double scale = 1.0, worst = 0.0;
  for (int64_t i = 0; i < n; i++)
    if (isfinite(want[i])) scale = fmax(scale, fabs(want[i]));
  for (int64_t i = 0; i < n; i++) {
    double g = got[i], w = want[i];
    if (isnan(w) || isnan(g)) {
      if (isnan(w) != isnan(g)) return INFINITY;
      continue;
    }
    if (isinf(w) || isinf(g)) {
      if (g != w) return INFINITY;
      continue;
    }
    double e = fabs(g - w) / scale;
    if (e > worst) worst = e;
  }
  return worst;
}

void ops_fill(float *x, int64_t n, uint64_t seed, float lo, float hi) { ref2_fill(x, n, seed, lo, hi); }

/* ---- registration ---- */

void tsl_tests_ops(void) {
  CU_pSuite conv = CU_add_suite("ops_conv", ops_suite_init, ops_suite_clean);
  ops_tests_conv(conv);
  CU_pSuite cases = CU_add_suite("ops_conv_cases", ops_suite_init, ops_suite_clean);
  ops_tests_conv_cases(cases);
  CU_pSuite classes = CU_add_suite("ops_conv_classes", ops_suite_init, ops_suite_clean);
  ops_tests_conv_classes(classes);
  CU_pSuite pool = CU_add_suite("ops_pool", ops_suite_init, ops_suite_clean);
  ops_tests_pool(pool);
  CU_pSuite nn = CU_add_suite("ops_nn", ops_suite_init, ops_suite_clean);
  ops_tests_nn(nn);
  CU_pSuite sel = CU_add_suite("ops_select", ops_suite_init, ops_suite_clean);
  ops_tests_select(sel);
  CU_pSuite layer = CU_add_suite("ops_conv2d_layer", ops_suite_init, ops_suite_clean);
  ops_tests_conv2d_layer(layer);
  CU_pSuite spaces = CU_add_suite("ops_spaces", ops_suite_init, ops_suite_clean);
  ops_tests_spaces(spaces);
  CU_pSuite first = CU_add_suite("ops_first_layer", ops_suite_init, ops_suite_clean);
  ops_tests_first_layer(first);
  CU_pSuite gen = CU_add_suite("ops_generators", ops_suite_init, ops_suite_clean);
  ops_tests_generators(gen);
  ops_tests_generators_nn(gen);
  CU_pSuite epi = CU_add_suite("ops_epilogue", ops_suite_init, ops_suite_clean);
  ops_tests_epilogue(epi);
  CU_pSuite xdw = CU_add_suite("ops_expand_depthwise", ops_suite_init, ops_suite_clean);
  ops_tests_expand_dw(xdw);
}
