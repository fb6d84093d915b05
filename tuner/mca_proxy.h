/* Timing a CPU with another CPU's scheduling model: LLVM 19 has no scheduling model of
 * its own for some CPUs it compiles for, and llvm-mca times their code with a related
 * CPU's model. For Zen 5 (`znver5`) that is Zen 4's (llvm-mca's resource names say
 * `Zn4*`), which differs from the Zen 5 core where the candidates' hot loops spend
 * their time (docs/cost_static.md, "The Zen 4 model on Zen 5"):
 *   - Zen 4 executes a 512-bit operation in two passes of its 256-bit pipes; Zen 5 has
 *     512-bit pipes and executes it in one (AMD, Zen 5 Software Optimization Guide,
 *     57647; Computex 2024 keynote: "full 512-bit AVX-512 datapath"). The proxy: a zmm
 *     instruction is timed as its ymm form (same instruction, same pipes, one pass),
 *     embedded broadcasts {1to16}/{1to8} as {1to8}/{1to4}.
 *   - Zen 4's model puts a broadcast from memory (vbroadcastss/sd, vpbroadcastd/q with a
 *     memory source) on an FP pipe besides the load (Zn4FP1 + Zn4FP45), so 18
 *     broadcasts next to 36 FMAs cost 35 cycles an iteration instead of the FMAs' 18.
 *     Measured on a Zen 5 host (squeezenet1_1 features.6.squeeze, 1 thread), a kernel
 *     with 36 FMAs and 18 broadcasts an iteration runs as fast per FMA as one with the
 *     broadcasts folded into 27 FMAs (26.8 against 29.5 us for the same FMA count): the
 *     proxy times a broadcast from memory as a plain load of its width.
 * The rewritten block is only ever given to llvm-mca; it is not code to run.
 */
#ifndef TESSEL_TUNER_MCA_PROXY_H
#define TESSEL_TUNER_MCA_PROXY_H

#include <stdbool.h>

#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether blocks for `cpu` are rewritten for the proxy model (znver5). */
bool tsl_mca_proxy_applies(const char *cpu);

/* The x86 AT&T `block` (instructions one a line) as llvm-mca's proxy model of `cpu`
 * should time it, into *out (malloc'd; the caller frees). When no rewrite applies
 * (another CPU, or a block without zmm registers or memory broadcasts) *out is NULL.
 * A rewritten line the assembler refuses (an instruction with no ymm form, e.g.
 * vextractf64x4 from zmm) is the caller's to detect (llvm-mca fails on the block) and
 * to time in its original form. Errors: TSL_ERR_INVALID (NULL arguments),
 * TSL_ERR_NOMEM. */
tsl_status tsl_mca_proxy_block(const char *cpu, const char *block, char **out);

#ifdef __cplusplus
}
#endif
#endif
