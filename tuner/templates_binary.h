/* Registration of the bitserial conv templates (schedule/templates/bitserial.h) with the
 * tuner's template registry, so `tunecli tune` and the records dispatch cover the binary
 * networks' convolutions (models/zoo_binary.h). */
#ifndef TESSEL_TUNER_TEMPLATES_BINARY_H
#define TESSEL_TUNER_TEMPLATES_BINARY_H

/* Registers every template of tsl_bitserial_templates (idempotent; called by
 * tsl_tuner_register_templates). */
void tsl_tuner_register_binary_templates(void);

#endif
