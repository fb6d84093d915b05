/* The operator registry (ops/registry.h): lookups, aliases, metadata consistent with
 * the DSL text, every example shape set instantiating and passing tsl_te_check, and
 * the elementwise operators' values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl_tests.h"
#include "te_eval.h"

static void test_lookup_names_alias_and_unknown(void) {
  const tsl_op_info *a, *b;
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("conv2d_nchw", &a), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("conv2d", &b), TSL_OK);
  CU_ASSERT_PTR_EQUAL(a, b);
  CU_ASSERT_STRING_EQUAL(b->name, "conv2d_nchw");
  const char *names[] = {"matmul", "dense", "conv2d_nchw", "relu", "add"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    CU_ASSERT_EQUAL(tsl_op_lookup(names[i], &a), TSL_OK);
    if (a) CU_ASSERT_STRING_EQUAL(a->name, names[i]);
  }
  CU_ASSERT_EQUAL(tsl_op_lookup("conv3d", &a), TSL_ERR_NOT_FOUND);
  CU_ASSERT_PTR_NULL(a);
  /* the message lists the known operators, starting with the first families' */
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "unknown operator 'conv3d' (known: matmul, dense, conv2d_nchw, relu, add"));
  CU_ASSERT_EQUAL(tsl_op_lookup(NULL, &a), TSL_ERR_INVALID);
}

static void test_list_metadata_matches_the_dsl_text(void) {
  int n;
  const tsl_op_info *const *ops = tsl_op_list(&n);
  CU_ASSERT_FATAL(n >= 5); /* the first families: matmul, dense, conv2d_nchw, relu, add; more follow */
  for (int i = 0; i < n; i++) {
    const tsl_op_info *op = ops[i];
    CU_ASSERT(strlen(op->description) > 10);
    CU_ASSERT_PTR_NULL(strchr(op->description, '\n'));
    tsl_dsl_module *m = dsl_parse_ok(op->text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT_EQUAL(tsl_dsl_module_count(m), 1);
    const tsl_dsl_op *def = tsl_dsl_module_find(m, op->name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(def);
    CU_ASSERT_EQUAL(op->ninputs, tsl_dsl_op_ninputs(def));
    for (int k = 0; k < op->ninputs; k++) CU_ASSERT_STRING_EQUAL(op->input_names[k], tsl_dsl_op_input(def, k)->name);
    CU_ASSERT_EQUAL(op->nparams, tsl_dsl_op_nparams(def));
    for (int k = 0; k < op->nparams; k++) CU_ASSERT_STRING_EQUAL(op->param_names[k], tsl_dsl_op_param(def, k)->name);
    CU_ASSERT_EQUAL(op->example.ninputs, op->ninputs);
    tsl_dsl_module_free(m);
  }
  const tsl_op_info *conv;
  CU_ASSERT_EQUAL_FATAL(tsl_op_lookup("conv2d", &conv), TSL_OK);
  const char *want[] = {"stride_h", "stride_w", "pad_top", "pad_left", "pad_bottom", "pad_right", "dilation_h", "dilation_w"};
  CU_ASSERT_EQUAL_FATAL(conv->nparams, 8);
  for (int k = 0; k < 8; k++) CU_ASSERT_STRING_EQUAL(conv->param_names[k], want[k]);
  CU_ASSERT_STRING_EQUAL(conv->input_names[0], "data");
  CU_ASSERT_STRING_EQUAL(conv->input_names[1], "weight");
}

static void test_every_example_instantiates_checks_and_round_trips(void) {
  int n;
  const tsl_op_info *const *ops = tsl_op_list(&n);
  for (int i = 0; i < n; i++) {
    const tsl_op_example *ex = &ops[i]->example;
    tsl_te_program *p = NULL;
    tsl_status st = tsl_op_instantiate(ops[i]->name, ex->ninputs, ex->shapes, ex->ndims, ex->nparams, ex->params, &p);
    if (st != TSL_OK) fprintf(stderr, "\n%s: %s\n", ops[i]->name, tsl_last_error());
    CU_ASSERT_EQUAL_FATAL(st, TSL_OK);
    CU_ASSERT_STRING_EQUAL(p->name, ops[i]->name);
    char *text = dsl_print_to_string(p);
    tsl_dsl_module *m = dsl_parse_ok(text);
    if (m) {
      tsl_te_program *q = NULL;
      CU_ASSERT_EQUAL(tsl_dsl_instantiate(tsl_dsl_module_op(m, 0), ex->ninputs, ex->shapes, ex->ndims, 0, NULL, &q), TSL_OK);
      char *again = q ? dsl_print_to_string(q) : NULL;
      if (again) CU_ASSERT_STRING_EQUAL(text, again);
      free(again);
      tsl_dsl_module_free(m);
    }
    free(text);
  }
}

static void test_relu_and_add_values(void) {
  const int64_t shape[] = {1, 2, 2, 2};
  const int64_t *shapes[] = {shape, shape};
  const int ndims[] = {4, 4};
  double x[8] = {-1.5, 0.0, 2.0, NAN, -0.0, 3.25, -INFINITY, INFINITY};
  double y[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  double out[8], *outs[] = {out};
  tsl_te_program *p;
  CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate("relu", 1, shapes, ndims, 0, NULL, &p), TSL_OK);
  CU_ASSERT_TRUE(te_eval_program(p, (const double *[]){x}, outs));
  CU_ASSERT_DOUBLE_EQUAL(out[0], 0.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(out[2], 2.0, 0.0);
  CU_ASSERT_TRUE(isnan(out[3])); /* NaN propagates through max */
  CU_ASSERT_DOUBLE_EQUAL(out[6], 0.0, 0.0);
  CU_ASSERT_TRUE(isinf(out[7]));
  CU_ASSERT_EQUAL_FATAL(tsl_op_instantiate("add", 2, shapes, ndims, 0, NULL, &p), TSL_OK);
  CU_ASSERT_TRUE(te_eval_program(p, (const double *[]){y, y}, outs));
  for (int i = 0; i < 8; i++) CU_ASSERT_DOUBLE_EQUAL(out[i], 2.0 * y[i], 0.0);
  CU_ASSERT_STRING_EQUAL(p->outputs[0]->op->tag, "elemwise");
  /* add needs equal shapes */
  const int64_t other[] = {1, 2, 2, 3};
  CU_ASSERT_EQUAL(tsl_op_instantiate("add", 2, (const int64_t *[]){shape, other}, ndims, 0, NULL, &p), TSL_ERR_INVALID);
  CU_ASSERT_PTR_NOT_NULL(strstr(tsl_last_error(), "size W is 3 here (b, dimension 3) but 2"));
}

void tsl_tests_dsl_registry(void) {
  CU_pSuite s = dsl_suite("dsl_registry");
  CU_add_test(s, "lookup_names_alias_and_unknown", test_lookup_names_alias_and_unknown);
  CU_add_test(s, "list_metadata_matches_the_dsl_text", test_list_metadata_matches_the_dsl_text);
  CU_add_test(s, "every_example_instantiates_checks_and_round_trips", test_every_example_instantiates_checks_and_round_trips);
  CU_add_test(s, "relu_and_add_values", test_relu_and_add_values);
}
