/* The graph module's entry point for the test runner. */
#include "graph_tests.h"

void tsl_tests_graph(void);

void tsl_tests_graph(void) {
  tsl_tests_graph_executor();
  tsl_tests_graph_passes();
  tsl_tests_graph_api();
  tsl_tests_graph_tools();
  tsl_tests_graph_conv_dispatch();
  tsl_tests_graph_classify();
  tsl_tests_graph_gemm_kernel();
  tsl_tests_graph_pool_windows();
  tsl_tests_graph_activations();
  tsl_tests_graph_fuse_gating();
  tsl_tests_graph_fuse_epilogue();
  tsl_tests_graph_expand_dw();
  tsl_tests_graph_claim();
  tsl_tests_graph_broadcast_nchwc();
  tsl_tests_graph_resize();
  tsl_tests_graph_cnn_ops();
  tsl_tests_graph_segmentation();
  tsl_tests_graph_shared_models_v2();
  tsl_tests_graph_convnext_ops();
  tsl_tests_graph_norm_passes();
  tsl_tests_graph_fuse_channel_scale();
  tsl_tests_graph_squeeze_excite();
  tsl_tests_graph_channel_gather();
  tsl_tests_graph_stem_conv();
  tsl_tests_graph_phase_conv();
  tsl_tests_graph_transpose();
  tsl_tests_graph_zoo_models();
  tsl_tests_graph_shared_models();
}
