/* tunecli commands: each takes the arguments after its name and returns an exit code
 * (0 success, 1 failure, 2 usage error). */
#ifndef TESSEL_TOOLS_TUNECLI_H
#define TESSEL_TOOLS_TUNECLI_H

int tunecli_show(int argc, char **argv);
int tunecli_run_op(int argc, char **argv);
int tunecli_list(int argc, char **argv);
int tunecli_peak(int argc, char **argv);
int tunecli_run(int argc, char **argv);
int tunecli_tune(int argc, char **argv);
int tunecli_tune_op(int argc, char **argv);
int tunecli_records(int argc, char **argv);
int tunecli_report(int argc, char **argv);
int tunecli_compile(int argc, char **argv);
int tunecli_rpc_server(int argc, char **argv);
int tunecli_rpc_info(int argc, char **argv);

#endif
