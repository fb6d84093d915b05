/* tunecli tune's report of the in-situ pass (models/insitu.h). */
#ifndef TESSEL_TOOLS_TUNECLI_INSITU_PRINT_H
#define TESSEL_TOOLS_TUNECLI_INSITU_PRINT_H

#include "models/insitu.h"

/* Prints, per verified layer, the in-model cost (us per call, fastest run) of its default,
 * its isolated records' choice and the pass's choice, the other candidates measured, the
 * final-plan check (window: the pass's option) and the rank correlation; then sums over
 * the model's conv steps. To stdout. */
void tunecli_print_insitu(const tsl_insitu_result *res, int window);

#endif
