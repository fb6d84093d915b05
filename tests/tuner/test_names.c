/* The names of templates and algorithms: what a records file calls them (config.template,
 * config.algorithm). Every built-in template is registered by the library itself
 * (tsl_tuner_register_templates); every registered name is "OP.VARIANT" with OP the
 * template's operator (an algorithm's: its family) and names no other template. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <string.h>

#include "ops/registry.h"
#include "schedule/template.h"
#include "ops/conv2d/conv2d_select.h"
#include "ops/algorithm.h"
#include "tuner_tests.h"

enum { MAX_NAMES = 256 };

/* True when name is prefix "." VARIANT, VARIANT one or more of [a-z0-9_]. */
static bool is_prefix_dot_variant(const char *name, const char *prefix) {
  size_t lp = strlen(prefix);
  if (strncmp(name, prefix, lp) != 0 || name[lp] != '.' || name[lp + 1] == '\0') return false;
  for (const char *c = name + lp + 1; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) return false;
  return true;
}

/* Every template the library defines is in the registry under its own name: none was
 * refused as a duplicate or for a full registry, the pooling, injective and bitserial
 * ones included. */
static void test_every_builtin_template_is_registered_by_the_library(void) {
  tsl_tuner_register_templates();
  tsl_tuner_register_templates(); /* idempotent */
  const tsl_template *all[MAX_NAMES];
  int n = tsl_tuner_builtin_templates(all, MAX_NAMES);
  CU_ASSERT_FATAL(n > 0 && n <= MAX_NAMES);
  for (int i = 0; i < n; i++) {
    if (tsl_template_find(all[i]->name) != all[i]) {
      printf("\n  built-in template %s is not registered\n", all[i]->name);
      CU_FAIL("a built-in template is not registered");
    }
  }
  static const char *const some[] = {"matmul.blis",
                                     "conv2d_nchwc_bias.direct",
                                     "conv2d_nchwc_grouped_add.tile",
                                     "conv2d_winograd_f4_add.blocked",
                                     "bitserial_conv2d_unipolar64_requant_add.tile",
                                     "max_pool2d_nchwc.tile",
                                     "global_avg_pool2d_nchwc.tile",
                                     "nchw_to_nchwc.elementwise",
                                     "dense_packed.gemv",
                                     "softmax.rows"};
  for (size_t i = 0; i < sizeof some / sizeof some[0]; i++) {
    if (!tsl_template_find(some[i])) printf("\n  no template %s\n", some[i]);
    CU_ASSERT_PTR_NOT_NULL(tsl_template_find(some[i]));
  }
}

/* Each names[i] is prefixes[i] "." VARIANT with prefixes[i] a registry operator, and no
 * two names are equal; `what` names the kind in the messages. */
static void check_names(const char *what, int n, const char *const *names, const char *const *prefixes) {
  for (int i = 0; i < n; i++) {
    const tsl_op_info *info = NULL;
    if (!is_prefix_dot_variant(names[i], prefixes[i]) || tsl_op_lookup(prefixes[i], &info) != TSL_OK) {
      printf("\n  %s %s of %s: not OP.VARIANT of a registry operator\n", what, names[i], prefixes[i]);
      CU_FAIL("name is not OP.VARIANT");
    }
    for (int j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0) {
        printf("\n  two %ss are called %s\n", what, names[i]);
        CU_FAIL("duplicate name");
      }
  }
}

static void test_registered_template_names_are_op_dot_variant_and_unique(void) {
  tsl_tuner_register_templates();
  const tsl_template *t[MAX_NAMES];
  const char *names[MAX_NAMES], *ops[MAX_NAMES];
  int n = tsl_template_list(NULL, t, MAX_NAMES);
  CU_ASSERT_FATAL(n > 0 && n <= MAX_NAMES);
  for (int i = 0; i < n; i++) {
    names[i] = t[i]->name;
    ops[i] = t[i]->op;
  }
  check_names("template", n, names, ops);
}

/* Algorithms: FAMILY.ALGO, unique, naming a registered template; each conv family has
 * every tsl_conv2d_algo under the algorithm's own name. */
static void test_algorithm_names_are_family_dot_algo_and_unique(void) {
  tsl_tuner_register_templates();
  const tsl_algorithm *a[MAX_NAMES];
  const char *names[MAX_NAMES], *families_of[MAX_NAMES];
  int n = tsl_algorithm_list(NULL, a, MAX_NAMES);
  CU_ASSERT_FATAL(n > 0 && n <= MAX_NAMES);
  for (int i = 0; i < n; i++) {
    names[i] = a[i]->name;
    families_of[i] = a[i]->family;
    if (!tsl_template_find(a[i]->template_name)) {
      printf("\n  algorithm %s: template %s is not registered\n", a[i]->name, a[i]->template_name);
      CU_FAIL("algorithm of an unregistered template");
    }
  }
  check_names("algorithm", n, names, families_of);
  static const char *const families[] = {"conv2d_nchwc_bias", "conv2d_nchwc_bias_add", "conv2d_nchwc_grouped",
                                         "conv2d_nchwc_grouped_add"};
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
    /* one per tsl_conv2d_algo, and the Winograd algorithms of the larger kernels */
    static const char *const larger[] = {"winograd_f2_r4", "winograd_f4_r4", "winograd_f2_r5", "winograd_f4_r5"};
    enum { NLARGER = sizeof larger / sizeof larger[0] };
    CU_ASSERT_EQUAL(tsl_algorithm_list(families[f], NULL, 0), TSL_CONV2D_ALGO_COUNT + NLARGER);
    for (int k = 0; k < TSL_CONV2D_ALGO_COUNT + NLARGER; k++) {
      char want[96];
      snprintf(want, sizeof want, "%s.%s", families[f],
               k < TSL_CONV2D_ALGO_COUNT ? tsl_conv2d_algo_name((tsl_conv2d_algo)k) : larger[k - TSL_CONV2D_ALGO_COUNT]);
      bool found = false;
      for (int i = 0; i < n && !found; i++) found = strcmp(a[i]->name, want) == 0;
      if (!found) printf("\n  no algorithm %s\n", want);
      CU_ASSERT_TRUE(found);
    }
  }
}

void tsl_tests_tuner_names(void) {
  CU_pSuite s = CU_add_suite("tuner_names", NULL, NULL);
  CU_add_test(s, "test_every_builtin_template_is_registered_by_the_library",
              test_every_builtin_template_is_registered_by_the_library);
  CU_add_test(s, "test_registered_template_names_are_op_dot_variant_and_unique",
              test_registered_template_names_are_op_dot_variant_and_unique);
  CU_add_test(s, "test_algorithm_names_are_family_dot_algo_and_unique",
              test_algorithm_names_are_family_dot_algo_and_unique);
}
