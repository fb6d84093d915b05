/* Building tuning candidates for a remote device (internal to tuner/remote.c).
 *
 * Each candidate is applied, lowered and cross-compiled (tsl_aot_compile) in a child
 * forked from the calling thread, under the build timeout, so a crash or hang in the
 * compiler is the candidate's error record. Call it only while no other thread of ours
 * is working: fork copies one thread, and a lock another thread holds at that moment
 * (an allocator's, LLVM's) would stay locked in the child forever. That is why the pool
 * (remote.c) builds a whole batch first, on the calling thread, and only then starts
 * its per-device threads, which upload and measure and never fork. */
#ifndef TSL_TUNER_REMOTE_BUILD_H
#define TSL_TUNER_REMOTE_BUILD_H

#include "tuner/runner.h"

/* Builds cs[0..n) into dir/cand<i>.so, up to jobs children at a time (jobs < 1: the
 * number of online cores), each under o->build_timeout_s seconds from its start. res[i]
 * is reset and gets compile_s and, on a candidate failure, error_no (instantiation,
 * compile, build timeout) and error_msg; its object exists exactly when res[i].error_no
 * is TSL_MEASURE_OK. Errors (not candidate failures): TSL_ERR_RUNTIME (pipe/fork), when
 * the children already started are reaped; the caller removes dir and what is in it. */
tsl_status tsl_remote_build_batch(const char *dir, const tsl_target *t, const tsl_te_program *p,
                                  const tsl_measure_opts *o, const tsl_template *tpl, const tsl_config_space *s,
                                  const tsl_config *cs, int n, int jobs, tsl_measure_result *res);

/* The object path of candidate i in dir (as tsl_remote_build_batch writes it). */
void tsl_remote_build_path(const char *dir, int i, char *out, size_t n);

#endif
