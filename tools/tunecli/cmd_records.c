/* tunecli records show|best|merge|pick-best: inspect and combine records files
 * (tuner/records.h, docs/records.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "op_args.h"
#include "tuner/records.h"
#include "tunecli.h"

static const char *records_usage =
    "usage: tunecli records show FILE [--workload TEXT]\n"
    "       tunecli records best FILE [--target T]\n"
    "       tunecli records merge OUT IN [IN...]\n"
    "       tunecli records pick-best IN OUT\n";

static void print_record(const tsl_record *r) {
  printf("%s | %s | %s | ", r->target, r->algorithm, r->workload);
  for (int k = 0; k < r->nknobs; k++) printf("%s%s=%lld", k ? "," : "", r->knob_names[k], (long long)r->config.values[k]);
  /* a record says where it was measured (records.h: context) */
  if (r->error_no == TSL_MEASURE_OK && tsl_record_in_model(r) && r->window_steps > 0)
    printf(" | %.3f us | in %s, final plan, window of %d steps after\n", tsl_record_cost(r) * 1e6, r->context,
           r->window_steps);
  else if (r->error_no == TSL_MEASURE_OK && tsl_record_in_model(r))
    printf(" | %.3f us | in %s\n", tsl_record_cost(r) * 1e6, r->context);
  else if (r->error_no == TSL_MEASURE_OK)
    printf(" | %.3f us | isolated\n", tsl_record_cost(r) * 1e6);
  else
    printf(" | %s: %s\n", tsl_measure_error_name(r->error_no), r->error_msg);
}

static int load_all(const char *cmd, tsl_records *db, int n, char **paths) {
  for (int i = 0; i < n; i++) {
    tsl_status st = tsl_records_load(db, paths[i], true, stderr);
    if (st != TSL_OK) return tunecli_fail(cmd, st);
  }
  return 0;
}

int tunecli_records(int argc, char **argv) {
  const char *cmd = "records";
  if (argc < 2) {
    fputs(records_usage, stderr);
    return 2;
  }
  const char *sub = argv[0];
  tsl_records *db = NULL;
  tsl_status st = tsl_records_new(&db);
  if (st != TSL_OK) return tunecli_fail(cmd, st);
  int rc = 0;
  if (strcmp(sub, "show") == 0 || strcmp(sub, "best") == 0) {
    const char *filter = NULL, *target = NULL;
    for (int i = 2; i < argc; i++) {
      if (i + 1 < argc && strcmp(argv[i], "--workload") == 0 && sub[0] == 's') filter = argv[++i];
      else if (i + 1 < argc && strcmp(argv[i], "--target") == 0 && sub[0] == 'b') target = argv[++i];
      else {
        fputs(records_usage, stderr);
        tsl_records_free(db);
        return 2;
      }
    }
    if ((rc = load_all(cmd, db, 1, argv + 1)) != 0) goto done;
    if (sub[0] == 's') {
      int ok = 0;
      for (int i = 0; i < db->n; i++) {
        if (filter && !strstr(db->recs[i].workload, filter)) continue;
        print_record(&db->recs[i]);
        ok += db->recs[i].error_no == TSL_MEASURE_OK;
      }
      printf("%d records (%d successful), %d lines skipped\n", db->n, ok, db->skipped);
    } else {
      /* the best per (target, workload) over all templates: what compilation uses */
      tsl_records_pick_best(db);
      for (int i = 0; i < db->n; i++) {
        const tsl_record *r = &db->recs[i], *best = NULL;
        if (target && strcmp(r->target, target) != 0) continue;
        bool first = true;
        for (int j = 0; j < i && first; j++)
          first = strcmp(db->recs[j].workload, r->workload) != 0 || strcmp(db->recs[j].target, r->target) != 0;
        if (!first) continue;
        if (tsl_records_best(db, r->target, r->workload, NULL, 0, &best, NULL) == TSL_OK) print_record(best);
      }
    }
  } else if (strcmp(sub, "merge") == 0 && argc >= 3) {
    if ((rc = load_all(cmd, db, argc - 2, argv + 2)) != 0) goto done;
    int before = db->n;
    tsl_records_dedupe(db);
    if ((st = tsl_records_save(db, argv[1])) != TSL_OK) {
      rc = tunecli_fail(cmd, st);
      goto done;
    }
    printf("merged %d records into %d (one per configuration, the fastest) in %s\n", before, db->n, argv[1]);
  } else if (strcmp(sub, "pick-best") == 0 && argc == 3) {
    if ((rc = load_all(cmd, db, 1, argv + 1)) != 0) goto done;
    int before = db->n;
    tsl_records_pick_best(db);
    if ((st = tsl_records_save(db, argv[2])) != TSL_OK) {
      rc = tunecli_fail(cmd, st);
      goto done;
    }
    printf("kept the best of %d records per target, workload and template: %d in %s\n", before, db->n, argv[2]);
  } else {
    fputs(records_usage, stderr);
    rc = 2;
  }
done:
  tsl_records_free(db);
  return rc;
}
