/* The auto-scheduler template (autosched.h): sketches x decisions as a config space. */
#include "tuner/autosched.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/sketch.h"

enum { MAX_AUTO_TEMPLATES = 32 };

typedef struct auto_entry {
  tsl_template tpl;
  char name[96];
  char op[88];
} auto_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static auto_entry *entries[MAX_AUTO_TEMPLATES];
static int nentries;

/* Decision knobs for n sketches: 4 bits each, the sketch index ceil(log2 n) bits, 62 in all. */
static int decision_knobs(int nsketches) {
  int bits = 0;
  while ((1 << bits) < nsketches) bits++;
  int k = (62 - bits) / 4;
  return k < TSL_MAX_KNOBS - 1 ? k : TSL_MAX_KNOBS - 1;
}

static tsl_status auto_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  memset(out, 0, sizeof *out);
  tsl_sketch_list *sl = malloc(sizeof *sl);
  if (!sl) return tsl_error(TSL_ERR_NOMEM, "auto-scheduler: out of memory");
  tsl_status st = tsl_sketch_generate(p, t, sl);
  int64_t vals[TSL_MAX_KNOB_VALUES];
  for (int i = 0; st == TSL_OK && i < sl->n; i++) vals[i] = i;
  if (st == TSL_OK) st = tsl_space_add_knob(out, "sketch", TSL_KNOB_OTHER, sl->n, vals);
  for (int i = 0; i < TSL_SKETCH_DECISION_VALUES; i++) vals[i] = i;
  int k = st == TSL_OK ? decision_knobs(sl->n) : 0;
  for (int i = 0; st == TSL_OK && i < k; i++) {
    char name[16];
    snprintf(name, sizeof name, "d%d", i);
    st = tsl_space_add_knob(out, name, TSL_KNOB_OTHER, TSL_SKETCH_DECISION_VALUES, vals);
  }
  free(sl);
  return st;
}

static tsl_status auto_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                               tsl_config *out) {
  (void)p;
  (void)t;
  out->nknobs = s->nknobs;
  for (int i = 0; i < s->nknobs; i++) out->values[i] = i == 0 ? 0 : TSL_AUTOSCHED_DEFAULT_DECISION;
  return TSL_OK;
}

/* The schedule of sketch `sketch` with decisions d[0..nd). */
static tsl_status sample_config(const tsl_te_program *p, const tsl_target *t, int sketch, const int *d, int nd,
                                tsl_schedule **out) {
  tsl_sketch_list *sl = malloc(sizeof *sl);
  if (!sl) return tsl_error(TSL_ERR_NOMEM, "auto-scheduler: out of memory");
  tsl_status st = tsl_sketch_generate(p, t, sl);
  if (st == TSL_OK && (sketch < 0 || sketch >= sl->n))
    st = tsl_error(TSL_ERR_INVALID, "auto-scheduler: sketch %d of %s does not exist (%d sketches)", sketch,
                   p->name ? p->name : "program", sl->n);
  if (st == TSL_OK) st = tsl_sketch_sample_decisions(p, t, &sl->sketches[sketch], d, nd, out);
  free(sl);
  return st;
}

static tsl_status auto_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                             const tsl_config *c, tsl_schedule **out) {
  *out = NULL;
  tsl_status st = tsl_config_check(s, c);
  if (st != TSL_OK) return st;
  if (s->nknobs < 2) return tsl_error(TSL_ERR_INVALID, "auto-scheduler: not its space (%d knobs)", s->nknobs);
  int d[TSL_MAX_KNOBS];
  for (int i = 1; i < s->nknobs; i++) d[i - 1] = (int)c->values[i];
  return sample_config(p, t, (int)c->values[0], d, s->nknobs - 1, out);
}

tsl_status tsl_autosched_default_schedule(const tsl_te_program *p, const tsl_target *t, tsl_schedule **out) {
  if (!p || !t || !out) return tsl_error(TSL_ERR_INVALID, "auto-scheduler: NULL argument");
  int d[1] = {TSL_AUTOSCHED_DEFAULT_DECISION};
  return sample_config(p, t, 0, d, 1, out);
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
