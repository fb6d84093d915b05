/* The programs the schedule-text harness (fuzz_schedule_text.c) schedules, shared with
 * the seed generator (fuzz_seeds.c) so that a seed's first byte picks the program its
 * text was printed for. */
#ifndef TESSEL_TESTS_FUZZ_PROGRAMS_H
#define TESSEL_TESTS_FUZZ_PROGRAMS_H

#include "dsl/te.h"

#define FUZZ_MAX_PROGRAMS 64

/* Instantiates the built-in operators of the registry (ops/registry.h) at their
 * example shapes, in registry order (all but Winograd F(4x4) and F(6x6), whose lowering
 * is too slow to fuzz: fuzz_programs.c), in the current IR arena: up to max programs into
 * progs (and each operator's name into ops, may be NULL). Operators whose example does
 * not instantiate are left out. Returns how many were written. */
int fuzz_programs(const tsl_te_program **progs, const char **ops, int max);

#endif
