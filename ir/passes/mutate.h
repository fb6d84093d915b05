/* A rebuilding IR visitor for the lowering passes (Halide's IRMutator, in C).
 *
 * tsl_mutate_expr(m, e) calls m->expr(m, e) when set, else rebuilds e from its mutated
 * children; a callback handles the node kinds it cares about and hands every other node
 * to tsl_mutate_expr_children(), which recurses through tsl_mutate_expr() again. The
 * same holds for statements. Unchanged subtrees are returned as they are (shared), so a
 * pass that changes nothing returns its input. New nodes go to the current arena.
 * Not a pass itself: the helper the passes in this folder share.
 */
#ifndef TESSEL_IR_PASSES_MUTATE_H
#define TESSEL_IR_PASSES_MUTATE_H

#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_mutator tsl_mutator;
struct tsl_mutator {
  tsl_expr *(*expr)(tsl_mutator *m, tsl_expr *e); /* NULL: always rebuild children */
  tsl_stmt *(*stmt)(tsl_mutator *m, tsl_stmt *s); /* NULL: always rebuild children */
  void *ud;                                       /* the pass's state */
};

/* e / s through the callback (NULL in, NULL out). */
tsl_expr *tsl_mutate_expr(tsl_mutator *m, tsl_expr *e);
tsl_stmt *tsl_mutate_stmt(tsl_mutator *m, tsl_stmt *s);

/* e / s rebuilt with every child passed through tsl_mutate_expr / tsl_mutate_stmt, with
 * the node's own constructor (so a child that changes lanes must be handled by the
 * caller's callback for nodes whose constructor checks lanes). */
tsl_expr *tsl_mutate_expr_children(tsl_mutator *m, tsl_expr *e);
tsl_stmt *tsl_mutate_stmt_children(tsl_mutator *m, tsl_stmt *s);

/* s with every For, Let (statement and expression) bound inside it given a fresh
 * variable: what a pass uses when it duplicates a statement, so each binder still binds
 * once (ir/ir.h). */
tsl_stmt *tsl_stmt_fresh_binders(tsl_stmt *s);

/* A no-op statement (evaluate 0): what a pass leaves where a loop had no iterations. */
tsl_stmt *tsl_stmt_nop(void);
/* Is s that no-op? */
bool tsl_stmt_is_nop(const tsl_stmt *s);

#ifdef __cplusplus
}
#endif
#endif
