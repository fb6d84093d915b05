/* llvm-mca as a subprocess (mca.h). */
#include "tuner/mca.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tessel/runtime.h"

const char *tsl_mca_tool(void) {
  const char *e = getenv(TSL_MCA_ENV);
  return e && *e ? e : TSL_MCA_DEFAULT;
}

/* ---- cache: FNV-1a keyed, open addressing, process-wide ---- */

enum { CACHE_SLOTS = 8192 };
typedef struct slot {
  uint64_t key;
  double cycles;
  bool used;
} slot;
static slot cache[CACHE_SLOTS];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static tsl_mca_entry journal[CACHE_SLOTS]; /* entries in the order added (the first CACHE_SLOTS) */
static int njournal;

static uint64_t fnv(uint64_t h, const char *s) {
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return (h ^ 0xff) * 1099511628211ull; /* separator: ("ab","c") != ("a","bc") */
}

static bool cache_get(uint64_t key, double *v) {
  pthread_mutex_lock(&cache_lock);
  bool hit = false;
  for (int i = 0; i < 16; i++) {
    slot *s = &cache[(key + (uint64_t)i) % CACHE_SLOTS];
    if (!s->used) break;
    if (s->key == key) {
      *v = s->cycles;
      hit = true;
      break;
    }
  }
  pthread_mutex_unlock(&cache_lock);
  return hit;
}

static void cache_put(uint64_t key, double v) {
  pthread_mutex_lock(&cache_lock);
  slot *s = &cache[key % CACHE_SLOTS];
  for (int i = 0; i < 16; i++) {
    slot *q = &cache[(key + (uint64_t)i) % CACHE_SLOTS];
    if (!q->used || q->key == key) {
      s = q;
      break;
    }
  }
  if (!(s->used && s->key == key) && njournal < CACHE_SLOTS) journal[njournal++] = (tsl_mca_entry){key, v};
  *s = (slot){key, v, true}; /* a full probe run overwrites its first slot */
  pthread_mutex_unlock(&cache_lock);
}

int tsl_mca_cache_mark(void) {
  pthread_mutex_lock(&cache_lock);
  int m = njournal;
  pthread_mutex_unlock(&cache_lock);
  return m;
}

int tsl_mca_cache_since(int mark, tsl_mca_entry *out, int max) {
  pthread_mutex_lock(&cache_lock);
  int n = 0;
  for (int i = mark < 0 ? 0 : mark; i < njournal && n < max; i++) out[n++] = journal[i];
  pthread_mutex_unlock(&cache_lock);
  return n;
}

void tsl_mca_cache_add(const tsl_mca_entry *e, int n) {
  for (int i = 0; e && i < n; i++) cache_put(e[i].key, e[i].cycles);
}

/* ---- running the tool ---- */

static tsl_status write_temp(const char *text, char *path, size_t n) {
  const char *dir = getenv("TMPDIR");
  snprintf(path, n, "%s/tessel-mca-XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) return tsl_error(TSL_ERR_IO, "mca: cannot create a temporary file %s: %s", path, strerror(errno));
  size_t len = text ? strlen(text) : 0, off = 0;
  while (off < len) {
    ssize_t w = write(fd, text + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int e = errno;
      close(fd);
      unlink(path);
      return tsl_error(TSL_ERR_IO, "mca: cannot write %s: %s", path, strerror(e));
    }
    off += (size_t)w;
  }
  close(fd);
  return TSL_OK;
}

/* The whole file (the tool's outputs are a few kilobytes), malloc'd; NULL on failure. */
static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  char *buf = size >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)size + 1) : NULL;
  if (buf) buf[fread(buf, 1, (size_t)size, f)] = '\0';
  fclose(f);
  return buf;
}

/* The first line of text that mentions an error (or its first line) and the line
 * after it (the tool's quote of the offending source line or instruction), into msg. */
static void first_error(const char *text, char *msg, size_t n) {
  const char *p = text ? strstr(text, "error") : NULL;
  if (!p) p = text ? text : "";
  while (p > text && p[-1] != '\n') p--;
  size_t len = strcspn(p, "\n");
  if (len >= n) len = n - 1;
  memcpy(msg, p, len);
  msg[len] = '\0';
  const char *next = p[len] == '\n' ? p + len + 1 : NULL;
  while (next && (*next == ' ' || *next == '\t')) next++;
  size_t nl = next ? strcspn(next, "\n") : 0;
  if (nl > 0) snprintf(msg + len, n - len, ": %.*s", (int)nl, next);
}

/* Runs the tool on file `in`, stdout to *out_text, stderr to *err_text (both malloc'd). */
static tsl_status run_tool(const char *triple, const char *cpu, const char *in, int iterations, double timeout_s,
                           char **out_text, char **err_text) {
  *out_text = *err_text = NULL;
  char out_path[512], err_path[512];
  tsl_status st = write_temp("", out_path, sizeof out_path);
  if (st != TSL_OK) return st;
  st = write_temp("", err_path, sizeof err_path);
  if (st != TSL_OK) {
    unlink(out_path);
    return st;
  }
  char a_triple[96], a_cpu[96], a_iter[48];
  snprintf(a_triple, sizeof a_triple, "-mtriple=%s", triple);
  snprintf(a_cpu, sizeof a_cpu, "-mcpu=%s", cpu);
  snprintf(a_iter, sizeof a_iter, "-iterations=%d", iterations);
  const char *tool = tsl_mca_tool();
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    st = tsl_error(TSL_ERR_RUNTIME, "mca: fork: %s", strerror(errno));
  } else if (pid == 0) {
    int o = open(out_path, O_WRONLY | O_TRUNC), e = open(err_path, O_WRONLY | O_TRUNC);
    if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(126);
    execlp(tool, tool, a_triple, a_cpu, "--json", a_iter, in, (char *)NULL);
    fprintf(stderr, "error: cannot run %s: %s\n", tool, strerror(errno));
    _exit(127);
  } else {
    double deadline = tsl_time_now() + timeout_s;
    int status = 0;
    bool done = false, timed_out = false;
    while (!done) {
      pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) done = true;
      else if (w < 0 && errno != EINTR) break;
      else if (tsl_time_now() > deadline) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        timed_out = done = true;
      } else {
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
      }
    }
    *out_text = read_all(out_path);
    *err_text = read_all(err_path);
    if (!*out_text || !*err_text)
      st = tsl_error(TSL_ERR_NOMEM, "mca: out of memory");
    else if (timed_out)
      st = tsl_error(TSL_ERR_RUNTIME, "mca: %s did not finish in %.3g s (%s, cpu %s)", tool, timeout_s, triple, cpu);
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      char why[256];
      first_error(*err_text, why, sizeof why);
      /* the usual cause: the code uses features (say AVX-512 of a `host` target on a newer
       * machine) that the named CPU, and so its scheduling model, does not have */
      bool unsupported = strstr(*err_text, "unsupported instruction") != NULL;
      st = tsl_error(TSL_ERR_RUNTIME, "mca: %s failed (%s %d) for %s, cpu %s: %s%s", tool,
                     WIFEXITED(status) ? "exit status" : "signal",
                     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), triple, cpu, why,
                     unsupported ? " (the code was compiled with features this cpu's scheduling model lacks: give "
                                   "a target whose features the cpu has, e.g. x86-64-avx2 -mcpu=znver3)"
                                 : "");
    }
  }
  unlink(out_path);
  unlink(err_path);
  return st;
}

/* Each region's TotalCycles / Iterations from the tool's JSON: region "bK" into
 * cycles[K] (K < n), found[K] set. */
static tsl_status parse_regions(const char *json, int n, double *cycles, bool *found) {
  json_object *root = json_tokener_parse(json);
  json_object *regions = NULL;
  tsl_status st = TSL_OK;
  if (!root || !json_object_object_get_ex(root, "CodeRegions", &regions) ||
      !json_object_is_type(regions, json_type_array))
    st = tsl_error(TSL_ERR_RUNTIME, "mca: %s printed no CodeRegions array", tsl_mca_tool());
  for (size_t i = 0; st == TSL_OK && i < json_object_array_length(regions); i++) {
    json_object *r = json_object_array_get_idx(regions, i), *name = NULL, *summary = NULL, *tc = NULL, *it = NULL;
    const char *s = json_object_object_get_ex(r, "Name", &name) ? json_object_get_string(name) : NULL;
    char *end = NULL;
    long k = s && s[0] == 'b' ? strtol(s + 1, &end, 10) : -1;
    if (k < 0 || k >= n || !end || *end) continue; /* not one of ours */
    if (!json_object_object_get_ex(r, "SummaryView", &summary) ||
        !json_object_object_get_ex(summary, "TotalCycles", &tc) ||
        !json_object_object_get_ex(summary, "Iterations", &it) || json_object_get_double(it) <= 0)
      st = tsl_error(TSL_ERR_RUNTIME, "mca: %s printed no SummaryView with TotalCycles and Iterations for block %ld",
                     tsl_mca_tool(), k);
    else {
      cycles[k] = json_object_get_double(tc) / json_object_get_double(it);
      found[k] = true;
    }
  }
  if (root) json_object_put(root);
  return st;
}

/* The block whose lines hold the line number of the tool's first "FILE:LINE:COL: error"
 * (first[k] <= LINE < first[k + 1]), or -1. */
static int block_of_error(const char *err, const char *path, const int *first, int n) {
  size_t len = strlen(path);
  for (const char *p = err ? strstr(err, path) : NULL; p; p = strstr(p + len, path)) {
    if (p[len] != ':') continue;
    char *end = NULL;
    long line = strtol(p + len + 1, &end, 10);
    if (end == p + len + 1 || !strstr(end, "error")) continue;
    for (int k = n - 1; k >= 0; k--)
      if (line >= first[k]) return line < first[k + 1] ? k : -1;
    return -1;
  }
  return -1;
}

static uint64_t block_key(const char *triple, const char *cpu, int iterations, const char *block) {
  char it[32];
  snprintf(it, sizeof it, "%d", iterations);
  return fnv(fnv(fnv(fnv(1469598103934665603ull, triple), cpu), it), block);
}

/* One run of the tool on blocks[idx[0..m)] as code regions "b0".."b<m-1>" (their index
 * in idx), their cycles into cycles[idx[j]]; the block a failure names into *bad (an
 * index into blocks) or -1. */
static tsl_status run_regions(const char *triple, const char *cpu, const char *const *blocks, const int *idx, int m,
                              int iterations, double timeout_s, double *cycles, int *bad) {
  *bad = -1;
  size_t len = 1;
  for (int j = 0; j < m; j++) len += strlen(blocks[idx[j]]) + 64;
  char *text = malloc(len);
  int *first = malloc(sizeof *first * (size_t)(m + 1));
  double *c = calloc((size_t)m, sizeof *c);
  bool *found = calloc((size_t)m, sizeof *found);
  if (!text || !first || !c || !found) {
    free(text);
    free(first);
    free(c);
    free(found);
    return tsl_error(TSL_ERR_NOMEM, "mca: out of memory");
  }
  /* "#" starts a comment line on x86 and AArch64 alike (AArch64's "//" comments are
   * not seen as region markers by llvm-mca 19) */
  size_t off = 0;
  int line = 1;
  for (int j = 0; j < m; j++) {
    const char *b = blocks[idx[j]];
    off += (size_t)snprintf(text + off, len - off, "# LLVM-MCA-BEGIN b%d\n", j);
    first[j] = line++;
    size_t bl = strlen(b);
    memcpy(text + off, b, bl);
    off += bl;
    for (size_t i = 0; i < bl; i++) line += b[i] == '\n';
    if (bl == 0 || b[bl - 1] != '\n') {
      text[off++] = '\n';
      line++;
    }
    off += (size_t)snprintf(text + off, len - off, "# LLVM-MCA-END b%d\n", j);
    line++;
  }
  first[m] = line;
  text[off] = '\0';
  char in[512];
  tsl_status st = write_temp(text, in, sizeof in);
  free(text);
  char *out = NULL, *err = NULL;
  if (st == TSL_OK) {
    st = run_tool(triple, cpu, in, iterations, timeout_s * m, &out, &err);
    if (st != TSL_OK && err) {
      int k = block_of_error(err, in, first, m);
      *bad = k >= 0 ? idx[k] : -1;
    }
    unlink(in);
  }
  if (st == TSL_OK) st = parse_regions(out, m, c, found);
  for (int j = 0; st == TSL_OK && j < m; j++) {
    if (!found[j]) {
      *bad = idx[j];
      st = tsl_error(TSL_ERR_RUNTIME, "mca: %s printed no code region for block %d", tsl_mca_tool(), idx[j]);
    } else
      cycles[idx[j]] = c[j];
  }
  free(out);
  free(err);
  free(first);
  free(c);
  free(found);
  return st;
}

tsl_status tsl_mca_blocks_cycles(const char *triple, const char *cpu, const char *const *blocks, int n, int iterations,
                                 double timeout_s, double *cycles, int *bad) {
  if (bad) *bad = -1;
  if (!triple || !cpu || !blocks || !cycles || !bad || n < 0) return tsl_error(TSL_ERR_INVALID, "mca: NULL argument");
  if (iterations < 1 || !(timeout_s > 0)) return tsl_error(TSL_ERR_INVALID, "mca: iterations >= 1, timeout > 0");
  for (int k = 0; k < n; k++)
    if (!blocks[k]) return tsl_error(TSL_ERR_INVALID, "mca: block %d is NULL", k);
  size_t cnt = (size_t)(n > 0 ? n : 1);
  uint64_t *keys = malloc(sizeof *keys * cnt);
  int *miss = malloc(sizeof *miss * cnt), *same = malloc(sizeof *same * cnt), m = 0;
  if (!keys || !miss || !same) {
    free(keys);
    free(miss);
    free(same);
    return tsl_error(TSL_ERR_NOMEM, "mca: out of memory");
  }
  for (int k = 0; k < n; k++) {
    keys[k] = block_key(triple, cpu, iterations, blocks[k]);
    same[k] = k; /* the same block twice in one call: run once, copied below */
    for (int j = 0; j < k && same[k] == k; j++)
      if (keys[j] == keys[k]) same[k] = j;
    if (same[k] == k && !cache_get(keys[k], &cycles[k])) miss[m++] = k;
  }
  tsl_status st = m > 0 ? run_regions(triple, cpu, blocks, miss, m, iterations, timeout_s, cycles, bad) : TSL_OK;
  if (st != TSL_OK && *bad < 0 && m > 1) {
    /* a failure the tool's message does not place (an unsupported instruction is
     * quoted, not located): run the blocks alone until one fails */
    char why[512];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    tsl_status one = TSL_OK;
    int j = 0, b = -1;
    for (; j < m && one == TSL_OK; j++) one = run_regions(triple, cpu, blocks, &miss[j], 1, iterations, timeout_s, cycles, &b);
    if (one != TSL_OK) {
      st = one;
      *bad = miss[j - 1];
    } else
      tsl_error(st, "%s", why);
  }
  if (st != TSL_OK && *bad >= 0) {
    char why[512];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    st = tsl_error(st, "block %d: %s", *bad, why);
  }
  for (int j = 0; st == TSL_OK && j < m; j++) cache_put(keys[miss[j]], cycles[miss[j]]);
  for (int k = 0; st == TSL_OK && k < n; k++) cycles[k] = cycles[same[k]];
  free(keys);
  free(miss);
  free(same);
  return st;
}

tsl_status tsl_mca_block_cycles(const char *triple, const char *cpu, const char *block, int iterations,
                                double timeout_s, double *cycles) {
  int bad = -1;
  return tsl_mca_blocks_cycles(triple, cpu, &block, 1, iterations, timeout_s, cycles, &bad);
}

tsl_status tsl_mca_check(const char *triple, const char *cpu) {
  if (!triple || !cpu) return tsl_error(TSL_ERR_INVALID, "mca: NULL argument");
  uint64_t key = fnv(fnv(fnv(7ull, "check"), triple), cpu);
  double ok = 0;
  if (cache_get(key, &ok)) {
    if (ok > 0) return TSL_OK;
  }
  char in[512];
  tsl_status st = write_temp("nop\n", in, sizeof in);
  if (st != TSL_OK) return st;
  char *out = NULL, *err = NULL;
  st = run_tool(triple, cpu, in, 1, 20.0, &out, &err);
  unlink(in);
  if (st == TSL_OK && err && strstr(err, "not a recognized processor"))
    st = tsl_error(TSL_ERR_UNSUPPORTED, "mca: %s has no scheduling model for cpu '%s' (%s)", tsl_mca_tool(), cpu,
                   triple);
  else if (st != TSL_OK) {
    char why[512];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    st = tsl_error(TSL_ERR_UNSUPPORTED, "%s", why);
  }
  free(out);
  free(err);
  if (st == TSL_OK) cache_put(key, 1.0);
  return st;
}
