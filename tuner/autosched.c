/* The auto-scheduler template (autosched.h): sketches x decisions as a config space. */
#include "tuner/autosched.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/sketch.h"

enum { MAX_AUTO_TEMPLATES = 32 };

/* The knob of the vector width (target.h tsl_target_vector_widths), on targets with more
 * than one. */
#define AUTO_WIDTH_KNOB "vector_width"

typedef struct auto_entry {
  tsl_template tpl;
  char name[96];
  char op[88];
} auto_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static auto_entry *entries[MAX_AUTO_TEMPLATES];
static int nentries;

/* Decision knobs for n sketches and w vector widths: 4 bits each, the sketch index
 * ceil(log2 n) bits, the width ceil(log2 w), 62 in all. */
static int decision_knobs(int nsketches, int nwidths) {
  int bits = 0;
  while ((1 << bits) < nsketches) bits++;
  for (int b = 0; (1 << b) < nwidths; b++) bits++;
  int k = (62 - bits) / 4;
  int max = TSL_MAX_KNOBS - 1 - (nwidths > 1);
  return k < max ? k : max;
}

static tsl_status auto_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  memset(out, 0, sizeof *out);
  tsl_sketch_list *sl = malloc(sizeof *sl);
  if (!sl) return tsl_error(TSL_ERR_NOMEM, "auto-scheduler: out of memory");
  tsl_status st = tsl_sketch_generate(p, t, sl);
  int64_t vals[TSL_MAX_KNOB_VALUES];
  for (int i = 0; st == TSL_OK && i < sl->n; i++) vals[i] = i;
  if (st == TSL_OK) st = tsl_space_add_knob(out, "sketch", TSL_KNOB_OTHER, sl->n, vals);
  int widths[TSL_TARGET_MAX_VECTOR_WIDTHS];
  int nwidths = tsl_target_vector_widths(t, widths);
  for (int i = 0; i < TSL_SKETCH_DECISION_VALUES; i++) vals[i] = i;
  int k = st == TSL_OK ? decision_knobs(sl->n, nwidths) : 0;
  for (int i = 0; st == TSL_OK && i < k; i++) {
    char name[16];
    snprintf(name, sizeof name, "d%d", i);
    st = tsl_space_add_knob(out, name, TSL_KNOB_OTHER, TSL_SKETCH_DECISION_VALUES, vals);
  }
  if (st == TSL_OK && nwidths > 1) {
    for (int i = 0; i < nwidths; i++) vals[i] = widths[i];
    st = tsl_space_add_knob(out, AUTO_WIDTH_KNOB, TSL_KNOB_OTHER, nwidths, vals);
  }
  free(sl);
  return st;
}

static tsl_status auto_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                               tsl_config *out) {
  (void)p;
  out->nknobs = s->nknobs;
  for (int i = 0; i < s->nknobs; i++) out->values[i] = i == 0 ? 0 : TSL_AUTOSCHED_DEFAULT_DECISION;
  int w = tsl_space_knob_index(s, AUTO_WIDTH_KNOB);
  if (w >= 0) out->values[w] = t->vector_bits; /* the target's own width */
  return TSL_OK;
}

/* The schedule of sketch `sketch` (of t's sketch list) with decisions d[0..nd), compiled
 * at `bits` wide vectors (0: t's own): sampled for t narrowed to that width (its lanes
 * and registers), ending with vector_width(bits) when that is narrower than t's. */
static tsl_status sample_config(const tsl_te_program *p, const tsl_target *t, int sketch, const int *d, int nd,
                                int bits, tsl_schedule **out) {
  *out = NULL;
  tsl_target narrowed;
  tsl_status st = tsl_target_with_vector_bits(t, bits ? bits : t->vector_bits, &narrowed);
  if (st != TSL_OK) return st;
  tsl_sketch_list *sl = malloc(sizeof *sl);
  if (!sl) return tsl_error(TSL_ERR_NOMEM, "auto-scheduler: out of memory");
  st = tsl_sketch_generate(p, t, sl);
  if (st == TSL_OK && (sketch < 0 || sketch >= sl->n))
    st = tsl_error(TSL_ERR_INVALID, "auto-scheduler: sketch %d of %s does not exist (%d sketches)", sketch,
                   p->name ? p->name : "program", sl->n);
  if (st == TSL_OK) st = tsl_sketch_sample_decisions(p, &narrowed, &sl->sketches[sketch], d, nd, out);
  free(sl);
  if (st == TSL_OK && narrowed.vector_bits != t->vector_bits) {
    st = tsl_schedule_vector_width(*out, narrowed.vector_bits);
    if (st != TSL_OK) {
      tsl_schedule_free(*out);
      *out = NULL;
    }
  }
  return st;
}

static tsl_status auto_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                             const tsl_config *c, tsl_schedule **out) {
  *out = NULL;
  tsl_status st = tsl_config_check(s, c);
  if (st != TSL_OK) return st;
  int w = tsl_space_knob_index(s, AUTO_WIDTH_KNOB);
  int nd = s->nknobs - 1 - (w >= 0);
  if (nd < 1) return tsl_error(TSL_ERR_INVALID, "auto-scheduler: not its space (%d knobs)", s->nknobs);
  int d[TSL_MAX_KNOBS];
  for (int i = 1, k = 0; i < s->nknobs; i++)
    if (i != w) d[k++] = (int)c->values[i];
  return sample_config(p, t, (int)c->values[0], d, nd, w >= 0 ? (int)c->values[w] : 0, out);
}

tsl_status tsl_autosched_default_schedule(const tsl_te_program *p, const tsl_target *t, tsl_schedule **out) {
  if (!p || !t || !out) return tsl_error(TSL_ERR_INVALID, "auto-scheduler: NULL argument");
  int d[1] = {TSL_AUTOSCHED_DEFAULT_DECISION};
  return sample_config(p, t, 0, d, 1, 0, out);
}

bool tsl_autosched_applies(const tsl_te_program *p) {
  tsl_schedule *s = NULL;
  if (!p || tsl_schedule_create(p, &s) != TSL_OK) {
    tsl_clear_error();
    return false;
  }
  bool any = false;
  for (int i = 0; i < s->nstages && !any; i++)
    any = s->stages[i]->attach != TSL_ATTACH_INLINE && s->stages[i]->nroot > s->stages[i]->op->naxis;
  tsl_schedule_free(s);
  return any;
}

tsl_status tsl_autosched_template(const char *op, const tsl_template **out) {
  if (!op || !out) return tsl_error(TSL_ERR_INVALID, "auto-scheduler: NULL argument");
  *out = NULL;
  if (strlen(op) + sizeof ".auto" > sizeof entries[0]->name || strlen(op) >= sizeof entries[0]->op)
    return tsl_error(TSL_ERR_INVALID, "auto-scheduler: operator name '%s' too long", op);
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nentries && !*out; i++)
    if (strcmp(entries[i]->op, op) == 0) *out = &entries[i]->tpl;
  tsl_status st = TSL_OK;
  if (!*out) {
    auto_entry *e = nentries < MAX_AUTO_TEMPLATES ? calloc(1, sizeof *e) : NULL;
    if (!e) {
      st = nentries < MAX_AUTO_TEMPLATES ? tsl_error(TSL_ERR_NOMEM, "auto-scheduler: out of memory")
                                         : tsl_error(TSL_ERR_INVALID, "auto-scheduler: more than %d operators",
                                                     MAX_AUTO_TEMPLATES);
    } else {
      snprintf(e->op, sizeof e->op, "%s", op);
      snprintf(e->name, sizeof e->name, "%s.auto", op);
      e->tpl = (tsl_template){e->name, e->op, "auto-scheduler: sketches of the TE program x sampled decisions",
                              TSL_AUTOSCHED_VERSION, auto_space, auto_default, auto_apply};
      st = tsl_template_register(&e->tpl);
      if (st == TSL_OK) {
        entries[nentries++] = e; /* lives for the process, as the registry keeps the pointer */
        *out = &e->tpl;
      } else {
        free(e);
      }
    }
  }
  pthread_mutex_unlock(&lock);
  return st;
}
