/* The algorithm registry and the choice of applicable algorithms (algorithm.h). */
#include "ops/algorithm.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ALGORITHMS = 64, MAX_TPL = 32 };
static pthread_mutex_t algo_lock = PTHREAD_MUTEX_INITIALIZER;
static const tsl_algorithm *algos[MAX_ALGORITHMS];
static int nalgos;

tsl_status tsl_algorithm_register(const tsl_algorithm *a) {
  if (!a || !a->name || !a->family || !a->template_name || !a->applies || !a->map)
    return tsl_error(TSL_ERR_INVALID, "algorithm registry: NULL algorithm or field");
  tsl_status st = TSL_OK;
  pthread_mutex_lock(&algo_lock);
  for (int i = 0; i < nalgos && st == TSL_OK; i++) {
    if (algos[i] == a) goto done;
    if (strcmp(algos[i]->name, a->name) == 0)
      st = tsl_error(TSL_ERR_INVALID, "algorithm registry: another algorithm is called %s", a->name);
  }
  if (st == TSL_OK && nalgos >= MAX_ALGORITHMS)
    st = tsl_error(TSL_ERR_INVALID, "algorithm registry: full (%d)", MAX_ALGORITHMS);
  if (st == TSL_OK) algos[nalgos++] = a;
done:
  pthread_mutex_unlock(&algo_lock);
  return st;
}

int tsl_algorithm_list(const char *family, const tsl_algorithm **out, int max) {
  int n = 0;
  pthread_mutex_lock(&algo_lock);
  for (int i = 0; i < nalgos; i++)
    if (!family || strcmp(algos[i]->family, family) == 0) {
      if (out && n < max) out[n] = algos[i];
      n++;
    }
  pthread_mutex_unlock(&algo_lock);
  return n;
}

static bool same_workload(const tsl_workload *a, const tsl_workload *b) {
  char *ka = NULL, *kb = NULL;
  bool same = tsl_workload_key_of(a, &ka) == TSL_OK && tsl_workload_key_of(b, &kb) == TSL_OK && strcmp(ka, kb) == 0;
  free(ka);
  free(kb);
  return same;
}

int tsl_algorithms_for(const tsl_workload *w, tsl_algo_choice *out, int max, FILE *log) {
  tsl_tuner_register_templates();
  if (!w) return 0;
  int n = 0;
  const tsl_template *tpls[MAX_TPL];
  int nt = tsl_template_list(w->op, tpls, MAX_TPL);
  for (int i = 0; i < nt && i < MAX_TPL; i++) {
    if (out && n < max) {
      snprintf(out[n].name, sizeof out[n].name, "%s", tpls[i]->name);
      out[n].tpl = tpls[i];
      out[n].op_workload = *w;
      tsl_workload_fix(&out[n].op_workload);
    }
    n++;
  }
  pthread_mutex_lock(&algo_lock);
  const tsl_algorithm *list[MAX_ALGORITHMS];
  int na = nalgos;
  memcpy(list, algos, sizeof list[0] * (size_t)na);
  pthread_mutex_unlock(&algo_lock);
  for (int i = 0; i < na; i++) {
    const tsl_algorithm *a = list[i];
    if (strcmp(a->family, w->op) != 0) continue;
    const char *why = "";
    if (!a->applies(w, &why)) {
      if (log) fprintf(log, "algorithm %s declines: %s\n", a->name, why ? why : "");
      continue;
    }
    const tsl_template *tpl = tsl_template_find(a->template_name);
    tsl_workload mapped;
    if (!tpl || a->map(w, &mapped) != TSL_OK) {
      if (log)
        fprintf(log, "algorithm %s skipped: %s\n", a->name, tpl ? tsl_last_error() : "its template is not registered");
      continue;
    }
    /* an algorithm that is one of the templates already listed, on the same workload
     * (the family's own template as an algorithm of it), is listed once */
    bool dup = false;
    for (int k = 0; out && k < n && k < max && !dup; k++)
      dup = out[k].tpl == tpl && same_workload(&out[k].op_workload, &mapped);
    if (dup) continue;
    if (out && n < max) {
      snprintf(out[n].name, sizeof out[n].name, "%s", a->name);
      out[n].tpl = tpl;
      out[n].op_workload = mapped;
      tsl_workload_fix(&out[n].op_workload);
    }
    n++;
  }
  return n;
}
