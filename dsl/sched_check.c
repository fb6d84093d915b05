/* The checks of a schedule block that need only its op (sched_block.h): knob names,
 * knob declarations against the op's stages and axes, and every use of every knob. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dsl/ast.h"
#include "dsl/sched_block.h"

const tsl_dsl_schedule *tsl_dsl_op_schedule(const tsl_dsl_op *def) { return def ? def->schedule : NULL; }

tsl_status tsl_dsl_error_at(const tsl_dsl_op *def, tsl_status st, int line, int col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  tsl_status r = dsl_vfail(def ? def->src : NULL, st, (dsl_pos){line, col}, fmt, ap);
  va_end(ap);
  return r;
}

static const dsl_stage *find_stage(const tsl_dsl_op *op, const char *name) {
  for (int i = 0; i < op->nstages; i++)
    if (strcmp(op->stages[i]->name, name) == 0) return op->stages[i];
  return NULL;
}

/* Whether `name` is an axis or a reduction variable of stage s. */
static bool stage_has_axis(const dsl_stage *s, const char *name) {
  for (int i = 0; i < s->naxes; i++)
    if (strcmp(s->axes[i]->name, name) == 0) return true;
  const dsl_node *b = s->body;
  for (int i = 0; b && b->kind == DN_REDUCE && i < b->nvars; i++)
    if (strcmp(b->vars[i]->name, name) == 0) return true;
  return false;
}

/* Whether name names something of the op: a parameter, a size, a stage or an axis. */
static bool op_name_taken(const tsl_dsl_op *op, const char *name) {
  for (int i = 0; i < op->nparams; i++)
    if (strcmp(op->params[i]->name, name) == 0) return true;
  for (int i = 0; i < op->nsizes; i++)
    if (strcmp(op->sizes[i].name, name) == 0) return true;
  for (int i = 0; i < op->nstages; i++)
    if (strcmp(op->stages[i]->name, name) == 0 || stage_has_axis(op->stages[i], name)) return true;
  return false;
}

static int knob_index(const tsl_dsl_schedule *b, const char *name) {
  for (int i = 0; name && i < b->nknobs; i++)
    if (strcmp(b->knobs[i].name, name) == 0) return i;
  return -1;
}

static tsl_status check_knob(const tsl_dsl_op *op, const tsl_dsl_schedule *b, int ki) {
  const tsl_dsl_knob *k = &b->knobs[ki];
  if (knob_index(b, k->name) != ki)
    return tsl_dsl_error_at(op, TSL_ERR_PARSE, k->line, k->col, "knob %s is declared twice (first at %d:%d)", k->name,
                            b->knobs[knob_index(b, k->name)].line, b->knobs[knob_index(b, k->name)].col);
  if (op_name_taken(op, k->name))
    return tsl_dsl_error_at(op, TSL_ERR_PARSE, k->line, k->col,
                            "knob %s has the name of a parameter, size, stage or axis of op %s", k->name, op->name);
  for (int i = 0; i < k->nvalues; i++) {
    if (k->kind == TSL_DSL_KNOB_SPLIT && k->values[i] < 1)
      return tsl_dsl_error_at(op, TSL_ERR_PARSE, k->line, k->col, "knob %s: split factor %lld is not >= 1", k->name,
                              (long long)k->values[i]);
    for (int j = 0; j < i; j++)
      if (k->values[j] == k->values[i])
        return tsl_dsl_error_at(op, TSL_ERR_PARSE, k->line, k->col, "knob %s: candidate %lld twice", k->name,
                                (long long)k->values[i]);
  }
  if (k->kind == TSL_DSL_KNOB_SPLIT) {
    const char *dot = strchr(k->stage, '.');
    char base[128];
    snprintf(base, sizeof base, "%.*s", dot ? (int)(dot - k->stage) : (int)strlen(k->stage), k->stage);
    const dsl_stage *s = find_stage(op, base);
    if (!s || (dot && strcmp(dot, ".local") != 0))
      return tsl_dsl_error_at(op, TSL_ERR_PARSE, k->line, k->col, "knob %s: op %s has no stage %s", k->name, op->name,
                              k->stage);
    if (!stage_has_axis(s, k->axis))
      return tsl_dsl_error_at(op, TSL_ERR_PARSE, k->line, k->col,
                              "knob %s: %s is no axis of stage %s (split knobs take a root axis: an axis or a "
                              "reduction variable as written in the stage)",
                              k->name, k->axis, s->name);
  }
  if (k->kind == TSL_DSL_KNOB_REORDER) {
    const char *const *first = k->orders;
    for (int o = 0; o < k->norders; o++) {
      const char *const *ord = k->orders + (size_t)o * (size_t)k->order_len;
      for (int i = 0; i < k->order_len; i++) {
        bool in_first = false;
        for (int j = 0; j < k->order_len; j++) {
          in_first |= strcmp(first[j], ord[i]) == 0;
          if (j < i && strcmp(ord[j], ord[i]) == 0)
            return tsl_dsl_error_at(op, TSL_ERR_PARSE, k->line, k->col, "knob %s: order %d names %s twice", k->name,
                                    o + 1, ord[i]);
        }
        if (!in_first)
          return tsl_dsl_error_at(op, TSL_ERR_PARSE, k->line, k->col,
                                  "knob %s: order %d is not a permutation of the first (%s)", k->name, o + 1, ord[i]);
      }
    }
  }
  return TSL_OK;
}

/* Integer argument positions of each primitive (schedule.h's text form). */
static bool int_position(const char *prim, int pos) {
  if (strcmp(prim, "split") == 0) return pos == 2;
  if (strcmp(prim, "tile") == 0) return pos == 3 || pos == 4;
  if (strcmp(prim, "storage_align") == 0) return pos == 2 || pos == 3;
  if (strcmp(prim, "prefetch") == 0) return pos == 3;
  return false;
}

static const char *const primitives[] = {"compute_inline", "compute_root", "split", "fuse", "reorder", "vectorize",
                                         "unroll", "parallel", "tile", "compute_at", "cache_read", "cache_write",
                                         "storage_align", "storage_order", "prefetch", "rfactor",
                                         "annotate"};

static const char *kind_word(tsl_dsl_knob_kind k) {
  static const char *const words[] = {"a split", "a reorder", "an annotate", "a list"};
  return words[k];
}

/* One argument of step s at position pos, resolving knob names; uses[] counts uses. */
static tsl_status check_arg(const tsl_dsl_op *op, const tsl_dsl_schedule *b, const tsl_dsl_sched_step *s, int pos,
                            tsl_dsl_sched_arg *a, int *uses) {
  int ki = a->kind == TSL_DSL_ARG_NAME ? knob_index(b, a->name) : -1;
  bool want_int = int_position(s->primitive, pos) || a->nparts;
  bool reorder_slot = strcmp(s->primitive, "reorder") == 0 && pos == 1 && s->nargs == 2;
  bool annotate_slot = strcmp(s->primitive, "annotate") == 0 && pos == 2;
  if (ki < 0) {
    if (a->kind == TSL_DSL_ARG_NAME && (want_int || annotate_slot))
      return tsl_dsl_error_at(op, TSL_ERR_PARSE, a->line, a->col, "unknown knob '%s' (%s)", a->name,
                              want_int ? "an integer or a split or list knob goes here" : "an annotate knob goes here");
    if (a->kind == TSL_DSL_ARG_INT && !want_int)
      return tsl_dsl_error_at(op, TSL_ERR_PARSE, a->line, a->col, "%s takes a name here, not an integer", s->primitive);
    return TSL_OK;
  }
  const tsl_dsl_knob *k = &b->knobs[ki];
  a->kind = TSL_DSL_ARG_KNOB;
  a->knob = ki;
  uses[ki]++;
  if (want_int && (k->kind == TSL_DSL_KNOB_SPLIT || k->kind == TSL_DSL_KNOB_LIST)) {
    if (k->kind == TSL_DSL_KNOB_LIST) return TSL_OK;
    bool splits = strcmp(s->primitive, "split") == 0 || strcmp(s->primitive, "tile") == 0;
    int axis_pos = strcmp(s->primitive, "tile") == 0 ? pos - 2 : 1;
    const tsl_dsl_sched_arg *st = &s->args[0], *ax = &s->args[axis_pos];
    if (!splits || st->kind != TSL_DSL_ARG_NAME || ax->kind != TSL_DSL_ARG_NAME || strcmp(st->name, k->stage) != 0 ||
        strcmp(ax->name, k->axis) != 0)
      return tsl_dsl_error_at(op, TSL_ERR_PARSE, a->line, a->col,
                              "knob %s splits %s.%s (declared at %d:%d) but is used here for %s%s%s", k->name, k->stage,
                              k->axis, k->line, k->col, splits && st->name ? st->name : s->primitive,
                              splits && ax->name ? "." : "", splits && ax->name ? ax->name : "");
    return TSL_OK;
  }
  if (reorder_slot && k->kind == TSL_DSL_KNOB_REORDER) {
    if (uses[ki] > 1)
      return tsl_dsl_error_at(op, TSL_ERR_PARSE, a->line, a->col, "reorder knob %s is used by a second step",
                              k->name);
    return TSL_OK;
  }
  if (annotate_slot && k->kind == TSL_DSL_KNOB_ANNOTATE) return TSL_OK;
  return tsl_dsl_error_at(op, TSL_ERR_PARSE, a->line, a->col, "knob %s is %s knob: it cannot be used here (%s)",
                          k->name, kind_word(k->kind),
                          want_int ? "an integer goes here"
                          : reorder_slot || annotate_slot ? "another kind of knob goes here"
                                                          : "a stage, axis or tensor name goes here");
}

static tsl_status check_step(const tsl_dsl_op *op, const tsl_dsl_schedule *b, tsl_dsl_sched_step *s, int *uses) {
  bool known = false;
  for (size_t i = 0; i < sizeof primitives / sizeof primitives[0]; i++)
    known |= strcmp(primitives[i], s->primitive) == 0;
  if (!known)
    return tsl_dsl_error_at(op, TSL_ERR_PARSE, s->line, s->col,
                            "unknown schedule primitive '%s' (split, tile, fuse, reorder, vectorize, unroll, parallel, "
                            "compute_at, compute_inline, compute_root, cache_read, cache_write, storage_align, "
                            "storage_order, prefetch, rfactor, annotate)",
                            s->primitive);
  if (strcmp(s->primitive, "annotate") == 0 && s->nargs != 3)
    return tsl_dsl_error_at(op, TSL_ERR_PARSE, s->line, s->col, "annotate takes (stage, axis, knob)");
  tsl_dsl_sched_arg *args = (tsl_dsl_sched_arg *)s->args;
  for (int i = 0; i < s->nargs; i++) {
    tsl_status st = check_arg(op, b, s, i, &args[i], uses);
    if (st != TSL_OK) return st;
  }
  if (s->cond_name) {
    int ki = knob_index(b, s->cond_name);
    if (ki < 0)
      return tsl_dsl_error_at(op, TSL_ERR_PARSE, s->cond_line, s->cond_col, "unknown knob '%s' after 'if'",
                              s->cond_name);
    const tsl_dsl_knob *k = &b->knobs[ki];
    if (k->kind == TSL_DSL_KNOB_ANNOTATE && (k->nannots != 1 || strcmp(k->annots[0], s->primitive) != 0))
      return tsl_dsl_error_at(op, TSL_ERR_PARSE, s->cond_line, s->cond_col,
                              k->nannots == 1 ? "knob %s turns %s on or off, not %s"
                                              : "knob %s chooses among %s...: write annotate(stage, axis, %s) instead",
                              k->name, k->annots[0], k->nannots == 1 ? s->primitive : k->name);
    if (k->kind != TSL_DSL_KNOB_ANNOTATE && k->kind != TSL_DSL_KNOB_LIST)
      return tsl_dsl_error_at(op, TSL_ERR_PARSE, s->cond_line, s->cond_col,
                              "knob %s is %s knob: 'if' takes an annotate or a list knob", k->name, kind_word(k->kind));
    s->cond_knob = ki;
    uses[ki]++;
  }
  return TSL_OK;
}

tsl_status dsl_check_schedule(tsl_dsl_op *op) {
  tsl_dsl_schedule *b = op->schedule;
  if (b->nknobs > 24)
    return tsl_dsl_error_at(op, TSL_ERR_PARSE, b->knobs[24].line, b->knobs[24].col, "more than 24 knobs");
  for (int i = 0; i < b->nknobs; i++) {
    tsl_status st = check_knob(op, b, i);
    if (st != TSL_OK) return st;
  }
  int uses[24] = {0};
  for (int i = 0; i < b->nsteps; i++) {
    tsl_status st = check_step(op, b, (tsl_dsl_sched_step *)&b->steps[i], uses);
    if (st != TSL_OK) return st;
  }
  for (int i = 0; i < b->nknobs; i++)
    if (uses[i] == 0)
      return tsl_dsl_error_at(op, TSL_ERR_PARSE, b->knobs[i].line, b->knobs[i].col,
                              "knob %s is never used (it would only multiply the search space)", b->knobs[i].name);
  return TSL_OK;
}
