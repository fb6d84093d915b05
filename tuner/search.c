/* Random, grid and model-guided simulated-annealing search (search.h). */
#include "tuner/search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tuner/cost_model.h"

enum { SA_POINTS = 128, SA_STEPS = 60, EARLY_RANDOM = 8, RERANK = 4, EVO_POP = 64, EVO_GENERATIONS = 4 };
#define SA_EPS 0.1
/* Sketches of the auto-scheduler's space counted for stratified random draws (tuner/
 * sketch.h: TSL_SKETCH_MAX). */
#define SKETCH_VALUES 64

struct tsl_search {
  tsl_search_kind kind;
  tsl_config_space space;
  int64_t size;
  uint64_t rng;
  int64_t grid_next;
  /* visited set: open addressing on config indices (+1; 0 = empty) */
  int64_t *set;
  int64_t set_cap, nvisited;
  /* measurements (xgb) */
  tsl_config *hist;
  double *hist_cost;
  int nhist, hist_cap;
  tsl_cost_model *model; /* knob features: drives simulated annealing */
  tsl_cost_model *rerank; /* knob + loop-IR features (set_program), or NULL */
  /* a space whose first knob is "sketch" (the auto-scheduler's): configs taken per sketch */
  int64_t sketch_taken[SKETCH_VALUES];
};

bool tsl_search_kind_parse(const char *s, tsl_search_kind *out) {
  static const char *const names[] = {"random", "grid", "xgb", "evolution"};
  for (int i = 0; s && i < 4; i++)
    if (strcmp(s, names[i]) == 0) {
      *out = (tsl_search_kind)i;
      return true;
    }
  return false;
}

/* splitmix64 (Steele, Lea, Flood, OOPSLA 2014) */
static uint64_t next_u64(uint64_t *x) {
  uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
static int64_t rand_below(uint64_t *x, int64_t n) { return n <= 1 ? 0 : (int64_t)(next_u64(x) % (uint64_t)n); }
static double rand_unit(uint64_t *x) { return (double)(next_u64(x) >> 11) / 9007199254740992.0; }

static uint64_t mix(int64_t v) {
  uint64_t z = (uint64_t)v * 0x9E3779B97F4A7C15ULL;
  return z ^ (z >> 29);
}

static bool set_has(const tsl_search *s, int64_t idx) {
  int64_t m = s->set_cap - 1;
  for (int64_t h = (int64_t)(mix(idx) & (uint64_t)m);; h = (h + 1) & m) {
    if (s->set[h] == 0) return false;
    if (s->set[h] == idx + 1) return true;
  }
}

static bool set_insert(tsl_search *s, int64_t idx) {
  if ((s->nvisited + 1) * 2 > s->set_cap) {
    int64_t cap = s->set_cap * 2;
    int64_t *ns = calloc((size_t)cap, sizeof *ns);
    if (!ns) return false;
    int64_t *old = s->set, oc = s->set_cap;
    s->set = ns;
    s->set_cap = cap;
    s->nvisited = 0;
    for (int64_t i = 0; i < oc; i++)
      if (old[i]) set_insert(s, old[i] - 1);
    free(old);
  }
  int64_t m = s->set_cap - 1;
  for (int64_t h = (int64_t)(mix(idx) & (uint64_t)m);; h = (h + 1) & m) {
    if (s->set[h] == idx + 1) return true;
    if (s->set[h] == 0) {
      s->set[h] = idx + 1;
      s->nvisited++;
      return true;
    }
  }
}

tsl_status tsl_search_new(tsl_search_kind kind, const tsl_config_space *sp, uint64_t seed, tsl_search **out) {
  if (!sp || !out) return tsl_error(TSL_ERR_INVALID, "search: NULL argument");
  *out = NULL;
  int64_t size = tsl_space_size(sp);
  if (size > ((int64_t)1 << 62)) return tsl_error(TSL_ERR_INVALID, "search: space of more than 2^62 configs");
  tsl_search *s = calloc(1, sizeof *s);
  if (!s) return tsl_error(TSL_ERR_NOMEM, "search: out of memory");
  s->kind = kind;
  s->space = *sp;
  s->size = size;
  s->rng = seed * 0x2545F4914F6CDD1DULL + 1;
  s->set_cap = 64;
  s->set = calloc((size_t)s->set_cap, sizeof *s->set);
  tsl_status st = s->set ? TSL_OK : tsl_error(TSL_ERR_NOMEM, "search: out of memory");
  if (st == TSL_OK && (kind == TSL_SEARCH_XGB || kind == TSL_SEARCH_EVOLUTION)) st = tsl_cost_model_new(sp, &s->model);
  if (st != TSL_OK) {
    tsl_search_free(s);
    return st;
  }
  *out = s;
  return TSL_OK;
}

void tsl_search_free(tsl_search *s) {
  if (!s) return;
  free(s->set);
  free(s->hist);
  free(s->hist_cost);
  tsl_cost_model_free(s->model);
  tsl_cost_model_free(s->rerank);
  free(s);
}

tsl_status tsl_search_set_program(tsl_search *s, const tsl_te_program *p, const tsl_template *tpl,
                                  const tsl_target *t) {
  if (!s || !p || !tpl || !t) return tsl_error(TSL_ERR_INVALID, "search: NULL argument");
  if (s->kind != TSL_SEARCH_XGB && s->kind != TSL_SEARCH_EVOLUTION) return TSL_OK;
  tsl_cost_model_free(s->rerank);
  s->rerank = NULL;
  tsl_status st = tsl_cost_model_new(&s->space, &s->rerank);
  if (st == TSL_OK) st = tsl_cost_model_set_program(s->rerank, p, tpl, t);
  if (st != TSL_OK) {
    tsl_cost_model_free(s->rerank);
    s->rerank = NULL;
  }
  return st;
}

void tsl_search_mark_visited(tsl_search *s, const tsl_config *c) {
  int64_t idx = tsl_config_index(&s->space, c);
  if (idx >= 0) set_insert(s, idx);
}

int64_t tsl_search_remaining(const tsl_search *s) { return s->size - s->nvisited; }

/* A random unvisited index, or -1 when none is left. */
static int64_t random_unvisited(tsl_search *s) {
  if (s->nvisited >= s->size) return -1;
  if (s->nvisited * 2 < s->size)
    for (int tries = 0; tries < 64; tries++) {
      int64_t i = rand_below(&s->rng, s->size);
      if (!set_has(s, i)) return i;
    }
  /* dense: scan from a random start */
  int64_t start = rand_below(&s->rng, s->size);
  for (int64_t k = 0; k < s->size; k++) {
    int64_t i = (start + k) % s->size;
    if (!set_has(s, i)) return i;
  }
  return -1;
}

/* Whether the space's first knob picks the auto-scheduler's sketch (tuner/autosched.h):
 * its other knobs mean something else under each sketch. */
static bool sketch_space(const tsl_search *s) {
  return s->space.nknobs > 1 && strcmp(s->space.knobs[0].name, "sketch") == 0 &&
         s->space.knobs[0].nvalues <= SKETCH_VALUES;
}

/* The position of c's sketch among the sketch knob's values (-1 when absent). */
static int sketch_of(const tsl_search *s, const tsl_config *c) {
  const tsl_knob *kn = &s->space.knobs[0];
  for (int v = 0; v < kn->nvalues; v++)
    if (kn->values[v] == c->values[0]) return v;
  return -1;
}

static int take(tsl_search *s, int64_t idx, tsl_config *out) {
  if (idx < 0 || set_has(s, idx) || !set_insert(s, idx)) return 0;
  if (tsl_config_from_index(&s->space, idx, out) != TSL_OK) return 0;
  int v = sketch_space(s) ? sketch_of(s, out) : -1;
  if (v >= 0) s->sketch_taken[v]++;
  return 1;
}

/* A random unvisited index; in a sketch space one of the sketch taken least so far
 * (ties at random): uniform draws over the whole space leave a sketch with 2 of the
 * first 8 trials, and one bad draw of a structure that needs the right tile sizes
 * (tile_pack's register tile) then keeps the model from ever proposing it again. */
static int64_t random_stratified(tsl_search *s) {
  if (!sketch_space(s)) return random_unvisited(s);
  const tsl_knob *kn = &s->space.knobs[0];
  int least[SKETCH_VALUES], nleast = 0;
  for (int v = 0; v < kn->nvalues; v++) {
    if (nleast > 0 && s->sketch_taken[v] > s->sketch_taken[least[0]]) continue;
    if (nleast > 0 && s->sketch_taken[v] < s->sketch_taken[least[0]]) nleast = 0;
    least[nleast++] = v;
  }
  int v = least[rand_below(&s->rng, nleast)];
  for (int tries = 0; tries < 64 && s->nvisited < s->size; tries++) {
    tsl_config c;
    if (tsl_config_from_index(&s->space, rand_below(&s->rng, s->size), &c) != TSL_OK) break;
    c.values[0] = kn->values[v];
    int64_t i = tsl_config_index(&s->space, &c);
    if (i >= 0 && !set_has(s, i)) return i;
  }
  return random_unvisited(s);
}

/* Simulated annealing on the model's scores: returns up to n unvisited indices of the
 * best predicted configs met on the walk. */
static int sa_propose(tsl_search *s, int64_t *best_idx, int n) {
  tsl_config pts[SA_POINTS], cand[SA_POINTS];
  float score[SA_POINTS], cscore[SA_POINTS];
  int np = 0;
  /* start from the best measured configs and random ones */
  for (int i = 0; i < s->nhist && np < SA_POINTS / 4; i++)
    if (isfinite(s->hist_cost[i])) pts[np++] = s->hist[i];
  while (np < SA_POINTS) tsl_config_from_index(&s->space, rand_below(&s->rng, s->size), &pts[np++]);
  if (tsl_cost_model_predict(s->model, pts, np, score) != TSL_OK) return 0;
  int nbest = 0;
  float bscore[512];
  /* proposals met so far (index + 1; 0 empty): a walk meets the same config often */
  enum { SEEN_CAP = 1 << 14 };
  int64_t *seen = calloc(SEEN_CAP, sizeof *seen);
  if (!seen) return 0;
  int nseen = 0;
  int cap = n < 512 ? n : 512;
  double temp = 1.0;
  for (int step = 0; step < SA_STEPS; step++, temp *= 0.95) {
    for (int i = 0; i < np; i++) {
      cand[i] = pts[i];
      int k = (int)rand_below(&s->rng, s->space.nknobs);
      if (s->space.nknobs > 0)
        cand[i].values[k] = s->space.knobs[k].values[rand_below(&s->rng, s->space.knobs[k].nvalues)];
    }
    if (tsl_cost_model_predict(s->model, cand, np, cscore) != TSL_OK) break;
    for (int i = 0; i < np; i++) {
      double d = (double)cscore[i] - (double)score[i];
      if (d >= 0 || rand_unit(&s->rng) < exp(d / (temp * 0.05 + 1e-9))) {
        pts[i] = cand[i];
        score[i] = cscore[i];
      }
      int64_t idx = tsl_config_index(&s->space, &cand[i]);
      if (idx < 0 || set_has(s, idx)) continue;
      uint64_t h = mix(idx) & (SEEN_CAP - 1);
      while (seen[h] && seen[h] != idx + 1) h = (h + 1) & (SEEN_CAP - 1);
      if (seen[h]) continue;
      if (nseen < SEEN_CAP / 2) {
        seen[h] = idx + 1;
        nseen++;
      } else {
        bool dup = false;
        for (int j = 0; j < nbest && !dup; j++) dup = best_idx[j] == idx;
        if (dup) continue;
      }
      if (nbest < cap) {
        best_idx[nbest] = idx;
        bscore[nbest++] = cscore[i];
      } else {
        int worst = 0;
        for (int j = 1; j < nbest; j++)
          if (bscore[j] < bscore[worst]) worst = j;
        if (cscore[i] > bscore[worst]) {
          best_idx[worst] = idx;
          bscore[worst] = cscore[i];
        }
      }
    }
  }
  free(seen);
  /* best first */
  for (int i = 0; i < nbest; i++)
    for (int j = i + 1; j < nbest; j++)
      if (bscore[j] > bscore[i]) {
        float t = bscore[i];
        bscore[i] = bscore[j];
        bscore[j] = t;
        int64_t u = best_idx[i];
        best_idx[i] = best_idx[j];
        best_idx[j] = u;
      }
  return nbest;
}

/* Sorts n scores, best (highest) first, and the n items of item_size bytes beside them
 * (an insertion sort: stable, and n is a search batch, at most a few hundred). */
static void sort_by_score(float *score, void *items, size_t item_size, int n) {
  unsigned char tmp[sizeof(tsl_config)], *it = items;
  if (item_size > sizeof tmp) return;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && score[j] > score[j - 1]; j--) {
      float t = score[j];
      score[j] = score[j - 1];
      score[j - 1] = t;
      memcpy(tmp, it + (size_t)j * item_size, item_size);
      memcpy(it + (size_t)j * item_size, it + (size_t)(j - 1) * item_size, item_size);
      memcpy(it + (size_t)(j - 1) * item_size, tmp, item_size);
    }
}

/* Sorts the n proposals idx by the IR-feature model's scores, best first (on a model
 * error the order stays the annealing's). */
static void rerank_best(tsl_search *s, int64_t *idx, int n) {
  tsl_config *c = malloc(sizeof *c * (size_t)n);
  float *score = malloc(sizeof *score * (size_t)n);
  bool ok = c && score;
  for (int i = 0; ok && i < n; i++) ok = tsl_config_from_index(&s->space, idx[i], &c[i]) == TSL_OK;
  if (ok && tsl_cost_model_predict(s->rerank, c, n, score) == TSL_OK) sort_by_score(score, idx, sizeof idx[0], n);
  tsl_clear_error();
  free(c);
  free(score);
}

/* ---- evolution (Ansor, Zheng et al., OSDI 2020, section 5.1) ---- */

/* Measured sketches other than the best one whose best cost is within this factor of
 * the best: each gets its own share of the model's proposals. A structure such as a
 * packed register tile measures far from its optimum at most of its knob values (a
 * 1024^3 matmul: tile_pack's first 9 draws at best 1.43x the leading sketch's best,
 * while its refined configs were the fastest of an earlier tune), and a population
 * scored by one model over all sketches converges on the leader within a batch (256
 * trials once gave tile_pack 15, 6 of them after the first batch). */
#define SKETCH_LIVE_RATIO 2.0

/* The live sketches (SKETCH_LIVE_RATIO; positions in the sketch knob, best first, the
 * leader's excluded) into live; returns their count. */
static int live_sketches(const tsl_search *s, int *live) {
  bool seen[SKETCH_VALUES] = {false};
  int n = 0;
  double best = INFINITY;
  /* hist is sorted best first: each sketch's first appearance is its best */
  for (int i = 0; i < s->nhist && isfinite(s->hist_cost[i]); i++) {
    int v = sketch_of(s, &s->hist[i]);
    if (v < 0 || seen[v]) continue;
    seen[v] = true;
    if (!isfinite(best)) best = s->hist_cost[i];
    else if (s->hist_cost[i] <= SKETCH_LIVE_RATIO * best) live[n++] = v;
  }
  return n;
}

/* Whether configs a and b may be crossed: same structure. A space whose first knob is
 * "sketch" (the auto-scheduler's, tuner/autosched.h) gives the other knobs their meaning
 * per sketch, so only parents of one sketch are crossed; any other space's knobs mean
 * the same in every config. */
static bool crossable(const tsl_search *s, const tsl_config *a, const tsl_config *b) {
  return s->space.nknobs > 1 && (strcmp(s->space.knobs[0].name, "sketch") != 0 || a->values[0] == b->values[0]);
}

/* The index of one of pop's n members by a tournament of two (the higher score wins). */
static int tournament(tsl_search *s, const float *score, int n) {
  int a = (int)rand_below(&s->rng, n), b = (int)rand_below(&s->rng, n);
  return score[a] >= score[b] ? a : b;
}

/* One knob of c changed: a split or reorder knob to a neighbouring candidate half the
 * time (a tile size one divisor away), else to any candidate. */
static void mutate(tsl_search *s, tsl_config *c) {
  int k = (int)rand_below(&s->rng, s->space.nknobs);
  const tsl_knob *kn = &s->space.knobs[k];
  if (kn->nvalues < 2) return;
  int at = 0;
  while (at < kn->nvalues && kn->values[at] != c->values[k]) at++;
  int to;
  if (rand_below(&s->rng, 2) == 0 && at < kn->nvalues) to = at + (rand_below(&s->rng, 2) ? 1 : -1);
  else to = (int)rand_below(&s->rng, kn->nvalues);
  if (to < 0) to = 1;
  if (to >= kn->nvalues) to = kn->nvalues - 2;
  c->values[k] = kn->values[to];
}

/* Keeps the best n of the m scored configs c (by score, one per index) in place; returns n'. */
static int select_best(const tsl_search *s, tsl_config *c, float *score, int m, int n) {
  sort_by_score(score, c, sizeof c[0], m);
  int k = 0;
  for (int i = 0; i < m && k < n; i++) {
    int64_t idx = tsl_config_index(&s->space, &c[i]);
    bool dup = false;
    for (int j = 0; j < k && !dup; j++) dup = tsl_config_index(&s->space, &c[j]) == idx;
    if (dup) continue;
    c[k] = c[i];
    score[k++] = score[i];
  }
  return k;
}

/* Evolution guided by the cost model (the IR-feature one when the search has the
 * program): a population of the best measured configs and random ones; each generation
 * makes EVO_POP children by tournament selection, crossover of two parents (each knob
 * from either, when crossable) and mutation, scores them and keeps the best EVO_POP of
 * parents and children. Returns up to n unvisited indices of the best scored configs
 * met, best first. In a sketch space, pin >= 0 keeps every member in that sketch (the
 * position of its value in the sketch knob): the population starts from its measured
 * configs and its children stay in it. */
static int evo_propose(tsl_search *s, int64_t *best_idx, int n, int pin) {
  tsl_cost_model *m = s->rerank && tsl_cost_model_trained(s->rerank) ? s->rerank : s->model;
  tsl_config *pop = malloc(sizeof *pop * 2 * EVO_POP);
  float *score = malloc(sizeof *score * 2 * EVO_POP);
  tsl_config *met = malloc(sizeof *met * (EVO_GENERATIONS + 1) * EVO_POP);
  float *met_score = malloc(sizeof *met_score * (EVO_GENERATIONS + 1) * EVO_POP);
  int np = 0, nmet = 0, got = 0;
  if (!pop || !score || !met || !met_score) goto out;
  /* in a sketch space, the best measured config of each sketch first: every structure
   * keeps a parent to refine (Ansor samples its population per sketch) */
  bool seen[SKETCH_VALUES] = {false};
  if (pin >= 0 && !sketch_space(s)) pin = -1;
  int64_t pinned = pin >= 0 ? s->space.knobs[0].values[pin] : 0;
  for (int i = 0; sketch_space(s) && pin < 0 && i < s->nhist && np < EVO_POP / 4; i++) {
    int v = sketch_of(s, &s->hist[i]);
    if (v >= 0 && !seen[v] && isfinite(s->hist_cost[i])) seen[v] = true, pop[np++] = s->hist[i];
  }
  for (int i = 0; i < s->nhist && np < EVO_POP / 2; i++)
    if (isfinite(s->hist_cost[i]) && (pin < 0 || s->hist[i].values[0] == pinned)) pop[np++] = s->hist[i];
  while (np < EVO_POP) {
    tsl_config_from_index(&s->space, rand_below(&s->rng, s->size), &pop[np]);
    if (pin >= 0) pop[np].values[0] = pinned;
    np++;
  }
  if (tsl_cost_model_predict(m, pop, np, score) != TSL_OK) goto out;
  for (int g = 0; g < EVO_GENERATIONS; g++) {
    tsl_config *kids = pop + np;
    for (int i = 0; i < EVO_POP; i++) {
      tsl_config c = pop[tournament(s, score, np)];
      const tsl_config *b = &pop[tournament(s, score, np)];
      bool crossed = false;
      if (rand_below(&s->rng, 2) == 0 && crossable(s, &c, b))
        for (int k = 0; k < s->space.nknobs; k++)
          if (rand_below(&s->rng, 2)) crossed |= c.values[k] != b->values[k], c.values[k] = b->values[k];
      if (!crossed || rand_below(&s->rng, 4) != 0) mutate(s, &c);
      if (pin >= 0) c.values[0] = pinned;
      kids[i] = c;
    }
    if (tsl_cost_model_predict(m, kids, EVO_POP, score + np) != TSL_OK) break;
    for (int i = 0; i < EVO_POP; i++) {
      int64_t idx = tsl_config_index(&s->space, &kids[i]);
      if (idx < 0 || set_has(s, idx)) continue;
      met[nmet] = kids[i];
      met_score[nmet++] = score[np + i];
    }
    np = select_best(s, pop, score, np + EVO_POP, EVO_POP);
  }
  nmet = select_best(s, met, met_score, nmet, n);
  for (int i = 0; i < nmet; i++) best_idx[got++] = tsl_config_index(&s->space, &met[i]);
out:
  tsl_clear_error();
  free(pop);
  free(score);
  free(met);
  free(met_score);
  return got;
}

int tsl_search_next(tsl_search *s, tsl_config *out, int n) {
  if (!s || !out || n <= 0) return 0;
  int got = 0;
  if (s->kind == TSL_SEARCH_GRID) {
    while (got < n && s->grid_next < s->size) got += take(s, s->grid_next++, &out[got]);
    return got;
  }
  if (s->kind == TSL_SEARCH_XGB && tsl_cost_model_trained(s->model) && s->nhist >= EARLY_RANDOM) {
    int nmodel = n - (int)(n * SA_EPS);
    int64_t idx[512];
    bool rerank = s->rerank && tsl_cost_model_trained(s->rerank);
    int want = rerank ? RERANK * nmodel : nmodel;
    int np = sa_propose(s, idx, want < 512 ? want : 512);
    if (rerank && np > nmodel) rerank_best(s, idx, np);
    for (int i = 0; i < np && got < nmodel; i++) got += take(s, idx[i], &out[got]);
  }
  if (s->kind == TSL_SEARCH_EVOLUTION && tsl_cost_model_trained(s->model) && s->nhist >= EARLY_RANDOM) {
    /* at least one random config per batch of two or more (a batch of 8 has no 10%) */
    int nrand = (int)(n * SA_EPS);
    int nmodel = n - (n > 1 && nrand < 1 ? 1 : nrand);
    int64_t idx[512];
    /* in a sketch space, a share for each other sketch within reach of the best */
    int live[SKETCH_VALUES], nlive = sketch_space(s) ? live_sketches(s, live) : 0;
    int quota = nlive > 0 ? nmodel / (2 * (nlive + 1)) : 0;
    if (nlive > 0 && quota < 1) quota = 1;
    for (int j = 0; j < nlive && got + quota <= nmodel / 2; j++) {
      int np = evo_propose(s, idx, quota < 512 ? quota : 512, live[j]), mine = 0;
      for (int i = 0; i < np && mine < quota; i++) mine += take(s, idx[i], &out[got + mine]);
      got += mine;
    }
    int np = got < nmodel ? evo_propose(s, idx, nmodel - got < 512 ? nmodel - got : 512, -1) : 0;
    for (int i = 0; i < np && got < nmodel; i++) got += take(s, idx[i], &out[got]);
  }
  while (got < n) {
    int64_t i = random_stratified(s);
    if (i < 0) break;
    got += take(s, i, &out[got]);
  }
  return got;
}

tsl_status tsl_search_update(tsl_search *s, const tsl_config *c, const double *costs, int n) {
  if (!s || (n > 0 && (!c || !costs))) return tsl_error(TSL_ERR_INVALID, "search: NULL argument");
  if ((s->kind != TSL_SEARCH_XGB && s->kind != TSL_SEARCH_EVOLUTION) || n <= 0) return TSL_OK;
  if (s->nhist + n > s->hist_cap) {
    int cap = (s->nhist + n) * 2;
    tsl_config *h = realloc(s->hist, sizeof *h * (size_t)cap);
    if (!h) return tsl_error(TSL_ERR_NOMEM, "search: out of memory");
    s->hist = h;
    double *hc = realloc(s->hist_cost, sizeof *hc * (size_t)cap);
    if (!hc) return tsl_error(TSL_ERR_NOMEM, "search: out of memory");
    s->hist_cost = hc;
    s->hist_cap = cap;
  }
  for (int i = 0; i < n; i++) {
    s->hist[s->nhist] = c[i];
    s->hist_cost[s->nhist++] = costs[i];
  }
  /* best measured first, so SA starts from them */
  for (int i = 1; i < s->nhist; i++)
    for (int j = i; j > 0 && s->hist_cost[j] < s->hist_cost[j - 1]; j--) {
      tsl_config t = s->hist[j];
      s->hist[j] = s->hist[j - 1];
      s->hist[j - 1] = t;
      double u = s->hist_cost[j];
      s->hist_cost[j] = s->hist_cost[j - 1];
      s->hist_cost[j - 1] = u;
    }
  tsl_status st = tsl_cost_model_fit(s->model, s->hist, s->hist_cost, s->nhist);
  if (st == TSL_OK && s->rerank) st = tsl_cost_model_fit(s->rerank, s->hist, s->hist_cost, s->nhist);
  return st;
}
