/* libFuzzer harness: the tuning records reader (tuner/records.h, docs/fuzzing.md).
 *
 * Each input is the content of a records file (one JSON object a line). It is loaded
 * with tsl_records_load through a memory file (memfd: no disk traffic), which must keep
 * every good line and skip each bad one with a warning (discarded here). Every record
 * that loaded is written back with tsl_record_to_json and parsed again: the result
 * must parse and print the same (the writer and the reader agree on every field). Then
 * the lookups the compiler makes run over the set. Crashes, leaks, UBSan reports and
 * round trips that differ are faults. Seeds: records written by tsl_record_to_json
 * (tests/fuzz/fuzz_seeds.c). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tuner/records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char path[64];
static FILE *sink;

static void round_trip(const tsl_record *r) {
  char *line = tsl_record_to_json(r);
  if (!line) return; /* out of memory */
  tsl_record *back = malloc(sizeof *back);
  if (!back) abort();
  if (tsl_record_from_json(line, back) != TSL_OK) {
    fprintf(stderr, "fuzz_records: a written record does not parse: %s\n  %s\n", tsl_last_error(), line);
    abort();
  }
  char *again = tsl_record_to_json(back);
  if (again && strcmp(line, again) != 0) {
    fprintf(stderr, "fuzz_records: a record changes in a write-read-write round trip:\n  %s\n  %s\n", line, again);
    abort();
  }
  free(again);
  free(back);
  free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (memfd < 0) {
    memfd = memfd_create("fuzz-records", 0);
    if (memfd < 0) abort();
    snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
    if (!(sink = fopen("/dev/null", "w"))) abort();
  }
  if (ftruncate(memfd, 0) != 0 || pwrite(memfd, data, size, 0) != (ssize_t)size) abort();
  tsl_records *db = NULL;
  if (tsl_records_new(&db) != TSL_OK) return 0;
  if (tsl_records_load(db, path, true, sink) == TSL_OK) {
    for (int i = 0; i < db->n; i++) round_trip(&db->recs[i]);
    const tsl_record *best = NULL;
    for (int i = 0; i < db->n && i < 4; i++) {
      const tsl_record *r = &db->recs[i];
      (void)tsl_records_best(db, r->target, r->workload, NULL, 0, &best, NULL);
      (void)tsl_records_best(db, r->target, r->workload, r->template_name, r->space_hash, &best, NULL);
      (void)tsl_records_has(db, r->target, r->workload, r->template_name, r->space_hash, &r->config);
    }
    tsl_records_dedupe(db);
    tsl_records_pick_best(db);
  }
  tsl_records_free(db);
  return 0;
}
