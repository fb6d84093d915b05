/* Internal to ops/: the operator families that registry.c collects. Each family file
 * holds the DSL text of its operators and an example shape set for each. */
#ifndef TESSEL_OPS_FAMILIES_H
#define TESSEL_OPS_FAMILIES_H

#include "ops/op_call.h"
#include "ops/registry.h"

typedef struct tsl_op_source {
  const char *name;
  const char *description;
  const char *text; /* defines exactly the op `name` */
  tsl_op_example example;
} tsl_op_source;

/* Each returns its family's operators (static storage) and their count in *n. */
const tsl_op_source *tsl_ops_matmul_family(int *n);
const tsl_op_source *tsl_ops_conv2d_family(int *n);
const tsl_op_source *tsl_ops_elemwise_family(int *n);
const tsl_op_source *tsl_ops_winograd_family(int *n);
const tsl_op_source *tsl_ops_conv2d_nchwc_family(int *n);
const tsl_op_source *tsl_ops_layout_family(int *n);
const tsl_op_source *tsl_ops_depthwise_family(int *n);
const tsl_op_source *tsl_ops_expand_depthwise_family(int *n);
const tsl_op_source *tsl_ops_im2col_family(int *n);
const tsl_op_source *tsl_ops_pool_family(int *n);
const tsl_op_source *tsl_ops_nn_family(int *n);
const tsl_op_source *tsl_ops_binary_family(int *n);


/* Each returns its family's generated operators (ops/op_call.h; static storage). */
const tsl_op_generator *tsl_ops_nn_generators(int *n);
const tsl_op_generator *tsl_ops_conv2d_generators(int *n);
const tsl_op_generator *tsl_ops_matmul_generators(int *n);

#endif
