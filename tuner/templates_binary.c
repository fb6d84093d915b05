/* Registers the bitserial conv templates (templates_binary.h). */
#include "tuner/templates_binary.h"

#include "schedule/template.h"
#include "schedule/templates/bitserial.h"

void tsl_tuner_register_binary_templates(void) {
  int n = 0;
  const tsl_template *t = tsl_bitserial_templates(&n);
  for (int i = 0; i < n; i++) tsl_template_register(&t[i]); /* re-registering the same pointer is a no-op */
}
