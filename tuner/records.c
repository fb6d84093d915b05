/* Tuning records as JSON lines (records.h; schema in docs/records.md). */
#include "tuner/records.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/file_replace.h"
#include "tessel/runtime.h"
#include "tsl_config.h"

#define RECORD_SCHEMA_VERSION 0.2
#define RECORD_SCHEMA_VERSION_TEXT "0.2"

static const char *const error_names[] = {"ok",           "instantiation", "compile",    "runtime",
                                          "wrong_answer", "build_timeout", "run_timeout"};

const char *tsl_measure_error_name(int e) {
  return e >= 0 && e < TSL_MEASURE_ERROR_COUNT_ ? error_names[e] : "unknown";
}

void tsl_device_info_host(const tsl_target *t, tsl_device_info *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->cpu, sizeof out->cpu, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "model name", 10) != 0) continue;
      char *colon = strchr(line, ':');
      if (!colon) continue;
      colon++;
      while (*colon == ' ' || *colon == '\t') colon++;
      colon[strcspn(colon, "\n")] = '\0';
      snprintf(out->cpu, sizeof out->cpu, "%s", colon);
      break;
    }
    fclose(f);
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  out->cores = n > 0 ? (int)n : 1;
  static const char *const feats[] = {"sse4.2",   "avx",        "avx2",     "fma",         "f16c",    "avx512f",
                                      "avx512bw", "avx512vl",   "avx512dq", "avx512vnni",  "avx512bf16",
                                      "avx512vpopcntdq",        "neon",     "dotprod",     "fullfp16"};
  size_t len = 0;
  for (size_t i = 0; t && i < sizeof feats / sizeof feats[0]; i++)
    if (tsl_target_has_feature(t, feats[i]) && len < sizeof out->isa) {
      int w = snprintf(out->isa + len, sizeof out->isa - len, "%s%s", len ? "," : "", feats[i]);
      if (w > 0) len += (size_t)w;
    }
}

bool tsl_record_in_model(const tsl_record *r) { return r && r->context[0] != '\0'; }

bool tsl_record_is_static(const tsl_record *r) { return r && strcmp(r->cost_source, "static") == 0; }

int tsl_record_rank(const tsl_record *r, const char *target, const char *family, int threads) {
  char rfam[192];
  int rank;
  if (strcmp(r->target, target) == 0) rank = 0;
  else if (strcmp(tsl_target_family(r->target, rfam, sizeof rfam), family) == 0) rank = 8;
  else return -1;
  if (r->threads != threads) rank += 4;
  if (!tsl_record_in_model(r)) rank += 2;
  else if (r->window_steps <= 0) rank += 1;
  if (tsl_record_is_static(r)) rank += 16;
  return rank;
}

double tsl_record_cost(const tsl_record *r) {
  if (!r || r->error_no != TSL_MEASURE_OK || r->ncosts < 1) return INFINITY;
  double m = r->costs[0];
  for (int i = 1; i < r->ncosts; i++)
    if (r->costs[i] < m) m = r->costs[i];
  return m;
}

/* ---- writing ---------------------------------------------------------------- */

static json_object *jstr(const char *s) { return json_object_new_string(s ? s : ""); }

char *tsl_record_to_json(const tsl_record *r) {
  json_object *root = json_object_new_object();
  if (!root) return NULL;
  json_object *input = json_object_new_array();
  json_object_array_add(input, jstr(r->target));
  json_object_array_add(input, jstr(r->task));
  json_object_array_add(input, jstr(r->workload));
  json_object_object_add(root, "input", input);

  json_object *config = json_object_new_object();
  json_object_object_add(config, "algorithm", jstr(r->algorithm));
  json_object_object_add(config, "template", jstr(r->template_name));
  char hash[24];
  snprintf(hash, sizeof hash, "%016llx", (unsigned long long)r->space_hash);
  json_object_object_add(config, "space_hash", jstr(hash));
  json_object_object_add(config, "index", json_object_new_int64(r->config_index));
  json_object *ent = json_object_new_array();
  for (int i = 0; i < r->nknobs; i++) {
    json_object *e = json_object_new_array();
    json_object_array_add(e, jstr(r->knob_names[i]));
    const char *tag = tsl_knob_kind_tag(r->knob_kinds[i]);
    json_object_array_add(e, jstr(tag ? tag : "ot"));
    json_object_array_add(e, json_object_new_int64(r->config.values[i]));
    json_object_array_add(ent, e);
  }
  json_object_object_add(config, "entity", ent);
  json_object_object_add(root, "config", config);

  json_object *result = json_object_new_array();
  json_object *costs = json_object_new_array();
  for (int i = 0; i < r->ncosts; i++) json_object_array_add(costs, json_object_new_double(r->costs[i]));
  json_object_array_add(result, costs);
  json_object_array_add(result, json_object_new_int(r->error_no));
  json_object_array_add(result, json_object_new_double(r->all_cost));
  json_object_array_add(result, json_object_new_double(r->timestamp));
  json_object_object_add(root, "result", result);

  json_object_object_add(root, "error_msg", jstr(r->error_msg));
  json_object_object_add(root, "compile_s", json_object_new_double(r->compile_s));
  json_object *dev = json_object_new_object();
  json_object_object_add(dev, "cpu", jstr(r->device.cpu));
  json_object_object_add(dev, "cores", json_object_new_int(r->device.cores));
  json_object_object_add(dev, "isa", jstr(r->device.isa));
  json_object_object_add(root, "device", dev);
  json_object_object_add(root, "threads", json_object_new_int(r->threads));
  json_object_object_add(root, "version", json_object_new_double_s(RECORD_SCHEMA_VERSION, RECORD_SCHEMA_VERSION_TEXT));
  json_object_object_add(root, "tessel_version", jstr(r->tessel_version));
  json_object_object_add(root, "llvm_version", jstr(r->llvm_version));
  if (tsl_record_in_model(r)) json_object_object_add(root, "context", jstr(r->context));
  if (tsl_record_in_model(r) && r->window_steps > 0)
    json_object_object_add(root, "window_steps", json_object_new_int(r->window_steps));
  if (r->cost_source[0]) {
    json_object_object_add(root, "cost_source", jstr(r->cost_source));
    json_object_object_add(root, "cost_model", jstr(r->cost_model));
  }

  const char *s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  char *copy = s ? strdup(s) : NULL;
  json_object_put(root);
  return copy;
}

tsl_status tsl_record_check(const tsl_record *r) {
  if (!r) return tsl_error(TSL_ERR_INVALID, "records: NULL record");
  if (r->ncosts < 0 || r->ncosts > TSL_RECORD_MAX_COSTS)
    return tsl_error(TSL_ERR_INVALID, "records: %d costs (0..%d)", r->ncosts, TSL_RECORD_MAX_COSTS);
  if (r->window_steps < 0 || (r->window_steps > 0 && !tsl_record_in_model(r)))
    return tsl_error(TSL_ERR_INVALID, "records: window_steps %d: must be >= 0, and 0 for a record without a context",
                     r->window_steps);
  bool ok = r->error_no == TSL_MEASURE_OK;
  if (ok && r->ncosts == 0) return tsl_error(TSL_ERR_INVALID, "records: a successful record without costs");
  for (int i = 0; i < r->ncosts; i++) {
    if (!isfinite(r->costs[i]) || r->costs[i] < 0)
      return tsl_error(TSL_ERR_INVALID, "records: costs[%d] = %g s: costs must be finite and >= 0", i, r->costs[i]);
    if (ok && !(r->costs[i] > 0))
      return tsl_error(TSL_ERR_INVALID, "records: costs[%d] = %g s: a successful record's costs must be > 0", i,
                       r->costs[i]);
  }
  return TSL_OK;
}

tsl_status tsl_record_append(const char *path, const tsl_record *r) {
  if (!path || !r) return tsl_error(TSL_ERR_INVALID, "records: NULL argument");
  tsl_status ck = tsl_record_check(r);
  if (ck != TSL_OK) return ck;
  char *line = tsl_record_to_json(r);
  if (!line) return tsl_error(TSL_ERR_NOMEM, "records: out of memory");
  size_t len = strlen(line);
  char *buf = realloc(line, len + 3); /* room for a newline before and after */
  if (!buf) {
    free(line);
    return tsl_error(TSL_ERR_NOMEM, "records: out of memory");
  }
  buf[len] = '\n';
  buf[len + 1] = '\0';
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    int e = errno;
    free(buf);
    return tsl_error(TSL_ERR_IO, "records: cannot open %s: %s", path, strerror(e));
  }
  /* a last line cut short (a crash mid-write) ends first, or this record would join it
   * and be lost with it: the newline goes out in the same write (read through a second
   * descriptor, for a regular file only: a FIFO is not opened for reading) */
  struct stat fs;
  char last = '\n';
  if (fstat(fd, &fs) == 0 && S_ISREG(fs.st_mode) && fs.st_size > 0) {
    int rd = open(path, O_RDONLY | O_CLOEXEC);
    if (rd < 0 || pread(rd, &last, 1, fs.st_size - 1) != 1) last = '\n';
    if (rd >= 0) close(rd);
  }
  bool cut = last != '\n';
  if (cut) {
    memmove(buf + 1, buf, len + 2);
    buf[0] = '\n';
  }
  size_t total = len + 1 + (cut ? 1 : 0);
  ssize_t w = write(fd, buf, total);
  int e = errno;
  close(fd);
  free(buf);
  if (w != (ssize_t)total)
    return tsl_error(TSL_ERR_IO, "records: write to %s failed: %s", path, w < 0 ? strerror(e) : "short write");
  return TSL_OK;
}

/* ---- reading ---------------------------------------------------------------- */

static tsl_status bad(const char *field, const char *what) {
  return tsl_error(TSL_ERR_PARSE, "%s: expected %s", field, what);
}

static tsl_status get_str(json_object *o, const char *field, char *dst, size_t n) {
  if (!o || !json_object_is_type(o, json_type_string)) return bad(field, "a string");
  const char *s = json_object_get_string(o);
  if (strlen(s) >= n) return tsl_error(TSL_ERR_PARSE, "%s: longer than %zu bytes", field, n - 1);
  memcpy(dst, s, strlen(s) + 1);
  return TSL_OK;
}

static bool is_number(json_object *o) {
  return o && (json_object_is_type(o, json_type_double) || json_object_is_type(o, json_type_int));
}

static tsl_status get_num(json_object *o, const char *field, double *out) {
  if (!is_number(o)) return bad(field, "a number");
  *out = json_object_get_double(o);
  if (!isfinite(*out)) return bad(field, "a finite number");
  return TSL_OK;
}

static tsl_status get_int(json_object *o, const char *field, int64_t *out) {
  if (!o || !json_object_is_type(o, json_type_int)) return bad(field, "an integer");
  errno = 0;
  *out = json_object_get_int64(o);
  return TSL_OK;
}

static json_object *member(json_object *o, const char *k) {
  json_object *v = NULL;
  return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static tsl_status parse_record(json_object *root, tsl_record *r) {
  memset(r, 0, sizeof *r);
  tsl_status st;
  if (!root || !json_object_is_type(root, json_type_object)) return bad("line", "a JSON object");
  json_object *input = member(root, "input");
  if (!input || !json_object_is_type(input, json_type_array) || json_object_array_length(input) != 3)
    return bad("input", "an array [target, task, workload]");
  if ((st = get_str(json_object_array_get_idx(input, 0), "input[0]", r->target, sizeof r->target)) != TSL_OK) return st;
  if ((st = get_str(json_object_array_get_idx(input, 1), "input[1]", r->task, sizeof r->task)) != TSL_OK) return st;
  if ((st = get_str(json_object_array_get_idx(input, 2), "input[2]", r->workload, sizeof r->workload)) != TSL_OK)
    return st;
  if (!r->target[0] || !r->workload[0]) return bad("input", "a non-empty target and workload");

  json_object *config = member(root, "config");
  if (!config || !json_object_is_type(config, json_type_object)) return bad("config", "an object");
  if ((st = get_str(member(config, "algorithm"), "config.algorithm", r->algorithm, sizeof r->algorithm)) != TSL_OK)
    return st;
  if ((st = get_str(member(config, "template"), "config.template", r->template_name, sizeof r->template_name)) !=
      TSL_OK)
    return st;
  if (!r->template_name[0]) return bad("config.template", "a template name");
  char hash[24];
  if ((st = get_str(member(config, "space_hash"), "config.space_hash", hash, sizeof hash)) != TSL_OK) return st;
  char *end = NULL;
  r->space_hash = strtoull(hash, &end, 16);
  if (strlen(hash) != 16 || !end || *end) return bad("config.space_hash", "16 hex digits");
  if ((st = get_int(member(config, "index"), "config.index", &r->config_index)) != TSL_OK) return st;
  json_object *ent = member(config, "entity");
  if (!ent || !json_object_is_type(ent, json_type_array)) return bad("config.entity", "an array");
  size_t ne = json_object_array_length(ent);
  if (ne > TSL_MAX_KNOBS) return tsl_error(TSL_ERR_PARSE, "config.entity: more than %d knobs", TSL_MAX_KNOBS);
  r->nknobs = (int)ne;
  r->config.nknobs = (int)ne;
  for (size_t i = 0; i < ne; i++) {
    json_object *e = json_object_array_get_idx(ent, i);
    char field[48];
    snprintf(field, sizeof field, "config.entity[%zu]", i);
    if (!e || !json_object_is_type(e, json_type_array) || json_object_array_length(e) != 3)
      return bad(field, "[name, kind, value]");
    if ((st = get_str(json_object_array_get_idx(e, 0), field, r->knob_names[i], TSL_KNOB_NAME_LEN)) != TSL_OK)
      return st;
    char tag[8];
    if ((st = get_str(json_object_array_get_idx(e, 1), field, tag, sizeof tag)) != TSL_OK) return st;
    if (!tsl_knob_kind_parse(tag, &r->knob_kinds[i])) return bad(field, "a kind sp, re, an or ot");
    if ((st = get_int(json_object_array_get_idx(e, 2), field, &r->config.values[i])) != TSL_OK) return st;
  }

  json_object *result = member(root, "result");
  if (!result || !json_object_is_type(result, json_type_array) || json_object_array_length(result) != 4)
    return bad("result", "an array [costs, error_no, all_cost, timestamp]");
  json_object *costs = json_object_array_get_idx(result, 0);
  if (!costs || !json_object_is_type(costs, json_type_array)) return bad("result[0]", "an array of costs");
  size_t nc = json_object_array_length(costs);
  if (nc > TSL_RECORD_MAX_COSTS) return tsl_error(TSL_ERR_PARSE, "result[0]: more than %d costs", TSL_RECORD_MAX_COSTS);
  r->ncosts = (int)nc;
  for (size_t i = 0; i < nc; i++) {
    char field[32];
    snprintf(field, sizeof field, "result[0][%zu]", i);
    if ((st = get_num(json_object_array_get_idx(costs, i), field, &r->costs[i])) != TSL_OK) return st;
    if (r->costs[i] < 0) return bad(field, "a cost >= 0");
  }
  int64_t eno;
  if ((st = get_int(json_object_array_get_idx(result, 1), "result[1]", &eno)) != TSL_OK) return st;
  if (eno < 0 || eno >= TSL_MEASURE_ERROR_COUNT_) return bad("result[1]", "an error number 0..6");
  r->error_no = (int)eno;
  for (int i = 0; i < r->ncosts && r->error_no == TSL_MEASURE_OK; i++)
    if (!(r->costs[i] > 0)) {
      char field[32];
      snprintf(field, sizeof field, "result[0][%d]", i);
      return bad(field, "a cost > 0 s for a successful record");
    }
  if (r->error_no == TSL_MEASURE_OK && r->ncosts == 0) return bad("result[0]", "costs for a successful record");
  if ((st = get_num(json_object_array_get_idx(result, 2), "result[2]", &r->all_cost)) != TSL_OK) return st;
  if ((st = get_num(json_object_array_get_idx(result, 3), "result[3]", &r->timestamp)) != TSL_OK) return st;

  /* the fields below are optional (older writers, other tools) but typed when present */
  json_object *o;
  if ((o = member(root, "error_msg")) && (st = get_str(o, "error_msg", r->error_msg, sizeof r->error_msg)) != TSL_OK)
    return st;
  if ((o = member(root, "compile_s")) && (st = get_num(o, "compile_s", &r->compile_s)) != TSL_OK) return st;
  if ((o = member(root, "device"))) {
    if (!json_object_is_type(o, json_type_object)) return bad("device", "an object");
    json_object *d;
    if ((d = member(o, "cpu")) && (st = get_str(d, "device.cpu", r->device.cpu, sizeof r->device.cpu)) != TSL_OK)
      return st;
    int64_t cores = 0;
    if ((d = member(o, "cores")) && (st = get_int(d, "device.cores", &cores)) != TSL_OK) return st;
    r->device.cores = (int)cores;
    if ((d = member(o, "isa")) && (st = get_str(d, "device.isa", r->device.isa, sizeof r->device.isa)) != TSL_OK)
      return st;
  }
  int64_t threads = 0;
  if ((o = member(root, "threads")) && (st = get_int(o, "threads", &threads)) != TSL_OK) return st;
  r->threads = (int)threads;
  if ((o = member(root, "tessel_version")) &&
      (st = get_str(o, "tessel_version", r->tessel_version, sizeof r->tessel_version)) != TSL_OK)
    return st;
  if ((o = member(root, "llvm_version")) &&
      (st = get_str(o, "llvm_version", r->llvm_version, sizeof r->llvm_version)) != TSL_OK)
    return st;
  if ((o = member(root, "context")) && (st = get_str(o, "context", r->context, sizeof r->context)) != TSL_OK)
    return st;
  int64_t window = 0;
  if ((o = member(root, "window_steps")) && (st = get_int(o, "window_steps", &window)) != TSL_OK) return st;
  if (window < 0 || window > 1000000 || (window > 0 && !r->context[0]))
    return bad("window_steps", "a count >= 0, and 0 unless \"context\" is set");
  r->window_steps = (int)window;
  if ((o = member(root, "cost_source")) &&
      (st = get_str(o, "cost_source", r->cost_source, sizeof r->cost_source)) != TSL_OK)
    return st;
  if (r->cost_source[0] && strcmp(r->cost_source, "static") != 0 && strcmp(r->cost_source, "measured") != 0)
    return bad("cost_source", "\"static\" or \"measured\"");
  if (strcmp(r->cost_source, "measured") == 0) r->cost_source[0] = '\0';
  if ((o = member(root, "cost_model")) && (st = get_str(o, "cost_model", r->cost_model, sizeof r->cost_model)) != TSL_OK)
    return st;
  double version = 0;
  if ((st = get_num(member(root, "version"), "version", &version)) != TSL_OK) return st;
  return TSL_OK;
}

tsl_status tsl_record_from_json(const char *line, tsl_record *out) {
  if (!line || !out) return tsl_error(TSL_ERR_INVALID, "records: NULL argument");
  json_tokener *tok = json_tokener_new();
  if (!tok) return tsl_error(TSL_ERR_NOMEM, "records: out of memory");
  size_t len = strlen(line);
  json_object *root = json_tokener_parse_ex(tok, line, (int)(len > (size_t)INT32_MAX ? INT32_MAX : len));
  enum json_tokener_error jerr = json_tokener_get_error(tok);
  size_t used = json_tokener_get_parse_end(tok);
  json_tokener_free(tok);
  if (!root && jerr == json_tokener_success) return bad("line", "a JSON object"); /* the line is `null` */
  if (!root || jerr != json_tokener_success) {
    if (root) json_object_put(root);
    return tsl_error(TSL_ERR_PARSE, "not JSON (%s)",
                     jerr == json_tokener_continue ? "truncated" : json_tokener_error_desc(jerr));
  }
  for (size_t i = used; i < len; i++)
    if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r' && line[i] != '\n') {
      json_object_put(root);
      return tsl_error(TSL_ERR_PARSE, "text after the JSON object at byte %zu", used);
    }
  tsl_status st = parse_record(root, out);
  json_object_put(root);
  return st;
}

/* ---- sets of records ---------------------------------------------------------- */

tsl_status tsl_records_new(tsl_records **out) {
  if (!out) return tsl_error(TSL_ERR_INVALID, "records: NULL argument");
  *out = calloc(1, sizeof **out);
  return *out ? TSL_OK : tsl_error(TSL_ERR_NOMEM, "records: out of memory");
}

void tsl_records_free(tsl_records *db) {
  if (!db) return;
  free(db->recs);
  free(db);
}

tsl_status tsl_records_add(tsl_records *db, const tsl_record *r) {
  if (!db || !r) return tsl_error(TSL_ERR_INVALID, "records: NULL argument");
  tsl_status ck = tsl_record_check(r);
  if (ck != TSL_OK) return ck;
  if (db->n == db->cap) {
    int cap = db->cap ? db->cap * 2 : 64;
    tsl_record *recs = realloc(db->recs, (size_t)cap * sizeof *recs);
    if (!recs) return tsl_error(TSL_ERR_NOMEM, "records: out of memory");
    db->recs = recs;
    db->cap = cap;
  }
  db->recs[db->n++] = *r;
  return TSL_OK;
}

tsl_status tsl_records_load(tsl_records *db, const char *path, bool must_exist, FILE *warn) {
  if (!db || !path) return tsl_error(TSL_ERR_INVALID, "records: NULL argument");
  FILE *f = fopen(path, "r");
  if (!f) {
    if (errno == ENOENT && !must_exist) return TSL_OK;
    return tsl_error(TSL_ERR_IO, "records: cannot open %s: %s", path, strerror(errno));
  }
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  long lineno = 0;
  tsl_status st = TSL_OK;
  tsl_record *r = malloc(sizeof *r);
  if (!r) {
    fclose(f);
    return tsl_error(TSL_ERR_NOMEM, "records: out of memory");
  }
  while ((len = getline(&line, &cap, f)) >= 0) {
    lineno++;
    bool blank = true;
    for (ssize_t i = 0; i < len && blank; i++) blank = line[i] == ' ' || line[i] == '\t' || line[i] == '\n' || line[i] == '\r';
    if (blank) continue;
    if (memchr(line, '\0', (size_t)len)) {
      db->skipped++;
      if (warn) fprintf(warn, "tessel: warning: records %s:%ld: skipped (NUL byte in the line)\n", path, lineno);
      continue;
    }
    if (tsl_record_from_json(line, r) != TSL_OK) {
      db->skipped++;
      if (warn) fprintf(warn, "tessel: warning: records %s:%ld: skipped (%s)\n", path, lineno, tsl_last_error());
      continue;
    }
    if ((st = tsl_records_add(db, r)) != TSL_OK) break;
  }
  if (st == TSL_OK && ferror(f)) st = tsl_error(TSL_ERR_IO, "records: read error in %s", path);
  free(r);
  free(line);
  fclose(f);
  return st;
}

tsl_status tsl_records_save(const tsl_records *db, const char *path) {
  if (!db || !path) return tsl_error(TSL_ERR_INVALID, "records: NULL argument");
  /* through a symlink onto its file; a FIFO or device written in place */
  char target[PATH_MAX];
  bool in_place = false;
  tsl_status ts = tsl_file_replace_target(path, target, sizeof target, &in_place);
  if (ts != TSL_OK) return ts;
  size_t n = strlen(target) + 32;
  char *tmp = malloc(n);
  if (!tmp) return tsl_error(TSL_ERR_NOMEM, "records: out of memory");
  if (in_place) snprintf(tmp, n, "%s", target);
  else snprintf(tmp, n, "%s.tmp%ld", target, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) {
    tsl_status st = tsl_error(TSL_ERR_IO, "records: cannot create %s: %s", tmp, strerror(errno));
    free(tmp);
    return st;
  }
  tsl_status st = TSL_OK;
  for (int i = 0; i < db->n && st == TSL_OK; i++) {
    char *line = tsl_record_to_json(&db->recs[i]);
    if (!line) st = tsl_error(TSL_ERR_NOMEM, "records: out of memory");
    else if (fprintf(f, "%s\n", line) < 0) st = tsl_error(TSL_ERR_IO, "records: write to %s failed", tmp);
    free(line);
  }
  if (fclose(f) != 0 && st == TSL_OK) st = tsl_error(TSL_ERR_IO, "records: write to %s failed", tmp);
  if (st == TSL_OK && !in_place && rename(tmp, target) != 0)
    st = tsl_error(TSL_ERR_IO, "records: cannot rename %s to %s: %s", tmp, target, strerror(errno));
  if (st != TSL_OK && !in_place) unlink(tmp);
  free(tmp);
  return st;
}

const char *tsl_target_family(const char *target, char *buf, size_t n) {
  if (!buf || n == 0) return buf;
  buf[0] = '\0';
  if (!target) return buf;
  bool host = strncmp(target, "host", 4) == 0 && (target[4] == '\0' || target[4] == ' ');
  size_t len = 0;
  const char *p = target;
  while (*p) {
    const char *sp = strchr(p, ' ');
    size_t wl = sp ? (size_t)(sp - p) : strlen(p);
    bool drop = (wl >= 8 && strncmp(p, "-device=", 8) == 0) || (!host && wl >= 6 && strncmp(p, "-mcpu=", 6) == 0);
    if (!drop && wl > 0 && len + wl + 2 < n) {
      if (len) buf[len++] = ' ';
      memcpy(buf + len, p, wl);
      len += wl;
      buf[len] = '\0';
    }
    p += wl;
    while (*p == ' ') p++;
  }
  return buf;
}

bool tsl_record_final_current(const tsl_records *db, const tsl_record *r) {
  if (!db || !r || r->window_steps <= 0) return false;
  for (int i = 0; i < db->n; i++) {
    const tsl_record *o = &db->recs[i];
    if (o != r && tsl_record_in_model(o) && o->timestamp > r->timestamp + TSL_RECORD_SAME_CHECK_S &&
        o->threads == r->threads && strcmp(o->workload, r->workload) == 0 && strcmp(o->target, r->target) == 0)
      return false;
  }
  return true;
}

int tsl_records_best_rank(const tsl_records *db, const char *target, const char *workload, const char *template_name,
                          uint64_t space_hash, const tsl_config_space *space, const tsl_record **out) {
  if (out) *out = NULL;
  if (!db || !target || !workload || !out) return -1;
  char fam[192];
  tsl_target_family(target, fam, sizeof fam);
  int threads = tsl_get_num_threads();
  const tsl_record *best[TSL_RECORD_RANKS] = {NULL};
  for (int i = 0; i < db->n; i++) {
    const tsl_record *r = &db->recs[i];
    if (r->error_no != TSL_MEASURE_OK || strcmp(r->workload, workload) != 0) continue;
    if (template_name && strcmp(r->template_name, template_name) != 0) continue;
    if (space_hash && r->space_hash != space_hash) continue;
    if (space && tsl_config_check(space, &r->config) != TSL_OK) continue;
    if (r->window_steps > 0 && !tsl_record_final_current(db, r)) continue; /* an older check's plan */
    int k = tsl_record_rank(r, target, fam, threads);
    if (k >= 0 && (!best[k] || tsl_record_cost(r) < tsl_record_cost(best[k]))) best[k] = r;
  }
  for (int k = 0; k < TSL_RECORD_RANKS; k++)
    if (best[k]) {
      *out = best[k];
      return k;
    }
  return -1;
}

tsl_status tsl_records_best(const tsl_records *db, const char *target, const char *workload,
                            const char *template_name, uint64_t space_hash, const tsl_record **out,
                            tsl_match_kind *match) {
  if (match) *match = TSL_MATCH_NONE;
  if (out) *out = NULL;
  if (!db || !target || !workload || !out) return tsl_error(TSL_ERR_INVALID, "records best: NULL argument");
  int k = tsl_records_best_rank(db, target, workload, template_name, space_hash, NULL, out);
  if (k >= 0) {
    if (match) *match = k % 16 < 8 ? TSL_MATCH_EXACT : TSL_MATCH_FAMILY;
    return TSL_OK;
  }
  char fam[192];
  tsl_target_family(target, fam, sizeof fam);
  return tsl_error(TSL_ERR_NOT_FOUND, "records: no successful record of %s on %s (family %s)", workload, target, fam);
}

static bool same_config(const tsl_record *r, const tsl_config *c) {
  if (r->config.nknobs != c->nknobs) return false;
  for (int i = 0; i < c->nknobs; i++)
    if (r->config.values[i] != c->values[i]) return false;
  return true;
}

bool tsl_records_has(const tsl_records *db, const char *target, const char *workload, const char *template_name,
                     uint64_t space_hash, const tsl_config *c) {
  for (int i = 0; db && c && i < db->n; i++) {
    const tsl_record *r = &db->recs[i];
    if (!tsl_record_in_model(r) && !tsl_record_is_static(r) && r->space_hash == space_hash && same_config(r, c) &&
        strcmp(r->workload, workload) == 0 && strcmp(r->target, target) == 0 && strcmp(r->template_name, template_name) == 0)
      return true;
  }
  return false;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

static bool same_task(const tsl_record *a, const tsl_record *b) {
  return strcmp(a->workload, b->workload) == 0 && strcmp(a->target, b->target) == 0 &&
         strcmp(a->template_name, b->template_name) == 0 && strcmp(a->context, b->context) == 0 &&
         a->window_steps == b->window_steps && strcmp(a->cost_source, b->cost_source) == 0;
}

static uint64_t hash_task(const tsl_record *r) {
  uint64_t h = 1469598103934665603ull;
  h = fnv(h, r->workload, strlen(r->workload) + 1);
  h = fnv(h, r->target, strlen(r->target) + 1);
  h = fnv(h, r->context, strlen(r->context) + 1);
  h = fnv(h, &r->window_steps, sizeof r->window_steps);
  h = fnv(h, r->cost_source, strlen(r->cost_source) + 1);
  return fnv(h, r->template_name, strlen(r->template_name) + 1);
}

static bool same_point(const tsl_record *a, const tsl_record *b) {
  return same_task(a, b) && a->space_hash == b->space_hash && same_config(a, &b->config);
}

static uint64_t hash_point(const tsl_record *r) {
  uint64_t h = fnv(hash_task(r), &r->space_hash, sizeof r->space_hash);
  int nk = r->config.nknobs > 0 && r->config.nknobs <= TSL_MAX_KNOBS ? r->config.nknobs : 0;
  return fnv(h, r->config.values, sizeof r->config.values[0] * (size_t)nk);
}

/* Keeps the better of each group of records equal under `same` (whose members hash
 * alike); order of first seen. A hash table of the groups kept so far makes it linear;
 * without memory for it, the quadratic scan. */
static void keep_best(tsl_records *db, bool (*same)(const tsl_record *, const tsl_record *),
                      uint64_t (*hash)(const tsl_record *), bool drop_errors) {
  size_t cap = 16;
  while (cap < 2 * (size_t)db->n + 2) cap *= 2;
  int *table = malloc(sizeof *table * cap); /* index into the kept records + 1; 0 empty */
  if (table) memset(table, 0, sizeof *table * cap);
  int n = 0;
  for (int i = 0; i < db->n; i++) {
    const tsl_record *r = &db->recs[i];
    if (drop_errors && r->error_no != TSL_MEASURE_OK) continue;
    int j = n;
    size_t slot = 0;
    if (table) {
      for (slot = (size_t)hash(r) & (cap - 1); table[slot]; slot = (slot + 1) & (cap - 1))
        if (same(&db->recs[table[slot] - 1], r)) {
          j = table[slot] - 1;
          break;
        }
    } else {
      j = 0;
      while (j < n && !same(&db->recs[j], r)) j++;
    }
    if (j == n) {
      if (n != i) db->recs[n] = *r;
      if (table) table[slot] = n + 1;
      n++;
    } else if (tsl_record_cost(r) < tsl_record_cost(&db->recs[j])) {
      db->recs[j] = *r;
    }
  }
  free(table);
  db->n = n;
}

void tsl_records_dedupe(tsl_records *db) {
  if (db) keep_best(db, same_point, hash_point, false);
}

void tsl_records_pick_best(tsl_records *db) {
  if (!db) return;
  /* a final-plan record of an older check is no choice any more (tsl_record_final_current);
   * decided on the whole file first, then dropped */
  char *stale = calloc((size_t)(db->n > 0 ? db->n : 1), 1);
  if (stale) {
    for (int i = 0; i < db->n; i++) stale[i] = db->recs[i].window_steps > 0 && !tsl_record_final_current(db, &db->recs[i]);
    int n = 0;
    for (int i = 0; i < db->n; i++)
      if (!stale[i]) db->recs[n++] = db->recs[i];
    db->n = n;
    free(stale);
  }
  keep_best(db, same_task, hash_task, true);
}

void tsl_record_stamp(tsl_record *r) {
  snprintf(r->tessel_version, sizeof r->tessel_version, "%s", TSL_VERSION);
  snprintf(r->llvm_version, sizeof r->llvm_version, "%s", TSL_LLVM_VERSION);
}
