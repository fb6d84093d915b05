/* The graph suites, one function per source file; tsl_tests_graph adds them all. */
#ifndef TESSEL_TESTS_GRAPH_TESTS_H
#define TESSEL_TESTS_GRAPH_TESTS_H

void tsl_tests_graph_shared_models(void);
void tsl_tests_graph_zoo_models(void);
void tsl_tests_graph_passes(void);
void tsl_tests_graph_api(void);
void tsl_tests_graph_executor(void);
void tsl_tests_graph_tools(void);
void tsl_tests_graph_conv_dispatch(void);
void tsl_tests_graph_classify(void);
void tsl_tests_graph_gemm_kernel(void);
void tsl_tests_graph_pool_windows(void);
void tsl_tests_graph_activations(void);
void tsl_tests_graph_fuse_gating(void);
void tsl_tests_graph_fuse_epilogue(void);
void tsl_tests_graph_expand_dw(void);
void tsl_tests_graph_claim(void);
void tsl_tests_graph_broadcast_nchwc(void);
void tsl_tests_graph_resize(void);
void tsl_tests_graph_cnn_ops(void);
void tsl_tests_graph_segmentation(void);
void tsl_tests_graph_shared_models_v2(void);
void tsl_tests_graph_convnext_ops(void);
void tsl_tests_graph_norm_passes(void);
void tsl_tests_graph_stem_conv(void);
void tsl_tests_graph_phase_conv(void);
void tsl_tests_graph_transpose(void);
void tsl_tests_graph_fuse_channel_scale(void);
void tsl_tests_graph_squeeze_excite(void);
void tsl_tests_graph_channel_gather(void);

#endif
