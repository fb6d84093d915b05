/* Config spaces and the template registry (see template.h). */
#include "schedule/template.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_tags[] = {"sp", "re", "an", "ot"};

const char *tsl_knob_kind_tag(tsl_knob_kind k) {
  return (unsigned)k < sizeof kind_tags / sizeof kind_tags[0] ? kind_tags[k] : NULL;
}

bool tsl_knob_kind_parse(const char *tag, tsl_knob_kind *out) {
  for (size_t i = 0; tag && i < sizeof kind_tags / sizeof kind_tags[0]; i++)
    if (strcmp(tag, kind_tags[i]) == 0) {
      *out = (tsl_knob_kind)i;
      return true;
    }
  return false;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

tsl_status tsl_space_add_knob(tsl_config_space *s, const char *name, tsl_knob_kind kind, int n, const int64_t *values) {
  if (!s || !name || !values) return tsl_error(TSL_ERR_INVALID, "config space: NULL argument");
  size_t len = strlen(name);
  if (len == 0 || len >= TSL_KNOB_NAME_LEN)
    return tsl_error(TSL_ERR_INVALID, "config space: knob name '%s' empty or longer than %d", name,
                     TSL_KNOB_NAME_LEN - 1);
  if (tsl_space_knob_index(s, name) >= 0) return tsl_error(TSL_ERR_INVALID, "config space: knob %s twice", name);
  if (n < 1 || n > TSL_MAX_KNOB_VALUES)
    return tsl_error(TSL_ERR_INVALID, "config space: knob %s has %d values (1..%d)", name, n, TSL_MAX_KNOB_VALUES);
  if (!tsl_knob_kind_tag(kind)) return tsl_error(TSL_ERR_INVALID, "config space: knob %s of unknown kind", name);
  if (s->nknobs >= TSL_MAX_KNOBS) return tsl_error(TSL_ERR_INVALID, "config space: more than %d knobs", TSL_MAX_KNOBS);
  tsl_knob *k = &s->knobs[s->nknobs];
  memset(k, 0, sizeof *k);
  memcpy(k->name, name, len + 1);
  k->kind = kind;
  int64_t tmp[TSL_MAX_KNOB_VALUES];
  memcpy(tmp, values, (size_t)n * sizeof tmp[0]);
  qsort(tmp, (size_t)n, sizeof tmp[0], cmp_i64);
  for (int i = 0; i < n; i++)
    if (k->nvalues == 0 || k->values[k->nvalues - 1] != tmp[i]) k->values[k->nvalues++] = tmp[i];
  s->nknobs++;
  return TSL_OK;
}

int tsl_space_knob_index(const tsl_config_space *s, const char *name) {
  for (int i = 0; s && name && i < s->nknobs; i++)
    if (strcmp(s->knobs[i].name, name) == 0) return i;
  return -1;
}

int64_t tsl_space_size(const tsl_config_space *s) {
  int64_t n = 1;
  for (int i = 0; i < s->nknobs; i++) {
    if (n > INT64_MAX / s->knobs[i].nvalues) return INT64_MAX;
    n *= s->knobs[i].nvalues;
  }
  return n;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 1099511628211ULL;
  }
  return h;
}

uint64_t tsl_space_hash(const char *template_name, int template_version, const char *op, const tsl_config_space *s) {
  uint64_t h = 14695981039346656037ULL;
  h = fnv(h, template_name ? template_name : "", strlen(template_name ? template_name : "") + 1);
  int64_t v = template_version;
  h = fnv(h, &v, sizeof v);
  h = fnv(h, op ? op : "", strlen(op ? op : "") + 1);
  for (int i = 0; i < s->nknobs; i++) {
    const tsl_knob *k = &s->knobs[i];
    h = fnv(h, k->name, strlen(k->name) + 1);
    int64_t meta[2] = {k->kind, k->nvalues};
    h = fnv(h, meta, sizeof meta);
    h = fnv(h, k->values, (size_t)k->nvalues * sizeof k->values[0]);
  }
  return h;
}

tsl_status tsl_config_from_index(const tsl_config_space *s, int64_t idx, tsl_config *out) {
  int64_t size = tsl_space_size(s);
  if (idx < 0 || idx >= size)
    return tsl_error(TSL_ERR_INVALID, "config space: index %lld outside [0, %lld)", (long long)idx, (long long)size);
  out->nknobs = s->nknobs;
  for (int i = s->nknobs - 1; i >= 0; i--) {
    int n = s->knobs[i].nvalues;
    out->values[i] = s->knobs[i].values[idx % n];
    idx /= n;
  }
  return TSL_OK;
}

static int value_pos(const tsl_knob *k, int64_t v) {
  for (int j = 0; j < k->nvalues; j++)
    if (k->values[j] == v) return j;
  return -1;
}

int64_t tsl_config_index(const tsl_config_space *s, const tsl_config *c) {
  if (!s || !c || c->nknobs != s->nknobs) return -1;
  if (tsl_space_size(s) == INT64_MAX) return -1;
  int64_t idx = 0;
  for (int i = 0; i < s->nknobs; i++) {
    int pos = value_pos(&s->knobs[i], c->values[i]);
    if (pos < 0) return -1;
    idx = idx * s->knobs[i].nvalues + pos;
  }
  return idx;
}

tsl_status tsl_config_check(const tsl_config_space *s, const tsl_config *c) {
  if (!s || !c) return tsl_error(TSL_ERR_INVALID, "config: NULL argument");
  if (c->nknobs != s->nknobs)
    return tsl_error(TSL_ERR_INVALID, "config: %d knob values for a space of %d knobs", c->nknobs, s->nknobs);
  for (int i = 0; i < s->nknobs; i++)
    if (value_pos(&s->knobs[i], c->values[i]) < 0)
      return tsl_error(TSL_ERR_INVALID, "config: knob %s = %lld is not one of its %d candidates", s->knobs[i].name,
                       (long long)c->values[i], s->knobs[i].nvalues);
  return TSL_OK;
}

int64_t tsl_config_get(const tsl_config_space *s, const tsl_config *c, const char *name, int64_t dflt) {
  int i = tsl_space_knob_index(s, name);
  return i < 0 || i >= c->nknobs ? dflt : c->values[i];
}

const char *tsl_config_str(const tsl_config_space *s, const tsl_config *c, char *buf, size_t n) {
  if (!buf || n == 0) return buf;
  buf[0] = '\0';
  size_t len = 0;
  for (int i = 0; i < s->nknobs && i < c->nknobs && len < n; i++) {
    int w = snprintf(buf + len, n - len, "%s%s=%lld", i ? "," : "", s->knobs[i].name, (long long)c->values[i]);
    if (w < 0) break;
    len += (size_t)w;
  }
  return buf;
}

/* ---- registry -------------------------------------------------------------- */

enum { MAX_TEMPLATES = 128 };
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static const tsl_template *registry[MAX_TEMPLATES];
static int nregistry;

tsl_status tsl_template_register(const tsl_template *tpl) {
  if (!tpl || !tpl->name || !tpl->op || !tpl->space || !tpl->default_config || !tpl->apply)
    return tsl_error(TSL_ERR_INVALID, "template registry: NULL template or field");
  tsl_status st = TSL_OK;
  pthread_mutex_lock(&registry_lock);
  for (int i = 0; i < nregistry; i++) {
    if (registry[i] == tpl) goto done;
    if (strcmp(registry[i]->name, tpl->name) == 0) {
      st = tsl_error(TSL_ERR_INVALID, "template registry: another template is called %s", tpl->name);
      goto done;
    }
  }
  if (nregistry >= MAX_TEMPLATES) {
    st = tsl_error(TSL_ERR_INVALID, "template registry: full (%d templates)", MAX_TEMPLATES);
    goto done;
  }
  registry[nregistry++] = tpl;
done:
  pthread_mutex_unlock(&registry_lock);
  return st;
}

const tsl_template *tsl_template_find(const char *name) {
  const tsl_template *r = NULL;
  pthread_mutex_lock(&registry_lock);
  for (int i = 0; name && i < nregistry && !r; i++)
    if (strcmp(registry[i]->name, name) == 0) r = registry[i];
  pthread_mutex_unlock(&registry_lock);
  return r;
}

int tsl_template_list(const char *op, const tsl_template **out, int max) {
  int n = 0;
  pthread_mutex_lock(&registry_lock);
  for (int i = 0; i < nregistry; i++)
    if (!op || strcmp(registry[i]->op, op) == 0) {
      if (out && n < max) out[n] = registry[i];
      n++;
    }
  pthread_mutex_unlock(&registry_lock);
  return n;
}

tsl_status tsl_template_apply_checked(const tsl_template *tpl, const tsl_te_program *p, const tsl_target *t,
                                      uint64_t space_hash, const tsl_config *c, tsl_schedule **out) {
  if (!tpl || !p || !t || !c || !out) return tsl_error(TSL_ERR_INVALID, "template apply: NULL argument");
  *out = NULL;
  tsl_config_space *s = calloc(1, sizeof *s);
  if (!s) return tsl_error(TSL_ERR_NOMEM, "template apply: out of memory");
  tsl_status st = tpl->space(p, t, s);
  if (st == TSL_OK) {
    uint64_t h = tsl_space_hash(tpl->name, tpl->version, tpl->op, s);
    if (space_hash != 0 && h != space_hash)
      st = tsl_error(TSL_ERR_INVALID, "template %s: space hash %016llx differs from the record's %016llx", tpl->name,
                     (unsigned long long)h, (unsigned long long)space_hash);
  }
  if (st == TSL_OK) st = tsl_config_check(s, c);
  if (st == TSL_OK) st = tpl->apply(p, t, s, c, out);
  free(s);
  return st;
}
