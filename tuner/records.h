/* Tuning records: every measurement the tuner makes, one JSON object a line (json-c),
 * appended to a file; the schema is docs/records.md (AutoTVM's input/config/result/
 * version shape, plus device fingerprint, threads, tool versions and the config
 * space's hash).
 *
 * Writing: tsl_record_append formats the whole line and appends it with ONE write() on
 * a descriptor opened with O_APPEND, so concurrent writers never interleave lines and a
 * crash loses at most the line being written (flushed per line: no user-space buffer).
 * Reading: a line that does not parse or has a field of the wrong type is skipped with a
 * warning naming the file and line number; every good line is kept.
 *
 * Lookup (what compilation uses): tsl_records_best finds the fastest successful record
 * of a workload on the exact target, then on the same target family; never another
 * target family or another workload. Target family: the target string without
 * " -device=..."; for named targets also without " -mcpu=..." (same ISA, tuned on
 * another CPU of it); "host -mcpu=X" keeps its CPU (host records of another machine
 * are another family). Within each, in-model records (context: measured inside a
 * model by the in-situ pass, models/insitu.h) rank before isolated ones.
 */
#ifndef TESSEL_TUNER_RECORDS_H
#define TESSEL_TUNER_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "schedule/template.h"
#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error numbers of a measurement (result[1] of a record). */
typedef enum tsl_measure_error {
  TSL_MEASURE_OK = 0,
  TSL_MEASURE_INSTANTIATION = 1, /* the template refused the config (apply failed) */
  TSL_MEASURE_COMPILE = 2,       /* lowering or LLVM failed, or the worker died while building */
  TSL_MEASURE_RUNTIME = 3,       /* the kernel returned an error or the worker died running it */
  TSL_MEASURE_WRONG_ANSWER = 4,  /* the output differs from the reference */
  TSL_MEASURE_BUILD_TIMEOUT = 5, /* building took longer than the build timeout */
  TSL_MEASURE_RUN_TIMEOUT = 6,   /* checking + timing took longer than the run timeout */
  TSL_MEASURE_ERROR_COUNT_
} tsl_measure_error;

/* "ok", "instantiation", "compile", "runtime", "wrong_answer", "build_timeout",
 * "run_timeout"; "unknown" otherwise. */
const char *tsl_measure_error_name(int e);

#define TSL_RECORD_MAX_COSTS 32
#define TSL_RECORD_KEY_LEN 1024

/* The machine a record was measured on. */
typedef struct tsl_device_info {
  char cpu[128]; /* /proc/cpuinfo "model name" (or "unknown") */
  int cores;     /* online CPUs */
  char isa[256]; /* comma-separated ISA features of note the target enables: avx2,fma,... */
} tsl_device_info;

/* This machine's fingerprint, with the ISA list taken from target t. */
void tsl_device_info_host(const tsl_target *t, tsl_device_info *out);

typedef struct tsl_record {
  char target[192];                  /* canonical target string (tsl_target_str) */
  char task[64];                     /* the operator measured (the template's op) */
  char workload[TSL_RECORD_KEY_LEN]; /* the FAMILY workload key (ops/workload.h) */
  char algorithm[96];                /* the algorithm (ops/algorithm.h) */
  char template_name[96];
  uint64_t space_hash;               /* tsl_space_hash of the space the config is from */
  int64_t config_index;              /* index in that space (-1 unknown) */
  int nknobs;
  char knob_names[TSL_MAX_KNOBS][TSL_KNOB_NAME_LEN];
  tsl_knob_kind knob_kinds[TSL_MAX_KNOBS];
  tsl_config config;                 /* values in knob order */
  int ncosts;
  double costs[TSL_RECORD_MAX_COSTS]; /* seconds per call, every repeat */
  int error_no;                      /* tsl_measure_error */
  char error_msg[256];
  double all_cost;                   /* seconds the whole measurement took (build + run) */
  double compile_s;                  /* seconds of lowering + JIT compilation */
  double timestamp;                  /* seconds since the Unix epoch */
  tsl_device_info device;
  int threads;                       /* thread-pool threads while timing */
  char tessel_version[32], llvm_version[32];
  char context[128];                 /* where it was measured: "" = in isolation (the
                                        runner's time evaluator, hot caches); "model NAME"
                                        = inside that model's run (the in-situ pass of
                                        models/insitu.h): costs are per-call times of
                                        the layer's steps in whole-model runs */
  int window_steps;                  /* in-model records only. 0: costs are the seconds per
                                        call of the layer's own steps, in a plan whose other
                                        layers ran their candidates too (the in-situ pass's
                                        variants). > 0: measured in the final plan (the
                                        pass's final-plan check, models/insitu.h): costs are
                                        the seconds per run of the layer's steps and of the
                                        window_steps plan steps after each of them (the
                                        readers of its output, whose time its choice moves
                                        too); only records of the same window compare */
  char cost_source[16];              /* "" = measured (on this machine or a --device);
                                        "static" = estimated by the static cost model
                                        (tuner/cost_static.h): costs are estimates */
  char cost_model[32];               /* the static model's version (TSL_COST_STATIC_MODEL)
                                        when cost_source is "static", else "" */
} tsl_record;

/* True for a record whose costs the static cost model estimated (cost_source "static"). */
bool tsl_record_is_static(const tsl_record *r);

/* Sets the tessel and LLVM version fields to this build's. */
void tsl_record_stamp(tsl_record *r);

/* The smallest of the costs (seconds); +inf for an error record or one without costs.
 * The minimum, not the mean: on a shared machine other work only ever slows a sample
 * down, and one preempted sample would otherwise decide between two candidates. The
 * same for an in-model record (context non-empty): the cold caches a layer meets in the
 * model are there in every run, so its fastest run keeps them and drops the load (the
 * medians of a loaded 2-core machine were up to 10x a layer's fastest run and ranked
 * candidates by the other job's scheduling). */
double tsl_record_cost(const tsl_record *r);

/* Whether r's result is one a measurement can give: every cost finite and >= 0, and a
 * successful record (error_no TSL_MEASURE_OK) has at least one cost, each > 0 seconds
 * (a 0 s cost would win every comparison), and window_steps >= 0, 0 without a context.
 * Errors: TSL_ERR_INVALID naming the cost ("costs[2] = 0 s: a successful record's costs
 * must be > 0") or the window. */
tsl_status tsl_record_check(const tsl_record *r);

/* Appends r as one line to `path` (created when absent) with a single write(), after
 * tsl_record_check (a record the reader would skip is never written).
 * Errors: TSL_ERR_INVALID (tsl_record_check), TSL_ERR_IO (naming the file and errno's
 * text), TSL_ERR_NOMEM. */
tsl_status tsl_record_append(const char *path, const tsl_record *r);

/* The record as one JSON line without the newline, malloc'd (caller frees); NULL when
 * out of memory. */
char *tsl_record_to_json(const tsl_record *r);

/* Parses one line. Errors: TSL_ERR_PARSE naming the first bad field ("result[0][2]:
 * expected a number", or a result tsl_record_check refuses: "result[0][0]: expected a
 * cost > 0 s for a successful record"). */
tsl_status tsl_record_from_json(const char *line, tsl_record *out);

/* An in-memory set of records. */
typedef struct tsl_records {
  int n, cap;
  tsl_record *recs;
  int skipped; /* lines skipped by the loads so far */
} tsl_records;

tsl_status tsl_records_new(tsl_records **out);
void tsl_records_free(tsl_records *db);
/* Appends a copy of r. Errors: TSL_ERR_INVALID (tsl_record_check), TSL_ERR_NOMEM. */
tsl_status tsl_records_add(tsl_records *db, const tsl_record *r);

/* Adds every good line of `path`; each bad line is skipped with the warning
 * "tessel: warning: records FILE:LINE: skipped (WHY)" on `warn` (may be NULL) and
 * counted in db->skipped. A missing file is an error only when must_exist.
 * Errors: TSL_ERR_IO (unreadable file, or missing and must_exist), TSL_ERR_NOMEM. */
tsl_status tsl_records_load(tsl_records *db, const char *path, bool must_exist, FILE *warn);

/* Writes every record of db to `path` (truncating it), one a line, through a temporary
 * file renamed over it. Errors: TSL_ERR_IO, TSL_ERR_NOMEM. */
tsl_status tsl_records_save(const tsl_records *db, const char *path);

/* The family string of a target string (see the top of this file) into buf. */
const char *tsl_target_family(const char *target, char *buf, size_t n);

typedef enum tsl_match_kind {
  TSL_MATCH_NONE = 0,
  TSL_MATCH_EXACT = 1,  /* the same target string */
  TSL_MATCH_FAMILY = 2  /* the same target family */
} tsl_match_kind;

/* True for a record measured inside a model (context non-empty). */
bool tsl_record_in_model(const tsl_record *r);

/* Records of one final-plan check share their timestamp (seconds; this much apart still
 * counts as the same check). */
#define TSL_RECORD_SAME_CHECK_S 1e-3

/* Whether final-plan record r (window_steps > 0) of db is current: no in-model record of
 * db of the same workload, target and thread count is newer (by more than
 * TSL_RECORD_SAME_CHECK_S). A newer final-plan check measured another plan, and a newer
 * in-model record of the variants is a later in-situ pass that did not check this layer
 * (its choice there is the default, or it was not checked): either way the older pair of
 * costs no longer says which config runs faster in the model. False for a record that
 * is not a final-plan one. */
bool tsl_record_final_current(const tsl_records *db, const tsl_record *r);

/* Ranks of tsl_record_rank: 0..TSL_RECORD_RANKS-1. */
#define TSL_RECORD_RANKS 32

/* How well record r matches a lookup on `target` (whose family is `family`,
 * tsl_target_family) by a process running `threads` pool threads: a rank, lower first,
 * or -1 when r is of neither target nor its family. Ranks, most significant first:
 * measured records before static estimates (16..31: tsl_record_is_static; a measurement
 * of the target or its family always wins, and a static estimate is never compared
 * with a measured cost); the exact target before the family (rank % 16 < 8); records timed with `threads` threads before
 * those timed with another count (a schedule tuned for 2 threads can lose at 1: its
 * parallel split and its tiles were chosen for another share of the caches); in-model
 * records before isolated ones (their costs are not comparable, and they are the
 * verified choice), and among in-model records those of the final plan (window_steps
 * > 0, rank % 4 == 0) before those of the pass's variants (rank % 4 == 1; isolated 2).
 * 0..31. */
int tsl_record_rank(const tsl_record *r, const char *target, const char *family, int threads);

/* The successful record of `workload` with the least cost (tsl_record_cost) among those
 * of the best rank (tsl_record_rank, with the current tsl_get_num_threads()): measured
 * records before static estimates; on `target` exactly, else on its family; within each, timed with the current thread
 * count first; within that, in-model records first (when any in-model record matches,
 * only in-model records are compared), those of the final plan (window_steps > 0)
 * before the others; a final-plan record only while current (tsl_record_final_current:
 * the pair of the newest check, so that records of one check compare only with each
 * other). template_name non-NULL restricts to that
 * template; space_hash non-zero restricts to records of that space (older spaces are
 * stale). *out points into db (valid until db changes); *match (may be NULL) says how
 * it matched. Errors: TSL_ERR_INVALID (NULL arguments), TSL_ERR_NOT_FOUND (no such
 * record: *out NULL, *match TSL_MATCH_NONE). Never falls back to another family or
 * workload. */
tsl_status tsl_records_best(const tsl_records *db, const char *target, const char *workload,
                            const char *template_name, uint64_t space_hash, const tsl_record **out,
                            tsl_match_kind *match);

/* The search of tsl_records_best, further restricted to records whose config is a point
 * of `space` when space is not NULL (an invalid config must not hide a valid slower
 * one). Returns the rank of the record found (tsl_record_rank: 0..31; rank % 16 below 8
 * the exact target, 16 and above a static estimate) with *out pointing into db (valid until db changes), or -1 with *out NULL
 * when no record qualifies or db, target, workload or out is NULL. Sets no error. */
int tsl_records_best_rank(const tsl_records *db, const char *target, const char *workload, const char *template_name,
                          uint64_t space_hash, const tsl_config_space *space, const tsl_record **out);

/* True when db holds an isolated measured record (success or error) of exactly this
 * target, workload, template, space hash and config: the candidate was measured
 * already (resume). In-model records and static estimates do not count. */
bool tsl_records_has(const tsl_records *db, const char *target, const char *workload, const char *template_name,
                     uint64_t space_hash, const tsl_config *c);

/* Keeps one record per (target, workload, template, space hash, config, context, window
 * steps, cost source): the successful one of least cost, else the first error record (merging
 * files). */
void tsl_records_dedupe(tsl_records *db);

/* Keeps, per (target, workload, template, context, window steps, cost source), only the
 * successful record of least cost (AutoTVM's pick_best) — error records are dropped, and
 * final-plan records that are no longer current (tsl_record_final_current) first; an
 * in-model record and the isolated one of the same template both stay. Order: first
 * occurrence. */
void tsl_records_pick_best(tsl_records *db);

#ifdef __cplusplus
}
#endif
#endif
