/* The lookup-table 1x1 conv's schedule (lutconv.h). */
#include "ops/binary/lutconv.h"

#include <stdio.h>

tsl_status tsl_lutconv_schedule(const tsl_te_program *p, const tsl_target *t, tsl_schedule **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "lutconv schedule: NULL out");
  *out = NULL;
  if (!p || !t) return tsl_error(TSL_ERR_INVALID, "lutconv schedule: NULL program or target");
  const tsl_buffer *ob = p->noutputs == 1 ? p->outputs[0]->buf : NULL;
  if (!ob || ob->ndim != 4 || ob->shape[1] < 1 || ob->shape[2] < 1 || ob->shape[3] < 1)
    return tsl_error(TSL_ERR_SCHEDULE, "lutconv schedule: the op has no output out[n, kb, p, kx]");
  int64_t KB = ob->shape[1], P = ob->shape[2], X = ob->shape[3];
  int lanes = tsl_target_f32_lanes(t), regs = tsl_target_vector_registers(t);
  int64_t vecs = lanes > 0 && X > lanes ? (X + lanes - 1) / lanes : 1; /* vectors per block of X */
  int64_t kt = KB >= 2 ? 2 : 1, pt = (regs - 4) / (kt * vecs);
  if (pt > 12) pt = 12;
  if (pt > P) pt = P;
  if (pt < 1) pt = 1;
  const char *o = p->outputs[0]->op->name;
  char text[1536];
  snprintf(text, sizeof text,
           "compute_root(idx)\n"
           "split(%s, kb, %lld)\n"
           "split(%s, p, %lld)\n"
           "reorder(%s, kb.outer, n, p.outer, kb.inner, p.inner, kx)\n"
           "compute_at(acc, %s, p.outer)\n"
           "compute_at(T, %s, kb.outer)\n"
           "compute_at(T2, T, g)\n"
           "reorder(acc, n, pl, g, kb, p, kx)\n"
           "vectorize(acc, kx)\n"
           "unroll(acc, kb)\n"
           "unroll(acc, p)\n"
           "vectorize(%s, kx)\n"
           "split(T, k, %lld)\n"
           "vectorize(T, k.inner)\n"
           "split(T2, k, %lld)\n"
           "vectorize(T2, k.inner)\n"
           "parallel(%s, kb.outer)\n",
           o, (long long)kt, o, (long long)pt, o, o, o, o, (long long)X, (long long)X, o);
  tsl_schedule *s = NULL;
  tsl_status st = tsl_schedule_from_text(p, text, &s);
  if (st != TSL_OK) {
    char why[512];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    return tsl_error(st == TSL_ERR_PARSE ? TSL_ERR_SCHEDULE : st, "lutconv schedule: %s", why);
  }
  *out = s;
  return TSL_OK;
}
