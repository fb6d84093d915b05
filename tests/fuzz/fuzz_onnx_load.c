/* libFuzzer harness: ONNX import from bytes (docs/fuzzing.md).
 *
 * Each input is a serialized ModelProto, loaded with tsl_graph_load_onnx_memory (no
 * external data: no base folder) and, when it loads, checked with tsl_graph_check and
 * printed; the same bytes are also decoded as a lone TensorProto (the format of ONNX
 * test data files). Either must give a graph/tensor or an error, never a crash, a leak
 * or undefined behaviour. Seeds: small models (tests/fuzz/fuzz_seeds.c) and the ONNX
 * node tests of Debian's libonnx-testdata. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/graph.h"
#include "models/onnx.h"
#include "tessel/tensor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink; /* tsl_graph_print's output, discarded */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!sink && !(sink = fopen("/dev/null", "w"))) abort();
  tsl_graph *g = NULL;
  if (tsl_graph_load_onnx_memory(data, size, NULL, &g) == TSL_OK) {
    if (tsl_graph_check(g) != TSL_OK) {
      fprintf(stderr, "fuzz_onnx_load: a loaded graph fails tsl_graph_check: %s\n", tsl_last_error());
      abort();
    }
    tsl_graph_print(g, sink);
    tsl_graph_free(g);
  } else if (g) {
    fprintf(stderr, "fuzz_onnx_load: *out set on failure\n");
    abort();
  }
  tsl_tensor *t = NULL;
  char name[64];
  if (tsl_onnx_tensor_from_memory(data, size, &t, name, sizeof name) == TSL_OK) {
    /* every element must be readable: the tensor holds the bytes its shape says */
    int64_t n = tsl_tensor_numel(t);
    volatile double acc = 0;
    for (int64_t i = 0; i < n && i < 4096; i++) acc += tsl_tensor_get_f64(t, i);
    (void)acc;
    tsl_tensor_free(t);
  }
  return 0;
}
