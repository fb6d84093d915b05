/* A schedule text as a template of one config (user_template.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/user/user_template.h"

enum { MAX_TEXT_TEMPLATES = 32 };

typedef struct text_entry {
  tsl_template tpl;
  char name[96];
  char *op, *text, *filename;
} text_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static text_entry *entries[MAX_TEXT_TEMPLATES];
static int nentries;

static const text_entry *entry_of(const char *op) {
  const text_entry *e = NULL;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < nentries && !e; i++)
    if (strcmp(entries[i]->op, op) == 0) e = entries[i];
  pthread_mutex_unlock(&lock);
  return e;
}

static tsl_status text_space(const tsl_te_program *p, const tsl_target *t, tsl_config_space *out) {
  (void)t;
  if (!entry_of(p->name)) return tsl_error(TSL_ERR_INVALID, "schedule text template: none for %s", p->name);
  memset(out, 0, sizeof *out);
  return TSL_OK;
}

static tsl_status text_default(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                               tsl_config *out) {
  (void)p;
  (void)t;
  (void)s;
  memset(out, 0, sizeof *out);
  return TSL_OK;
}

static tsl_status text_apply(const tsl_te_program *p, const tsl_target *t, const tsl_config_space *s,
                             const tsl_config *c, tsl_schedule **out) {
  (void)t;
  (void)s;
  (void)c;
  const text_entry *e = entry_of(p->name);
  if (!e) return tsl_error(TSL_ERR_INVALID, "schedule text template: none for %s", p->name);
  return tsl_schedule_from_text_file(p, e->text, e->filename, out);
}

int tsl_user_template_version(const char *text) {
  uint64_t h = 14695981039346656037ULL;
  for (; text && *text; text++) h = (h ^ (unsigned char)*text) * 1099511628211ULL;
  return (int)(h & 0x7fffffff);
}

tsl_status tsl_user_text_template(const char *op, const char *text, const char *filename, const tsl_template **out) {
  if (out) *out = NULL;
  if (!op || !text || !filename || !out) return tsl_error(TSL_ERR_INVALID, "schedule text template: NULL argument");
  const text_entry *old = entry_of(op);
  if (old) {
    if (strcmp(old->text, text) != 0)
      return tsl_error(TSL_ERR_INVALID, "schedule text template: %s has another schedule text already", op);
    *out = &old->tpl;
    return TSL_OK;
  }
  text_entry *e = calloc(1, sizeof *e);
  if (e) {
    e->op = strdup(op);
    e->text = strdup(text);
    e->filename = strdup(filename);
  }
  if (!e || !e->op || !e->text || !e->filename) {
    if (e) {
      free(e->op);
      free(e->text);
      free(e->filename);
    }
    free(e);
    return tsl_error(TSL_ERR_NOMEM, "schedule text template: out of memory");
  }
  snprintf(e->name, sizeof e->name, "%s%s", op, ".schedule_text");
  e->tpl = (tsl_template){.name = e->name,
                          .op = e->op,
                          .description = "a schedule text (tune-op --schedule): one config",
                          .version = tsl_user_template_version(text),
                          .space = text_space,
                          .default_config = text_default,
                          .apply = text_apply};
  tsl_status st = TSL_OK;
  pthread_mutex_lock(&lock);
  if (nentries >= MAX_TEXT_TEMPLATES) st = tsl_error(TSL_ERR_INVALID, "schedule text template: more than %d",
                                                     MAX_TEXT_TEMPLATES);
  else entries[nentries++] = e;
  pthread_mutex_unlock(&lock);
  if (st == TSL_OK) st = tsl_template_register(&e->tpl);
  if (st != TSL_OK) return st; /* e stays in the table: the template may be registered */
  *out = &e->tpl;
  return TSL_OK;
}
