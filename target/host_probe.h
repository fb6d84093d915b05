/* The seam between the target description (target/, no LLVM) and host detection.
 *
 * Parsing "host" needs LLVM's view of the running machine: its default triple, host
 * CPU name and host CPU features (LLVMGetDefaultTargetTriple, LLVMGetHostCPUName,
 * LLVMGetHostCPUFeatures), which the LLVM-free target/ cannot ask for itself. So
 * target/ declares the probe here and codegen/host_probe.c defines it: a link-time
 * seam, resolved inside libtessel, where both are. Nothing under target/ includes a
 * codegen/ header; a program that links target/ without codegen/ must define this
 * function itself (e.g. a test double).
 *
 * target/target.c calls it once per process (the first "host" parsed, or the first
 * tsl_target_detected_host / tsl_target_runs_on_host), then derives everything else
 * (architecture, vector width, cache sizes, TSL_HOST_TARGET) without LLVM.
 */
#ifndef TESSEL_TARGET_HOST_PROBE_H
#define TESSEL_TARGET_HOST_PROBE_H

#include "target/target.h"
#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the machine's LLVM triple, CPU name and feature string into t->triple, t->cpu
 * and t->features (each truncated to fit); touches no other field. Errors:
 * TSL_ERR_UNSUPPORTED when the feature string does not fit in t->features (the
 * message says how long it is; the three fields are written all the same). */
tsl_status tsl_target_probe_host(tsl_target *t);

#ifdef __cplusplus
}
#endif
#endif
