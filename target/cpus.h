/* The CPU models tessel accepts for -mcpu=, per architecture, in ONE table with the
 * vector features each implies (tsl_target_cpu_features, target.h, reads the same rows).
 * LLVM's C API can neither list nor validate CPU names, and a CPU of the wrong
 * architecture makes LLVM abort the process ("64-bit code requested on a subtarget that
 * doesn't support it"), so only these pass. */
#ifndef TESSEL_TARGET_CPUS_H
#define TESSEL_TARGET_CPUS_H

#include <stdbool.h>
#include <stddef.h>

#include "target/target.h"

#ifdef __cplusplus
extern "C" {
#endif

/* True when `cpu` is a CPU name of architecture `arch`. Otherwise list (n bytes, may be
 * NULL) holds that architecture's names, ", "-separated, cut at n - 1 bytes. */
bool tsl_target_cpu_known(tsl_arch arch, const char *cpu, char *list, size_t n);

/* The CPU names of `arch` whose implied features (tsl_target_cpu_features) are all enabled
 * ("+x") in `features` and are not none: CPUs a target of that feature string can name
 * with -mcpu= without gaining a feature ("x86-64-v3, haswell, ..., znver3" for
 * x86-64-avx2's). Written ", "-separated into list (n bytes; names that do not fit are
 * left out whole); returns how many were written. */
size_t tsl_target_cpus_within(tsl_arch arch, const char *features, char *list, size_t n);

#ifdef __cplusplus
}
#endif
#endif
