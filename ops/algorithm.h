/* Algorithms of an operator family and the per-layer choice between them (MegEngine's
 * Fast-Run: the choice is made by measuring every algorithm that applies).
 *
 * A family workload is the layer as the graph states it (e.g. conv2d_nchw with NCHW
 * shapes, strides, paddings, dilations). An algorithm maps it to the operator that
 * implements it (direct NCHW, NCHW[x]c direct, im2col + GEMM, Winograd F(m), ...) and
 * the schedule template of that operator, or declines it (applies() false: a Winograd
 * algorithm for a stride-2 layer). The tuner measures each applicable algorithm's
 * candidates and records them under the FAMILY workload key with the template's name,
 * so tsl_records_best(family key) picks the fastest algorithm per layer.
 *
 * Layouts belong to the graph (DESIGN.md): an algorithm is measured in the layout the
 * graph gives it; one whose operator needs another layout states it in its description
 * and is only listed for family workloads in that layout.
 *
 * Every registered template (schedule/template.h) is also an algorithm of its own
 * operator's family with the identity mapping ("template NAME as is").
 */
#ifndef TESSEL_OPS_ALGORITHM_H
#define TESSEL_OPS_ALGORITHM_H

#include <stdbool.h>
#include <stdio.h>

#include "schedule/template.h"
#include "ops/workload.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_algorithm {
  const char *name;          /* e.g. "conv2d.winograd_f4" */
  const char *family;        /* the family operator whose workloads it takes: "conv2d_nchw" */
  const char *template_name; /* the template of the operator it instantiates */
  /* Whether it implements family workload w; on false *why (static text) says why. */
  bool (*applies)(const tsl_workload *w, const char **why);
  /* The workload of its own operator for family workload w. */
  tsl_status (*map)(const tsl_workload *w, tsl_workload *out);
} tsl_algorithm;

/* Registers every built-in template (tsl_tuner_builtin_templates: convolutions, Winograd,
 * bitserial, pooling, injective/dense/softmax, matmul) and the conv families' Fast-Run
 * algorithms (tsl_tuner_register_conv_algorithms), once per process (idempotent,
 * thread-safe); every tuner entry point calls it, so callers rarely need to. */
void tsl_tuner_register_templates(void);

/* The templates tsl_tuner_register_templates registers (static storage), in registration
 * order: writes up to max into out (out may be NULL) and returns how many there are. */
int tsl_tuner_builtin_templates(const tsl_template **out, int max);

/* Registers the Fast-Run algorithms of the NCHW[x]c convolution families
 * (ops/conv2d/algorithms_conv.h: conv2d_nchwc_bias, conv2d_nchwc_bias_add,
 * conv2d_nchwc_grouped and conv2d_nchwc_grouped_add, each as every tsl_conv2d_algo,
 * named FAMILY.ALGO); called by tsl_tuner_register_templates. */
void tsl_tuner_register_conv_algorithms(void);

/* Registers an algorithm (pointer kept: static storage). Errors: TSL_ERR_INVALID (NULL
 * fields, a name already registered, more than 64 algorithms). */
tsl_status tsl_algorithm_register(const tsl_algorithm *a);

/* Writes up to max registered algorithms of family (every family when NULL), in
 * registration order, into out (may be NULL); returns how many there are in all. */
int tsl_algorithm_list(const char *family, const tsl_algorithm **out, int max);

/* One applicable algorithm for a family workload. */
typedef struct tsl_algo_choice {
  char name[96];               /* the algorithm's name (the template's name for identity) */
  const tsl_template *tpl;     /* the template to search */
  tsl_workload op_workload;    /* the workload of the template's operator */
} tsl_algo_choice;

/* The algorithms that apply to family workload w: first the templates of w's own
 * operator (identity), then the registered algorithms of family w->op whose applies()
 * holds, in registration order (one that maps to a template and workload already listed
 * is left out: listed once). Writes up to max into out and returns how many apply
 * (0 when none: the operator cannot be tuned). Declined algorithms are reported on
 * `log` (may be NULL) as "algorithm NAME declines: WHY". */
int tsl_algorithms_for(const tsl_workload *w, tsl_algo_choice *out, int max, FILE *log);

#ifdef __cplusplus
}
#endif
#endif
