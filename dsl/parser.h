/* tessel DSL text front-end: parse operator definitions, instantiate them as TE programs.
 *
 * The grammar and its meaning are defined in docs/dsl.md (EBNF, scopes, extent inference,
 * the literal promotion rule, errors). A module holds the op definitions of one text; an
 * op definition is symbolic in its sizes (N, C, H, ...) and scalar parameters, and
 * tsl_dsl_instantiate() turns it into a concrete tsl_te_program (dsl/te.h) for given input
 * shapes and parameter values.
 *
 * Errors carry the position of the offending token, in the form
 *     file:LINE:COL: error: WHAT (expected X, found Y)
 *       <the source line>
 *       <a caret under the column>
 * LINE and COL count from 1; COL counts bytes.
 */
#ifndef TESSEL_DSL_PARSER_H
#define TESSEL_DSL_PARSER_H

#include <stdbool.h>
#include <stdint.h>

#include "dsl/te.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_dsl_module tsl_dsl_module;
typedef struct tsl_dsl_op tsl_dsl_op;

/* tsl_dsl_param_kind, tsl_dsl_param_value and their constructors are in dsl/te.h (an
 * instantiated program keeps its parameter values). */

/* A tensor parameter (an input) of an op definition. */
typedef struct tsl_dsl_input_info {
  const char *name;
  tsl_type dtype;
  int ndim;
  const char *type_text; /* the declared type as written, e.g. "f32[N, C, H, W]" */
} tsl_dsl_input_info;

/* A scalar parameter of an op definition. */
typedef struct tsl_dsl_param_info {
  const char *name;
  tsl_dsl_param_kind kind;
  bool has_default;
  tsl_dsl_param_value default_value; /* valid when has_default; .name == name */
} tsl_dsl_param_info;

/* Parses `text` (NUL-terminated) into a module. `filename` (may be NULL: "<dsl>") is only
 * used in messages. The text is parsed and checked completely (syntax, names, types,
 * reduction placement, extent inference): a module that parses has no error left that
 * does not depend on shapes or parameter values.
 * On success *out owns a copy of the text; free it with tsl_dsl_module_free().
 * Errors: TSL_ERR_PARSE for any malformed text (message with line:column, see above),
 * TSL_ERR_INVALID for NULL arguments. *out is NULL on failure. */
tsl_status tsl_dsl_parse(const char *text, const char *filename, tsl_dsl_module **out);

/* Frees a module and its op definitions (NULL is fine). Programs instantiated from it
 * live in the IR arena and stay valid. */
void tsl_dsl_module_free(tsl_dsl_module *m);

/* Number of op definitions, in text order, and the i-th one (NULL if out of range). */
int tsl_dsl_module_count(const tsl_dsl_module *m);
const tsl_dsl_op *tsl_dsl_module_op(const tsl_dsl_module *m, int i);
/* The op definition called `name`, or NULL. */
const tsl_dsl_op *tsl_dsl_module_find(const tsl_dsl_module *m, const char *name);

/* Accessors; pointers stay valid while the module lives. */
const char *tsl_dsl_op_name(const tsl_dsl_op *def);
/* The op's source text, from its 'op' keyword to the end of its last token (its schedule
 * block included). */
const char *tsl_dsl_op_text(const tsl_dsl_op *def);
int tsl_dsl_op_ninputs(const tsl_dsl_op *def);
const tsl_dsl_input_info *tsl_dsl_op_input(const tsl_dsl_op *def, int i); /* NULL if out of range */
int tsl_dsl_op_nparams(const tsl_dsl_op *def);
const tsl_dsl_param_info *tsl_dsl_op_param(const tsl_dsl_op *def, int i); /* NULL if out of range */

/* Instantiates `def` for concrete input shapes and parameter values.
 *  ninputs, shapes[i][0..ndims[i]), ndims[i]: one shape per tensor parameter, in order
 *    (extents >= 1, rank as declared);
 *  params[0..nparams): values by name (any order); parameters not given take their
 *    default, a parameter without default must be given.
 * Binds the sizes from the shapes (shape unification), checks the asserts, evaluates every
 * extent and builds placeholders and compute stages in the current IR arena: inputs are
 * the tensor parameters in order, outputs the `@output` stages (or the last stage).
 * Does not run tsl_te_check() (tsl_op_instantiate() does).
 * Errors (TSL_ERR_INVALID, message with the line:column of the construct that fails where
 * there is one): wrong number of inputs or ranks, a non-positive shape extent, a size
 * bound to two different values ("size C is 3 (data, 1:20) but 4 (weight, 1:40)"), a
 * dimension expression that differs from the shape, an unknown/duplicate/missing/ill-kinded
 * parameter, a failed assert, an extent <= 0, bare index uses of one axis giving different
 * extents, a constant index out of range, a constant that does not fit its type, division
 * by zero or 64-bit overflow in a constant expression. *out is NULL on failure. */
tsl_status tsl_dsl_instantiate(const tsl_dsl_op *def, int ninputs, const int64_t *const *shapes,
                               const int *ndims, int nparams, const tsl_dsl_param_value *params,
                               tsl_te_program **out);

#ifdef __cplusplus
}
#endif
#endif
