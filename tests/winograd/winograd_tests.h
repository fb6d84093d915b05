/* The winograd suite (module `winograd`): transform generation (test_transform.c),
 * Winograd convolution against the naive references (test_conv.c), the error study
 * (test_accuracy.c, with the larger kernels F(m, 4) and F(m, 5)). */
#ifndef TESSEL_TESTS_WINOGRAD_TESTS_H
#define TESSEL_TESTS_WINOGRAD_TESTS_H

void tsl_tests_winograd_transform(void);
void tsl_tests_winograd_conv(void);
void tsl_tests_winograd_defaults(void);
void tsl_tests_winograd_accuracy(void);

#endif
