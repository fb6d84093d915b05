/* The x86-64 psABI level of the machine the tests run on, as the compiler's own CPU
 * detection sees it (__builtin_cpu_supports): an oracle independent of tessel's
 * LLVM-based host detection, for tests that decide which x86 targets must run here. */
#ifndef TESSEL_TESTS_X86_LEVEL_H
#define TESSEL_TESTS_X86_LEVEL_H

#include <stdlib.h>
#include <string.h>

/* 4 with AVX-512 F/BW/CD/DQ/VL (x86-64-v4), 3 with AVX2/FMA/BMI2/F16C/MOVBE
 * (x86-64-v3), else 2; 0 on another architecture. */
static inline int tsl_test_x86_level(void) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("x86-64-v4") ? 4 : __builtin_cpu_supports("x86-64-v3") ? 3 : 2;
#else
  return 0;
#endif
}

/* The level tessel must treat this machine as: the machine's, capped by TSL_HOST_TARGET
 * when it names x86-64-avx2 (3) or x86-64-avx512 (4). */
static inline int tsl_test_x86_effective_level(void) {
  int level = tsl_test_x86_level();
  const char *f = getenv("TSL_HOST_TARGET");
  if (f && strncmp(f, "x86-64-avx2", 11) == 0 && level > 3) level = 3;
  return level;
}

#endif
