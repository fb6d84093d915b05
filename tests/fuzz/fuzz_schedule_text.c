/* libFuzzer harness: the schedule text parser (tsl_schedule_from_text, schedule/
 * schedule.h; docs/fuzzing.md).
 *
 * Input: one byte choosing a program (a built-in operator at its example shapes,
 * fuzz_programs.h), then schedule text. Text that parses and applies must also lower
 * (or be refused by lowering with an error), and it must print back to text that
 * parses into a schedule printing the same text again (the text form round-trips).
 * Crashes, leaks, UBSan reports and texts that do not round-trip are faults. Seeds: the
 * default schedule and the template schedules (default and sampled configs) of each
 * program, printed (fuzz_seeds.c). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_programs.h"
#include "ir/arena.h"
#include "schedule/lower.h"
#include "schedule/schedule.h"

#define MAX_TEXT 8192

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const tsl_te_program *programs[FUZZ_MAX_PROGRAMS];
static int nprograms = -1;

static void check_round_trip(const tsl_te_program *p, const tsl_schedule *s) {
  char *text = tsl_schedule_to_string(s);
  if (!text) return;
  tsl_schedule *back = NULL;
  if (tsl_schedule_from_text(p, text, &back) != TSL_OK) {
    fprintf(stderr, "fuzz_schedule_text: a printed schedule does not parse back: %s\n%s", tsl_last_error(), text);
    abort();
  }
  char *again = tsl_schedule_to_string(back);
  if (again && strcmp(text, again) != 0) {
    fprintf(stderr, "fuzz_schedule_text: the printed schedule changes when parsed back:\n%s---\n%s", text, again);
    abort();
  }
  free(again);
  tsl_schedule_free(back);
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (nprograms < 0) {
    /* the programs live for the process in the thread's default arena */
    nprograms = fuzz_programs(programs, NULL, FUZZ_MAX_PROGRAMS);
    if (nprograms == 0) abort();
  }
  if (size < 1 || size > MAX_TEXT) return 0;
  const tsl_te_program *p = programs[data[0] % nprograms];
  char *text = malloc(size);
  if (!text) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  tsl_arena *arena = tsl_arena_new(), *prev = tsl_arena_set_current(arena);
  tsl_schedule *s = NULL;
  if (tsl_schedule_from_text(p, text, &s) == TSL_OK) {
    check_round_trip(p, s);
    tsl_func *f = NULL;
    (void)tsl_lower(s, "fuzz_kernel", &f);
    tsl_schedule_free(s);
  }
  tsl_arena_set_current(prev);
  tsl_arena_free(arena);
  free(text);
  return 0;
}
