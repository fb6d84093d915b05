/* The static cost model (cost_static.h). */
#include "tuner/cost_static.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/machine.h"
#include "tuner/ir_features.h"
#include "tuner/mca.h"
#include "tuner/mca_proxy.h"

enum { MCA_ITERATIONS = 100, MAX_PARENTS = 16, NAME_LEN = 128 };
#define MCA_TIMEOUT_S 20.0

/* Sources: docs/cost_static.md. */
static const tsl_cpu_figures figures[] = {
    {"cortex-a53", 1.2, 4, 8, 2.5, "Raspberry Pi 3 B (BCM2837)"},
    {"cortex-a55", 1.8, 4, 16, 8, "Rockchip RK3566 boards"},
    {"cortex-a72", 1.5, 4, 16, 4, "Raspberry Pi 4 B (BCM2711)"},
    {"cortex-a76", 2.4, 4, 32, 10, "Raspberry Pi 5 (BCM2712)"},
    {"neoverse-n1", 2.5, 64, 32, 100, "AWS Graviton2 (c6g.16xlarge)"},
    {"znver3", 3.7, 8, 32, 40, "AMD Zen 3 desktop/server core"},
    {"znver4", 4.0, 8, 32, 60, "AMD Zen 4 desktop/server core"},
    {"znver5", 3.26, 2, 64, 49, "AMD EPYC Zen 5 VM, 2 cores (shared/anchors.md)"},
    {"x86-64-v3", 3.0, 8, 32, 30, "a generic AVX2 machine"},
    {"x86-64-v4", 3.0, 8, 64, 40, "a generic AVX-512 machine"},
};
static const tsl_cpu_figures fallback_x86 = {"", 3.0, 8, 32, 30, "an unknown x86-64 machine"};
static const tsl_cpu_figures fallback_arm = {"", 2.0, 4, 16, 8, "an unknown AArch64 board"};

const tsl_cpu_figures *tsl_cost_static_figures(const tsl_target *t, int *cores) {
  const tsl_cpu_figures *f = t && t->arch == TSL_ARCH_AARCH64 ? &fallback_arm : &fallback_x86;
  for (size_t i = 0; t && i < sizeof figures / sizeof figures[0]; i++)
    if (strcmp(figures[i].cpu, t->cpu) == 0) f = &figures[i];
  if (cores) {
    *cores = f->cores;
    long n = t && t->is_host ? sysconf(_SC_NPROCESSORS_ONLN) : 0;
    if (n > 0) *cores = (int)n;
  }
  return f;
}

tsl_status tsl_cost_static_check(const tsl_target *t) {
  if (!t) return tsl_error(TSL_ERR_INVALID, "static cost: NULL target");
  return tsl_mca_check(t->triple, t->cpu);
}

tsl_status tsl_cost_static_block_cycles(const tsl_target *t, const char *block, double *cycles) {
  if (!t || !block || !cycles) return tsl_error(TSL_ERR_INVALID, "static cost: NULL argument");
  return tsl_mca_block_cycles(t->triple, t->cpu, block, MCA_ITERATIONS, MCA_TIMEOUT_S, cycles);
}

/* ---- the assembly's loops ---- */

typedef struct asm_label {
  char label[32];       /* "BB0_2" (the ".L" dropped: how loop comments name it); "" for a
                           block without a label ("%bb.N", entered by falling through) */
  char irname[NAME_LEN]; /* the IR block name from the block line's comment, "" if none */
  char function[NAME_LEN];
  int line, end;        /* its lines [line, end) */
  bool header, inner;
  char in_loop[32];     /* "in Loop: Header=BBf_n": the innermost loop holding it */
  int nparents;
  int parents[MAX_PARENTS]; /* indices of the enclosing loops' header labels */
  char parent_names[MAX_PARENTS][32];
} asm_label;

typedef struct asm_text {
  char **lines;
  int nlines;
  asm_label *labels; /* every block, in layout order */
  int nlabels;
} asm_text;

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
  return s;
}

/* The comment of a line ("#" on x86, "//" on AArch64), or NULL. */
static char *comment_of(char *s, tsl_arch arch) {
  return arch == TSL_ARCH_AARCH64 ? strstr(s, "//") : strchr(s, '#');
}

static void copy_token(char *dst, size_t n, const char *src) {
  size_t len = 0;
  while (src[len] && !isspace((unsigned char)src[len])) len++;
  if (len >= n) len = n - 1;
  memcpy(dst, src, len);
  dst[len] = '\0';
}

/* Whether line s (trimmed) is a function's label "name:" (its comment c, or NULL). */
static bool is_function_label(const char *s, const char *c) {
  const char *colon = strchr(s, ':');
  return s[0] && s[0] != '.' && s[0] != '#' && s[0] != '/' && colon && (!c || colon < c) &&
         (colon[1] == '\0' || isspace((unsigned char)colon[1]));
}

/* Starts a block at line ln; NULL when out of memory. */
static asm_label *new_block(asm_text *a, int *cap, int ln, const char *function) {
  if (a->nlabels == *cap) {
    *cap = *cap ? 2 * *cap : 64;
    asm_label *g = realloc(a->labels, sizeof *g * (size_t)*cap);
    if (!g) return NULL;
    a->labels = g;
  }
  asm_label *b = &a->labels[a->nlabels++];
  memset(b, 0, sizeof *b);
  snprintf(b->function, sizeof b->function, "%s", function);
  b->line = b->end = ln;
  return b;
}

/* Splits text into lines (in place) and finds the blocks and their loop comments. */
static tsl_status parse_asm(char *text, tsl_arch arch, asm_text *a) {
  memset(a, 0, sizeof *a);
  int cap = 0, lcap = 0;
  char function[NAME_LEN] = "";
  asm_label *cur = NULL;
  for (char *p = text; p && *p;) {
    char *nl = strchr(p, '\n');
    if (nl) *nl = '\0';
    if (a->nlines == cap) {
      cap = cap ? 2 * cap : 1024;
      char **g = realloc(a->lines, sizeof *g * (size_t)cap);
      if (!g) return tsl_error(TSL_ERR_NOMEM, "static cost: out of memory");
      a->lines = g;
    }
    int ln = a->nlines++;
    char *s = trim(p);
    a->lines[ln] = s;
    p = nl ? nl + 1 : NULL;
    char *c = comment_of(s, arch);
    if (cur) cur->end = ln + 1;
    if (is_function_label(s, c)) {
      copy_token(function, sizeof function, s);
      char *colon = strchr(function, ':');
      if (colon) *colon = '\0';
      cur = NULL; /* the entry block: no loop */
      continue;
    }
    bool labelled = strncmp(s, ".LBB", 4) == 0 && strchr(s, ':');
    if (labelled || (c && s == c && strncmp(c + (arch == TSL_ARCH_AARCH64 ? 2 : 1), " %bb.", 5) == 0)) {
      if (!(cur = new_block(a, &lcap, ln, function))) return tsl_error(TSL_ERR_NOMEM, "static cost: out of memory");
      cur->end = ln + 1;
      if (labelled) {
        copy_token(cur->label, sizeof cur->label, s + 2);
        char *colon = strchr(cur->label, ':');
        if (colon) *colon = '\0';
      }
      /* the IR name: "%name" in the (last) comment of the block line */
      char *pct = c ? strrchr(c, '%') : NULL;
      if (pct && strncmp(pct, "%bb.", 4) != 0) copy_token(cur->irname, sizeof cur->irname, pct + 1);
    }
    if (!c || !cur) continue;
    char *pl = strstr(c, "Parent Loop ");
    if (pl && cur->nparents < MAX_PARENTS) copy_token(cur->parent_names[cur->nparents++], 32, pl + 12);
    if (strstr(c, "This Inner Loop Header")) cur->header = cur->inner = true;
    else if (strstr(c, "This Loop Header")) cur->header = true;
    char *il = strstr(c, "in Loop: Header=");
    if (il) copy_token(cur->in_loop, sizeof cur->in_loop, il + 16);
  }
  for (int i = 0; i < a->nlabels; i++)
    for (int k = 0; k < a->labels[i].nparents; k++) {
      a->labels[i].parents[k] = -1;
      for (int j = 0; j < a->nlabels; j++)
        if (a->labels[j].label[0] && strcmp(a->labels[j].label, a->labels[i].parent_names[k]) == 0)
          a->labels[i].parents[k] = j;
    }
  return TSL_OK;
}

static bool is_instruction(const char *s, tsl_arch arch) {
  if (!s[0] || s[0] == '.' || s[0] == '#' || (s[0] == '/' && s[1] == '/')) return false;
  return !is_function_label(s, comment_of((char *)s, arch));
}

/* The body of innermost loop h: the instructions of its header block and of every
 * block "in Loop: Header=" it, in layout order (the loop's top may precede its header),
 * joined with newlines into *out (malloc'd). */
static tsl_status loop_body(const asm_text *a, const asm_label *h, tsl_arch arch, char **out) {
  size_t len = 1;
  for (int ln = 0; ln < a->nlines; ln++) len += strlen(a->lines[ln]) + 1;
  char *b = malloc(len), *w = b;
  if (!b) return tsl_error(TSL_ERR_NOMEM, "static cost: out of memory");
  for (int k = 0; k < a->nlabels; k++) {
    const asm_label *q = &a->labels[k];
    if (q != h && (strcmp(q->function, h->function) != 0 || strcmp(q->in_loop, h->label) != 0)) continue;
    for (int ln = q->line + 1; ln < q->end; ln++) {
      const char *s = a->lines[ln];
      if (!is_instruction(s, arch)) continue;
      const char *c = comment_of((char *)s, arch);
      size_t n = c ? (size_t)(c - s) : strlen(s);
      while (n > 0 && isspace((unsigned char)s[n - 1])) n--;
      memcpy(w, s, n);
      w += n;
      *w++ = '\n';
    }
  }
  *w = '\0';
  if (w == b) {
    free(b);
    return tsl_error(TSL_ERR_CODEGEN, "no instructions");
  }
  *out = b;
  return TSL_OK;
}

/* ---- names: IR blocks to loop-IR loops ---- */

/* Whether IR block name `block` comes from loop variable `var`: equal, or var followed
 * by LLVM's suffixes (".us", ".preheader", digits of a uniquified name, ...). */
static bool name_from(const char *block, const char *var) {
  size_t n = strlen(var);
  if (n == 0 || strncmp(block, var, n) != 0) return false;
  char c = block[n];
  return c == '\0' || c == '.' || isdigit((unsigned char)c);
}

/* The loop-IR loop (nest, level) whose variable names block best (the longest name). */
static bool find_var(const tsl_ir_nest *nests, int nn, const char *block, int *nest, int *level) {
  size_t best = 0;
  for (int i = 0; i < nn; i++)
    for (int l = 0; l < nests[i].depth; l++) {
      const char *v = nests[i].names[l];
      if (v && strlen(v) > best && name_from(block, v)) {
        best = strlen(v);
        *nest = i;
        *level = l;
      }
    }
  return best > 0;
}

static double ir_trip(const tsl_llvm_loop *loops, int nloops, const char *function, const char *header) {
  for (int i = 0; i < nloops; i++)
    if (loops[i].header[0] && strcmp(loops[i].header, header) == 0 && strcmp(loops[i].function, function) == 0)
      return loops[i].trip > 0 ? (double)loops[i].trip : -1;
  return -1;
}

/* ---- the memory term ---- */

/* Bytes brought into a cache of `capacity` bytes by nest n (docs/cost_static.md,
 * "Memory"): L* is the largest level whose footprint fits half the cache; per buffer,
 * its footprint over L* times the iterations of each loop outside L*, except a loop the
 * buffer's accesses do not depend on whose one iteration's footprint (all buffers) fits
 * half the cache: there the buffer stays cached from one iteration to the next and is
 * brought in once (self-temporal reuse within the localized iteration space: Wolf and
 * Lam, "A Data Locality Optimizing Algorithm", PLDI 1991, section 4). */
double tsl_cost_static_fill_bytes(const tsl_ir_nest *n, double capacity) {
  int best = 0;
  for (int L = 0; L <= n->depth; L++)
    if (n->bytes[L] <= capacity / 2) best = L;
  double total = 0;
  for (int k = 0; k < n->nbufs; k++) {
    double b = n->buf_bytes[k][best];
    for (int L = best + 1; L <= n->depth; L++) {
      int l = n->depth - L; /* the loop of level L, as names: outermost first */
      bool invariant = l < 64 && !((n->buf_deps[k] >> l) & 1);
      if (!(invariant && n->bytes[L - 1] <= capacity / 2)) b *= n->extents[l] * n->share[l];
    }
    total += b;
  }
  return total;
}

/* ---- the per-candidate cache ---- */

enum { CACHE_SLOTS = 4096 };
typedef struct cslot {
  uint64_t key;
  tsl_cost_static_detail d;
  bool used;
} cslot;
static cslot cache[CACHE_SLOTS];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t fnv(uint64_t h, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull;
}

static uint64_t candidate_key(const tsl_func *f, const tsl_target *t, int cores) {
  char *text = tsl_stmt_to_string(f->body);
  char head[200];
  snprintf(head, sizeof head, "%s|%s|%s|%d|", TSL_COST_STATIC_MODEL, t->triple, t->cpu, cores);
  uint64_t h = fnv(fnv(1469598103934665603ull, head, strlen(head)), t->features, strlen(t->features));
  if (text) h = fnv(h, text, strlen(text));
  free(text);
  return text ? h : 0;
}

static bool cache_get(uint64_t key, tsl_cost_static_detail *d) {
  if (!key) return false;
  pthread_mutex_lock(&cache_lock);
  cslot *s = &cache[key % CACHE_SLOTS];
  bool hit = s->used && s->key == key;
  if (hit) *d = s->d;
  pthread_mutex_unlock(&cache_lock);
  return hit;
}

static void cache_put(uint64_t key, const tsl_cost_static_detail *d) {
  if (!key) return;
  pthread_mutex_lock(&cache_lock);
  cache[key % CACHE_SLOTS] = (cslot){key, *d, true};
  pthread_mutex_unlock(&cache_lock);
}

/* ---- the estimate ---- */

/* TSL_DEBUG=static (or a list containing it): the assembly and every loop's figures on
 * stderr. */
static bool debug_on(void) {
  const char *d = getenv("TSL_DEBUG");
  return d && strstr(d, "static");
}

typedef struct estimate {
  const tsl_target *t;
  const tsl_cpu_figures *fig;
  asm_text a;
  tsl_llvm_loop *loops;
  int nloops;
  tsl_ir_nest *nests;
  int nn;
  double *nest_cycles; /* per nest: cycles of the loops mapped to it */
  double unmapped_cycles;
} estimate;

/* The level of nest n whose variable names block best (the longest name), or -1. */
static int level_in(const tsl_ir_nest *n, const char *block) {
  size_t best = 0;
  int level = -1;
  for (int l = 0; l < n->depth; l++) {
    const char *v = n->names[l];
    if (v && strlen(v) > best && name_from(block, v)) {
      best = strlen(v);
      level = l;
    }
  }
  return level;
}

/* The loop chain of label h (h, then its enclosing loops' headers) into chain[]. */
static int chain_of(const estimate *e, int h, int chain[MAX_PARENTS + 1]) {
  const asm_label *L = &e->a.labels[h];
  int nc = 0;
  chain[nc++] = h;
  for (int k = 0; k < L->nparents; k++)
    if (L->parents[k] >= 0) chain[nc++] = L->parents[k];
  return nc;
}

/* The loop-IR variable names of h's chain joined (each element the longest name that
 * names its block, "?" for none) into sig. */
static void chain_signature(const estimate *e, int h, char *sig, size_t cap) {
  int chain[MAX_PARENTS + 1], nc = chain_of(e, h, chain);
  size_t used = 0;
  sig[0] = '\0';
  for (int k = 0; k < nc && used + 1 < cap; k++) {
    const asm_label *q = &e->a.labels[chain[k]];
    int ni = -1, li = -1;
    const char *v = q->irname[0] && find_var(e->nests, e->nn, q->irname, &ni, &li) ? e->nests[ni].names[li] : "?";
    int w = snprintf(sig + used, cap - used, "%s/", v);
    if (w < 0) break;
    used += (size_t)w < cap - used ? (size_t)w : cap - used - 1;
  }
}

/* Loop h's IR name without the suffixes LLVM gives the loops it derives from one loop
 * (".epil"/".prol" remainders of unrolling, ".us" of unswitching, ".peel", ...) into
 * out: copies of a nest keep distinct names (LLVM uniquifies them: "t227.i", "t.i"). */
static void loop_identity(const asm_label *L, char *out, size_t cap) {
  snprintf(out, cap, "%s", L->irname);
  static const char *const derived[] = {".epil", ".prol", ".us", ".peel", ".split", ".lver", ".ldist"};
  for (size_t i = 0; i < sizeof derived / sizeof derived[0]; i++) {
    char *c = strstr(out, derived[i]);
    if (c) *c = '\0';
  }
}

/* The nests that hold every named loop of h's chain into cands (at most 64), in program
 * order; returns how many. */
static int nest_candidates(const estimate *e, int h, int cands[64]) {
  int chain[MAX_PARENTS + 1], nc = chain_of(e, h, chain);
  int ncand = 0;
  for (int i = 0; i < e->nn && ncand < 64; i++) {
    bool all = true, any = false;
    for (int k = 0; k < nc && all; k++) {
      const asm_label *q = &e->a.labels[chain[k]];
      int ni = -1, li = -1;
      if (!q->irname[0] || !find_var(e->nests, e->nn, q->irname, &ni, &li)) continue;
      const tsl_ir_nest *n = &e->nests[i];
      bool has = false;
      for (int l = 0; l < n->depth && !has; l++) has = n->names[l] && strcmp(n->names[l], e->nests[ni].names[li]) == 0;
      all = has;
      any = true;
    }
    if (all && any) cands[ncand++] = i;
  }
  return ncand;
}

/* The nest the innermost loop h belongs to: among the nests that hold every named loop
 * of its chain, the k-th for the k-th loop (in program order, counting the loops LLVM
 * derives from one loop once: loop_identity) with the same names. Copies of a nest
 * (a loop partitioned by an `if` into full tiles and a tail) have the same names and
 * differ in their shares (tsl_ir_nest.share); the lowering emits the then-copy first and
 * LLVM mostly keeps that order: this choice is only the nest the loop's cycles are
 * attributed to (step 5's roofline), its count takes the mean share (executions).
 * -1 if none holds them all. */
static int nest_of(const estimate *e, int h, const int *cands, int ncand) {
  if (ncand <= 1) return ncand == 1 ? cands[0] : -1;
  /* the k-th distinct loop among the inner loops of the same names, in program order */
  char sig[512], other[512], self[NAME_LEN], seen[64][NAME_LEN];
  chain_signature(e, h, sig, sizeof sig);
  loop_identity(&e->a.labels[h], self, sizeof self);
  int nseen = 0, occurrence = 0;
  for (int k = 0; k <= h && nseen < 64; k++) {
    const asm_label *q = &e->a.labels[k];
    if (!q->inner || strcmp(q->function, e->a.labels[h].function) != 0) continue;
    chain_signature(e, k, other, sizeof other);
    if (strcmp(other, sig) != 0) continue;
    char id[NAME_LEN];
    loop_identity(q, id, sizeof id);
    int j = 0;
    while (j < nseen && strcmp(seen[j], id) != 0) j++;
    if (j == nseen) snprintf(seen[nseen++], NAME_LEN, "%s", id);
    if (strcmp(id, self) == 0) {
      occurrence = j;
      break;
    }
  }
  return cands[occurrence < ncand ? occurrence : ncand - 1];
}

/* Executions of the loop headed by label index h: its trip count times its parents',
 * in the share of their iterations in which h's nest runs. Which copy of a partitioned
 * nest an assembly loop is cannot be told for sure (LLVM may lay the copies out in any
 * order), so the share is the mean over the copies (the nests that hold h's loops) of
 * each copy's share: the copies' shares of a partition sum to 1, so the partition's
 * loops together count the whole loop, and no copy is counted at a wrong copy's share. */
static double executions(estimate *e, int h, tsl_cost_static_detail *d, int *nest) {
  int chain[MAX_PARENTS + 1], nc = chain_of(e, h, chain);
  int cands[64], ncand = nest_candidates(e, h, cands);
  int ni = nest_of(e, h, cands, ncand);
  double n = 1;
  bool guessed = false, eligible[MAX_PARENTS + 1];
  for (int k = 0; k < nc; k++) {
    const asm_label *q = &e->a.labels[chain[k]];
    int li = ni >= 0 && q->irname[0] ? level_in(&e->nests[ni], q->irname) : -1;
    double ir = q->irname[0] ? ir_trip(e->loops, e->nloops, q->function, q->irname) : -1, trip = ir;
    if (trip < 0 && li >= 0) trip = e->nests[ni].extents[li];
    int oi = -1, ol = -1; /* a loop of another nest (not in the chain's nest) */
    if (trip < 0 && li < 0 && q->irname[0] && find_var(e->nests, e->nn, q->irname, &oi, &ol)) trip = e->nests[oi].extents[ol];
    if (trip < 0) {
      guessed = true;
      trip = 1;
    }
    /* a loop LLVM kept whole (its trip the nest's extent, or unknown: an outlined
     * parallel loop) runs in its share; a loop LLVM split at the guard has its own trip */
    eligible[k] = li >= 0 && (ir < 0 || ir == e->nests[ni].extents[li]);
    n *= trip;
  }
  double share = 0;
  for (int c = 0; c < ncand; c++) {
    double p = 1;
    for (int k = 0; k < nc; k++) {
      if (!eligible[k]) continue;
      int l = level_in(&e->nests[cands[c]], e->a.labels[chain[k]].irname);
      if (l >= 0) p *= e->nests[cands[c]].share[l];
    }
    share += p;
  }
  if (ncand > 0) n *= share / ncand;
  /* the loops of the nest from its parallel loop outwards that the chain does not name
   * run in the caller of the outlined parallel body (the body of a one-iteration chunk
   * has no loop of its own): the body runs their iterations over */
  if (ni >= 0) {
    const tsl_ir_nest *nn = &e->nests[ni];
    int par = -1;
    for (int l = 0; l < nn->depth && par < 0; l++)
      if (nn->kinds[l] == TSL_FOR_PARALLEL) par = l;
    bool in_body = false; /* the chain names a loop inside the parallel one */
    for (int k = 0; k < nc && par >= 0 && !in_body; k++) in_body = level_in(nn, e->a.labels[chain[k]].irname) >= par;
    for (int l = 0; in_body && l <= par; l++) {
      bool named = false;
      for (int k = 0; k < nc && !named; k++) named = level_in(nn, e->a.labels[chain[k]].irname) == l;
      if (named) continue;
      double sh = 0; /* the mean share over the copies, as above */
      for (int c = 0; c < ncand; c++) {
        const tsl_ir_nest *cn = &e->nests[cands[c]];
        int cl = nn->names[l] ? level_in(cn, nn->names[l]) : -1;
        if (cl >= 0 && strcmp(cn->names[cl], nn->names[l]) != 0) cl = -1; /* the same loop, not a prefix */
        sh += cl >= 0 ? cn->share[cl] : 1;
      }
      n *= nn->extents[l] * (ncand > 0 ? sh / ncand : nn->share[l]);
    }
  }
  if (guessed) d->loops_guessed++;
  *nest = ni;
  return n;
}

/* Status st again, its message prefixed with the name of innermost loop h. */
static tsl_status loop_error(const estimate *e, int h, tsl_status st) {
  char why[512];
  snprintf(why, sizeof why, "%s", tsl_last_error());
  const asm_label *L = &e->a.labels[h];
  return tsl_error(st, "loop %s (%%%s) of %s: %s", L->label, L->irname, L->function, why);
}

/* Cycles per iteration of bodies[0..n) into cpi (one llvm-mca run); for a CPU timed
 * with a proxy model (mca_proxy.h) the blocks rewritten for it, a block the tool refuses
 * in its rewritten form timed as it is (one more run per such block). *bad as
 * tsl_mca_blocks_cycles'. */
static tsl_status blocks_cycles(const tsl_target *t, char **bodies, int n, double *cpi, int *bad, int *unproxied) {
  char **proxy = calloc((size_t)n, sizeof *proxy);
  const char **use = calloc((size_t)n, sizeof *use);
  tsl_status st = proxy && use ? TSL_OK : tsl_error(TSL_ERR_NOMEM, "static cost: out of memory");
  for (int i = 0; st == TSL_OK && i < n; i++) {
    st = tsl_mca_proxy_block(t->cpu, bodies[i], &proxy[i]);
    use[i] = proxy[i] ? proxy[i] : bodies[i];
  }
  for (int tries = 0; st == TSL_OK; tries++) {
    *bad = -1;
    st = tsl_mca_blocks_cycles(t->triple, t->cpu, use, n, MCA_ITERATIONS, MCA_TIMEOUT_S, cpi, bad);
    if (st == TSL_OK || *bad < 0 || use[*bad] == bodies[*bad] || tries >= n) break;
    use[*bad] = bodies[*bad]; /* an instruction without a ymm form: time it as it is */
    (*unproxied)++;
    tsl_clear_error();
    st = TSL_OK;
  }
  for (int i = 0; proxy && i < n; i++) free(proxy[i]);
  free(proxy);
  free(use);
  return st;
}

static tsl_status estimate_run(estimate *e, const tsl_func *f, int cores, tsl_cost_static_detail *d) {
  const tsl_target *t = e->t;
  char *text = NULL;
  tsl_status st = tsl_codegen_asm_loops(f, t, &text, &e->loops, &e->nloops);
  if (st == TSL_OK && debug_on()) fprintf(stderr, "static cost: assembly of %s\n%s\n", f->name, text);
  if (st == TSL_OK) st = parse_asm(text, t->arch, &e->a);
  if (st == TSL_OK) st = tsl_ir_nests(f, &e->nests, &e->nn);
  if (st == TSL_OK && !(e->nest_cycles = calloc((size_t)(e->nn > 0 ? e->nn : 1), sizeof *e->nest_cycles)))
    st = tsl_error(TSL_ERR_NOMEM, "static cost: out of memory");
  /* the bodies of all innermost loops, costed in one llvm-mca run */
  int *inner = NULL, ni = 0;
  char **bodies = NULL;
  double *cpi = NULL;
  if (st == TSL_OK) {
    size_t cap = (size_t)(e->a.nlabels > 0 ? e->a.nlabels : 1);
    inner = malloc(sizeof *inner * cap);
    bodies = calloc(cap, sizeof *bodies);
    cpi = calloc(cap, sizeof *cpi);
    if (!inner || !bodies || !cpi) st = tsl_error(TSL_ERR_NOMEM, "static cost: out of memory");
  }
  for (int h = 0; st == TSL_OK && h < e->a.nlabels; h++) {
    if (!e->a.labels[h].inner) continue;
    st = loop_body(&e->a, &e->a.labels[h], t->arch, &bodies[ni]);
    if (st == TSL_OK) inner[ni++] = h;
    else st = loop_error(e, h, st);
  }
  int bad = -1;
  if (st == TSL_OK && ni > 0) st = blocks_cycles(t, bodies, ni, cpi, &bad, &d->loops_unproxied);
  if (st != TSL_OK && bad >= 0) st = loop_error(e, inner[bad], st);
  for (int i = 0; st == TSL_OK && i < ni; i++) {
    int h = inner[i];
    if (debug_on())
      fprintf(stderr, "static cost: loop %s (%%%s): %.4g cycles/iteration of\n%s", e->a.labels[h].label,
              e->a.labels[h].irname, cpi[i], bodies[i]);
    int nest = -1;
    double times = executions(e, h, d, &nest);
    double cycles = cpi[i] * times;
    if (debug_on()) fprintf(stderr, "static cost: loop %s runs %.6g times (nest %d)\n", e->a.labels[h].label, times, nest);
    d->loops++;
    d->cycles += cycles;
    if (nest >= 0) e->nest_cycles[nest] += cycles;
    else {
      e->unmapped_cycles += cycles;
      d->loops_unmapped++;
    }
  }
  for (int i = 0; bodies && i < ni; i++) free(bodies[i]);
  free(bodies);
  free(inner);
  free(cpi);
  free(text);
  if (st != TSL_OK) return st;
  /* the parallel split: the first parallel loop of the loop IR */
  d->parallel = 1;
  for (int i = 0; i < e->nn && d->parallel == 1; i++)
    for (int l = 0; l < e->nests[i].depth; l++)
      if (e->nests[i].kinds[l] == TSL_FOR_PARALLEL) {
        d->parallel = e->nests[i].extents[l] >= 1 ? e->nests[i].extents[l] : 1;
        break;
      }
  d->cores = cores;
  double used = d->parallel < cores ? d->parallel : cores;
  double split = ceil(d->parallel / cores) / d->parallel;
  double hz = e->fig->ghz * 1e9;
  double total = e->unmapped_cycles / hz * split;
  d->compute_s = total;
  for (int i = 0; i < e->nn; i++) {
    const tsl_ir_nest *n = &e->nests[i];
    double l1 = tsl_cost_static_fill_bytes(n, (double)t->l1d_bytes),
           l2 = tsl_cost_static_fill_bytes(n, (double)t->l2_bytes);
    d->l1_fill_bytes += l1;
    d->l2_fill_bytes += l2;
    double mem_l2 = l1 / (e->fig->l2_bytes_per_cycle * hz * used), mem_dram = l2 / (e->fig->dram_gbs * 1e9);
    double mem = mem_l2 > mem_dram ? mem_l2 : mem_dram;
    double comp = e->nest_cycles[i] / hz * split;
    if (debug_on()) {
      fprintf(stderr, "static cost: nest %d: compute %.4g s, memory %.4g s (into L1 %.6g B, into L2 %.6g B); loops", i,
              comp, mem, l1, l2);
      for (int l = 0; l < n->depth; l++) fprintf(stderr, " %s:%g", n->names[l] ? n->names[l] : "?", n->extents[l]);
      fprintf(stderr, "; bytes(L) from the inside");
      for (int L = 0; L <= n->depth; L++) fprintf(stderr, " %.6g", n->bytes[L]);
      fprintf(stderr, "\n");
    }
    d->compute_s += comp;
    d->memory_s += mem;
    total += comp > mem ? comp : mem;
  }
  d->seconds = total > 0 ? total : 1.0 / hz; /* a kernel without loops: one cycle */
  return TSL_OK;
}

tsl_status tsl_cost_static_func(const tsl_func *f, const tsl_target *t, int cores, tsl_cost_static_detail *out) {
  if (!f || !t || !out || cores < 0) return tsl_error(TSL_ERR_INVALID, "static cost: NULL argument or cores < 0");
  memset(out, 0, sizeof *out);
  int fig_cores = 0;
  const tsl_cpu_figures *fig = tsl_cost_static_figures(t, &fig_cores);
  if (cores == 0) cores = fig_cores;
  uint64_t key = candidate_key(f, t, cores);
  if (cache_get(key, out)) {
    out->cached = true;
    return TSL_OK;
  }
  tsl_status st = tsl_cost_static_check(t);
  if (st != TSL_OK) return st;
  estimate e = {.t = t, .fig = fig};
  st = estimate_run(&e, f, cores, out);
  free(e.a.lines);
  free(e.a.labels);
  free(e.loops);
  free(e.nests);
  free(e.nest_cycles);
  if (st == TSL_OK) cache_put(key, out);
  return st;
}

/* Average ranks (1-based) of x into r, O(n^2): n is a layer's candidates. */
static void ranks_of(const double *x, int n, double *r) {
  for (int i = 0; i < n; i++) {
    int less = 0, equal = 0;
    for (int j = 0; j < n; j++) {
      less += x[j] < x[i];
      equal += x[j] == x[i];
    }
    r[i] = less + (equal + 1) / 2.0;
  }
}

double tsl_spearman(const double *a, const double *b, int n) {
  if (!a || !b || n < 2) return 0;
  double *ra = malloc(sizeof *ra * (size_t)n * 2);
  if (!ra) return NAN;
  double *rb = ra + n, mean = (n + 1) / 2.0, sab = 0, saa = 0, sbb = 0;
  ranks_of(a, n, ra);
  ranks_of(b, n, rb);
  for (int i = 0; i < n; i++) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean);
    sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  free(ra);
  return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0;
}
