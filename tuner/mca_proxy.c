/* Rewriting assembly blocks for a proxy scheduling model (mca_proxy.h). */
#include "tuner/mca_proxy.h"

#include <stdlib.h>
#include <string.h>

bool tsl_mca_proxy_applies(const char *cpu) { return cpu && strcmp(cpu, "znver5") == 0; }

/* Replaces every `from` in the line by `to`, which is no longer than `from`. */
static void replace_all(char *line, const char *from, const char *to) {
  size_t nf = strlen(from), nt = strlen(to);
  for (char *q = line; (q = strstr(q, from)) != NULL; q += nt) {
    memmove(q + nt, q + nf, strlen(q + nf) + 1);
    memcpy(q, to, nt);
  }
}

/* A broadcast from memory (its mnemonic first, a memory operand) as a plain load of the
 * destination's width. Returns whether the line was one. */
static bool broadcast_as_load(char *line) {
  static const char *const broadcasts[][2] = {
      {"vbroadcastss", "vmovups"}, {"vbroadcastsd", "vmovupd"}, {"vpbroadcastd", "vmovdqu32"}, {"vpbroadcastq", "vmovdqu64"}};
  const char *p = line + strspn(line, " \t");
  if (!strchr(p, '(')) return false; /* a register source: a shuffle, on the FP pipes */
  for (size_t k = 0; k < sizeof broadcasts / sizeof broadcasts[0]; k++) {
    size_t n = strlen(broadcasts[k][0]);
    if (strncmp(p, broadcasts[k][0], n) == 0 && (p[n] == ' ' || p[n] == '\t')) {
      size_t m = strlen(broadcasts[k][1]);
      char *q = line + (p - line);
      memcpy(q, broadcasts[k][1], m);
      memset(q + m, ' ', n - m);
      return true;
    }
  }
  return false;
}

/* A 512-bit instruction as its 256-bit form: zmm registers as ymm, the embedded
 * broadcasts' element counts halved ({1to8} first: in a zmm line it is 64-bit
 * elements). Returns whether the line had a zmm register. */
static bool zmm_as_ymm(char *line) {
  if (!strstr(line, "%zmm")) return false;
  replace_all(line, "{1to8}", "{1to4}");
  replace_all(line, "{1to16}", "{1to8}");
  for (char *q = line; (q = strstr(q, "%zmm")) != NULL; q += 4) q[1] = 'y';
  return true;
}

tsl_status tsl_mca_proxy_block(const char *cpu, const char *block, char **out) {
  if (!cpu || !block || !out) return tsl_error(TSL_ERR_INVALID, "mca proxy: NULL argument");
  *out = NULL;
  if (!tsl_mca_proxy_applies(cpu)) return TSL_OK;
  size_t n = strlen(block);
  char *o = malloc(n + 1);
  if (!o) return tsl_error(TSL_ERR_NOMEM, "mca proxy: out of memory");
  memcpy(o, block, n + 1);
  bool changed = false;
  /* line by line in place: no rewrite makes a line longer */
  for (char *line = o; *line;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    bool b = broadcast_as_load(line);
    bool z = zmm_as_ymm(line);
    changed = changed || b || z;
    size_t len = strlen(line);
    if (!nl) {
      line += len;
      break;
    }
    /* close the gap a shortened line left */
    if (line + len != nl) memmove(line + len, nl, strlen(nl + 1) + 2);
    line[len] = '\n';
    line += len + 1;
  }
  if (!changed) {
    free(o);
    return TSL_OK;
  }
  *out = o;
  return TSL_OK;
}
