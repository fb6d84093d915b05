/* The table of codegen backends (codegen/target_backend.h). */
#include "codegen/target_backend.h"

#include <stddef.h>

static const tsl_target_backend *const backends[] = {&tsl_target_backend_x86, &tsl_target_backend_arm};
#define NBACKENDS ((int)(sizeof backends / sizeof backends[0]))

const tsl_target_backend *tsl_target_backend_of(tsl_arch arch) {
  for (int i = 0; i < NBACKENDS; i++)
    if (backends[i]->arch == arch) return backends[i];
  return NULL;
}
