/* Helpers shared by the dsl tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/dsl_test_paths.h"
#include "dsl_tests.h"
#include "ir/arena.h"

static tsl_arena *test_arena, *prev_arena;

static int suite_init(void) { return 0; }
static int suite_cleanup(void) { return 0; }

/* Each test gets a fresh arena so that a long suite (the fuzz test) stays small. */
static void test_setup(void) {
  test_arena = tsl_arena_new();
  prev_arena = tsl_arena_set_current(test_arena);
}
static void test_teardown(void) {
  tsl_arena_set_current(prev_arena);
  tsl_arena_free(test_arena);
  test_arena = NULL;
}

CU_pSuite dsl_suite(const char *name) {
  return CU_add_suite_with_setup_and_teardown(name, suite_init, suite_cleanup, test_setup, test_teardown);
}

tsl_dsl_module *dsl_parse_ok(const char *text) {
  tsl_dsl_module *m = NULL;
  tsl_status st = tsl_dsl_parse(text, "t.dsl", &m);
  if (st != TSL_OK) {
    fprintf(stderr, "\nunexpected parse error:\n%s\n", tsl_last_error());
    CU_FAIL("text does not parse");
    return NULL;
  }
  return m;
}

tsl_te_program *dsl_instantiate_text(const char *text, const char *name, int64_t dim, int nparams,
                                     const tsl_dsl_param_value *params) {
  tsl_dsl_module *m = dsl_parse_ok(text);
  if (!m) return NULL;
  const tsl_dsl_op *def = tsl_dsl_module_find(m, name);
  CU_ASSERT_PTR_NOT_NULL(def);
  tsl_te_program *p = NULL;
  if (def) {
    int n = tsl_dsl_op_ninputs(def);
    int64_t dims[8][8];
    const int64_t *shapes[8];
    int ndims[8];
    for (int i = 0; i < n && i < 8; i++) {
      ndims[i] = tsl_dsl_op_input(def, i)->ndim;
      for (int d = 0; d < 8; d++) dims[i][d] = dim;
      shapes[i] = dims[i];
    }
    if (tsl_dsl_instantiate(def, n, shapes, ndims, nparams, params, &p) != TSL_OK) {
      fprintf(stderr, "\nunexpected instantiate error:\n%s\n", tsl_last_error());
      CU_FAIL("op does not instantiate");
    }
  }
  tsl_dsl_module_free(m);
  return p;
}

char *dsl_print_to_string(const tsl_te_program *p) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  tsl_te_print(f, p);
  fclose(f);
  return buf;
}

char *dsl_read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = '\0';
  fclose(f);
  return s;
}

char **dsl_doc_examples(int *n) {
  *n = 0;
  char *doc = dsl_read_file(TSL_DSL_DOC_PATH);
  if (!doc) return NULL;
  int cap = 32;
  char **out = calloc((size_t)cap, sizeof(char *));
  const char *open = "```dsl\n";
  for (char *p = strstr(doc, open); p && *n < cap; p = strstr(p, open)) {
    p += strlen(open);
    char *end = strstr(p, "```");
    if (!end) break;
    out[(*n)++] = strndup(p, (size_t)(end - p));
    p = end + 3;
  }
  free(doc);
  return out;
}

void dsl_free_strings(char **s, int n) {
  for (int i = 0; i < n; i++) free(s[i]);
  free(s);
}

uint64_t dsl_rand(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
