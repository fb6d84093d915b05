/* Target strings: parsing, printing, presets, host detection (through the probe of
 * target/host_probe.h), whether code runs here. No LLVM. */
#include "target/target.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/arch.h"
#include "target/cpus.h"
#include "target/host_probe.h"

static const char *const known_names[] = {"host", "x86-64-avx2", "x86-64-avx512", "armv8",
                                          "armv8.2-a+dotprod"};

const char *const *tsl_target_known_names(int *count) {
  *count = (int)(sizeof known_names / sizeof known_names[0]);
  return known_names;
}

int tsl_target_f32_lanes(const tsl_target *t) { return t && t->vector_bits >= 128 ? t->vector_bits / 32 : 4; }

int tsl_target_vector_registers(const tsl_target *t) {
  return t && (t->arch == TSL_ARCH_AARCH64 || t->vector_bits >= 512) ? 32 : 16;
}

bool tsl_target_has_feature(const tsl_target *t, const char *feature) {
  return tsl_feature_string_has(t->features, feature);
}

/* ---- host detection ---- */

/* "32K", "1024K", "32M" -> bytes; 0 if unreadable. */
static int64_t parse_cache_size(const char *s) {
  char *end;
  long long v = strtoll(s, &end, 10);
  if (end == s || v <= 0) return 0;
  if (*end == 'K') v *= 1024;
  else if (*end == 'M') v *= 1024 * 1024;
  return v;
}

static bool read_line(const char *path, char *buf, size_t n) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  bool ok = fgets(buf, (int)n, f) != NULL;
  fclose(f);
  if (ok) buf[strcspn(buf, "\n")] = '\0';
  return ok;
}

/* Cache sizes of cpu0 from sysfs (index0..index9: level, type, size), falling back
 * to glibc's sysconf, then to the preset-like defaults 32 KiB / 512 KiB. */
static void host_caches(int64_t *l1d, int64_t *l2) {
  *l1d = 0;
  *l2 = 0;
  for (int i = 0; i < 10; i++) {
    char path[128], level[16], type[32], size[32];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    if (!read_line(path, level, sizeof level)) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    if (!read_line(path, type, sizeof type)) continue;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (!read_line(path, size, sizeof size)) continue;
    int64_t bytes = parse_cache_size(size);
    if (strcmp(level, "1") == 0 && strcmp(type, "Data") == 0) *l1d = bytes;
    if (strcmp(level, "2") == 0 && strcmp(type, "Instruction") != 0) *l2 = bytes;
  }
#ifdef _SC_LEVEL1_DCACHE_SIZE
  if (*l1d <= 0) *l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
  if (*l2 <= 0) *l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
  if (*l1d <= 0) *l1d = 32 * 1024;
  if (*l2 <= 0) *l2 = 512 * 1024;
}

static tsl_target host_target;
static tsl_status host_status;
static char host_error[256];

static void copy_str(char *dst, size_t n, const char *src) {
  snprintf(dst, n, "%s", src ? src : "");
}

static void detect_host_once(void) {
  tsl_target *t = &host_target;
  memset(t, 0, sizeof *t);
  copy_str(t->name, sizeof t->name, "host");
  if (tsl_target_probe_host(t) != TSL_OK) {
    host_status = TSL_ERR_UNSUPPORTED;
    copy_str(host_error, sizeof host_error, tsl_last_error());
  }
  const tsl_arch_info *arch = tsl_arch_info_for_triple(t->triple);
  if (!arch) {
    host_status = TSL_ERR_UNSUPPORTED;
    snprintf(host_error, sizeof host_error, "target host: architecture of '%.64s' is not supported",
             t->triple);
    return;
  }
  t->arch = arch->arch;
  t->vector_bits = arch->vector_bits(t);
  t->is_host = true;
  host_caches(&t->l1d_bytes, &t->l2_bytes);
}

static tsl_status get_host(tsl_target *out) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, detect_host_once);
  if (host_status != TSL_OK) return tsl_error(host_status, "%s", host_error);
  *out = host_target;
  return TSL_OK;
}

/* The first "+x" of `features` that `have` (and `have_cpu`'s implied features, unless
 * `have` disables it: "-x") lack, copied into missing (64 bytes); false when there is
 * none. */
static bool first_missing(const char *features, const char *have, const char *have_cpu, char *missing) {
  for (const char *p = features; tsl_feature_string_next(&p, missing, 64);)
    if (!tsl_feature_string_has(have, missing) &&
        (tsl_feature_string_disables(have, missing) ||
         !tsl_feature_string_has(tsl_target_cpu_features(have_cpu), missing)))
      return true;
  return false;
}

size_t tsl_target_implied_features(const tsl_target *t, char *out, size_t n) {
  size_t len = 0;
  if (!out || n == 0) return 0;
  out[0] = '\0';
  if (!t) return 0;
  char name[64];
  for (const char *p = tsl_target_cpu_features(t->cpu); tsl_feature_string_next(&p, name, sizeof name);) {
    if (tsl_feature_string_disables(t->features, name)) continue;
    int w = snprintf(out + len, n - len, "%s+%s", len ? "," : "", name);
    if (w < 0 || (size_t)w >= n - len) { /* never a cut name: drop the partial one */
      out[len] = '\0';
      return len;
    }
    len += (size_t)w;
  }
  return len;
}

/* Can code for t run on a machine whose target is host? Its features and those its CPU
 * implies must be the host's (or its CPU's). *reason (n bytes) says why not. */
static bool runs_on(const tsl_target *t, const tsl_target *host, char *reason, size_t n) {
  if (t->arch != host->arch) {
    snprintf(reason, n, "architecture %s (host is %s)", tsl_arch_info_of(t->arch)->name,
             tsl_arch_info_of(host->arch)->name);
    return false;
  }
  char feature[64];
  if (first_missing(t->features, host->features, host->cpu, feature)) {
    snprintf(reason, n, "feature %s", feature);
    return false;
  }
  /* those the CPU implies, except what t's own string turns off (a host target on a VM
   * that hides a feature of its CPU: "-avx512fp16") */
  char implied[512];
  tsl_target_implied_features(t, implied, sizeof implied);
  if (first_missing(implied, host->features, host->cpu, feature)) {
    snprintf(reason, n, "feature %s (enabled by -mcpu=%s)", feature, t->cpu);
    return false;
  }
  return true;
}

bool tsl_target_runs_on(const tsl_target *t, const tsl_target *machine, char *why, size_t n) {
  char reason[192];
  bool ok = t && machine && runs_on(t, machine, reason, sizeof reason);
  if (!ok && why && n) snprintf(why, n, "%s", t && machine ? reason : "NULL argument");
  return ok;
}

static tsl_status forced_host(const char *forced, tsl_target *t);

bool tsl_target_runs_on_host(const tsl_target *t, const char **why) {
  static _Thread_local char reason[192];
  tsl_target host;
  if (get_host(&host) != TSL_OK) {
    if (why) *why = "the host is not supported";
    return false;
  }
  if (t->is_host) return true;
  /* a forced host is the machine as far as tessel is concerned: code for features it
   * lacks is refused as on such a machine */
  const char *forced = getenv(TSL_HOST_TARGET_ENV);
  bool is_forced = forced && *forced;
  if (is_forced && forced_host(forced, &host) != TSL_OK) {
    snprintf(reason, sizeof reason, "%s", tsl_last_error()); /* what is wrong with the variable */
    if (why) *why = reason;
    return false;
  }
  if (runs_on(t, &host, reason, sizeof reason)) return true;
  if (is_forced) {
    size_t len = strlen(reason);
    snprintf(reason + len, sizeof reason - len, " (this machine is %s=%s)", TSL_HOST_TARGET_ENV, forced);
  }
  if (why) *why = reason;
  return false;
}

/* ---- parsing ---- */

static bool valid_cpu_name(const char *s) {
  if (!*s) return false;
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' && *s != '.') return false;
  return true;
}

/* "tcp://HOST:PORT" with a non-empty host and a port in 1..65535. */
static bool valid_device(const char *d) {
  if (strncmp(d, "tcp://", 6) != 0) return false;
  const char *host = d + 6, *colon = strrchr(host, ':');
  if (!colon || colon == host) return false;
  char *end;
  long port = strtol(colon + 1, &end, 10);
  return *end == '\0' && end != colon + 1 && port >= 1 && port <= 65535;
}

static tsl_status unknown_target(const char *s) {
  char list[256] = "";
  int n;
  const char *const *names = tsl_target_known_names(&n);
  for (int i = 0; i < n; i++) {
    strncat(list, names[i], sizeof list - strlen(list) - 1);
    if (i + 1 < n) strncat(list, ", ", sizeof list - strlen(list) - 1);
  }
  return tsl_error(TSL_ERR_UNSUPPORTED, "target: unknown target '%s' (known: %s)", s, list);
}

static tsl_status set_preset(const char *name, tsl_target *t) {
  int narch;
  const tsl_arch_info *const *archs = tsl_arch_infos(&narch);
  for (int a = 0; a < narch; a++)
    for (int i = 0; i < archs[a]->npresets; i++) {
      const tsl_target_preset *p = &archs[a]->presets[i];
      if (strcmp(p->name, name) != 0) continue;
      memset(t, 0, sizeof *t);
      copy_str(t->name, sizeof t->name, p->name);
      copy_str(t->triple, sizeof t->triple, p->triple);
      copy_str(t->cpu, sizeof t->cpu, p->cpu);
      copy_str(t->features, sizeof t->features, p->features);
      t->arch = archs[a]->arch;
      t->vector_bits = archs[a]->vector_bits(t);
      t->l1d_bytes = p->l1d_bytes;
      t->l2_bytes = p->l2_bytes;
      return TSL_OK;
    }
  return TSL_ERR_NOT_FOUND;
}

/* "host" as TSL_HOST_TARGET names it: a known target (its options allowed) that runs
 * here, never "host" itself. */
static tsl_status forced_host(const char *forced, tsl_target *t) {
  char head[8];
  if (sscanf(forced, " %7s", head) == 1 && strcmp(head, "host") == 0)
    return tsl_error(TSL_ERR_INVALID, "%s=%s: name a target other than host (one of the known targets this machine runs)",
                     TSL_HOST_TARGET_ENV, forced);
  tsl_status st = tsl_target_parse(forced, t);
  if (st != TSL_OK) {
    char why[512];
    snprintf(why, sizeof why, "%s", tsl_last_error());
    return tsl_error(st, "%s=%s: %s", TSL_HOST_TARGET_ENV, forced, why);
  }
  if (t->device[0])
    return tsl_error(TSL_ERR_INVALID, "%s=%s: the host target takes no -device=", TSL_HOST_TARGET_ENV, forced);
  /* the forced host is that target's ISA: a CPU that enables more (x86-64-avx512
   * -mcpu=znver4: VNNI, VPOPCNTDQ; a wider vector ISA is already off, see
   * tsl_target_keep_vector_bits) would make its code something else */
  char extra[64], implied[512];
  tsl_target_implied_features(t, implied, sizeof implied);
  if (first_missing(implied, t->features, NULL, extra)) {
    char within[512];
    if (tsl_target_cpus_within(t->arch, t->features, within, sizeof within) == 0)
      snprintf(within, sizeof within, "none is known");
    return tsl_error(TSL_ERR_INVALID,
                     "%s=%s: -mcpu=%s enables %s, which %s does not have: name a CPU with no feature beyond "
                     "%s's (%s)",
                     TSL_HOST_TARGET_ENV, forced, t->cpu, extra, t->name, t->name, within);
  }
  tsl_target real;
  char why[192];
  st = get_host(&real);
  if (st != TSL_OK) return st;
  if (!runs_on(t, &real, why, sizeof why))
    return tsl_error(TSL_ERR_UNSUPPORTED, "%s=%s: that target cannot run on this machine (%s)", TSL_HOST_TARGET_ENV,
                     forced, why);
  return TSL_OK;
}

tsl_status tsl_target_detected_host(tsl_target *out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "target: NULL argument");
  return get_host(out);
}

tsl_status tsl_target_parse(const char *s, tsl_target *out) {
  if (!s || !out) return tsl_error(TSL_ERR_INVALID, "target: NULL argument");
  char buf[512];
  if (strlen(s) >= sizeof buf) return tsl_error(TSL_ERR_INVALID, "target: string too long");
  copy_str(buf, sizeof buf, s);
  char *save = NULL;
  char *name = strtok_r(buf, " \t\n", &save);
  if (!name) return tsl_error(TSL_ERR_INVALID, "target: empty target string");
  tsl_target t;
  bool real_host = false; /* t is the detected machine */
  const char *forced = getenv(TSL_HOST_TARGET_ENV);
  if (strcmp(name, "host") == 0 && forced && *forced) {
    tsl_status st = forced_host(forced, &t);
    if (st != TSL_OK) return st;
  } else if (strcmp(name, "host") == 0) {
    tsl_status st = get_host(&t);
    if (st != TSL_OK) return st;
    real_host = true;
  } else if (set_preset(name, &t) != TSL_OK) {
    return unknown_target(s);
  }
  for (char *opt = strtok_r(NULL, " \t\n", &save); opt; opt = strtok_r(NULL, " \t\n", &save)) {
    if (strncmp(opt, "-mcpu=", 6) == 0) {
      const char *cpu = opt + 6;
      if (!valid_cpu_name(cpu) || strlen(cpu) >= sizeof t.cpu)
        return tsl_error(TSL_ERR_INVALID, "target '%s': bad -mcpu value '%s'", s, cpu);
      char list[1024];
      /* the detected host's own CPU is valid after "host" even when the list lacks it
       * (a CPU newer than the list): a record the host wrote ("host -mcpu=<its CPU>")
       * parses back on that host; never after a preset, whose check of the features a
       * CPU implies needs the CPU's row (tsl_target_cpu_features) */
      bool own_cpu = real_host && strcmp(cpu, t.cpu) == 0;
      if (!tsl_target_cpu_known(t.arch, cpu, list, sizeof list) && !own_cpu)
        return tsl_error(TSL_ERR_UNSUPPORTED, "target '%s': -mcpu=%s is not a known %s CPU (known: %s)", s, cpu,
                         t.arch == TSL_ARCH_X86_64 ? "x86-64" : "AArch64", list);
      copy_str(t.cpu, sizeof t.cpu, cpu);
      t.cpu_overridden = true;
    } else if (strncmp(opt, "-device=", 8) == 0) {
      const char *dev = opt + 8;
      if (!valid_device(dev) || strlen(dev) >= sizeof t.device)
        return tsl_error(TSL_ERR_INVALID, "target '%s': bad -device value '%s' (want tcp://HOST:PORT)", s, dev);
      copy_str(t.device, sizeof t.device, dev);
    } else {
      return tsl_error(TSL_ERR_INVALID, "target '%s': unknown option '%s' (known: -mcpu=, -device=)",
                       s, opt);
    }
  }
  /* a named target keeps its class's vector width whatever CPU it is scheduled for */
  if (t.cpu_overridden && !real_host) {
    tsl_status st = tsl_target_keep_vector_bits(&t);
    if (st != TSL_OK) return st;
  }
  *out = t;
  return TSL_OK;
}

const char *tsl_target_str(const tsl_target *t, char *buf, size_t n) {
  int len = snprintf(buf, n, "%s", t->name);
  if ((t->cpu_overridden || t->is_host) && len >= 0 && (size_t)len < n)
    len += snprintf(buf + len, n - (size_t)len, " -mcpu=%s", t->cpu);
  if (t->device[0] && len >= 0 && (size_t)len < n)
    snprintf(buf + len, n - (size_t)len, " -device=%s", t->device);
  return buf;
}
