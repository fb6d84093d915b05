/* tunecli rpc-server / rpc-info: the device RPC server (device/rpc_server.c, docs/rpc.md)
 * and a handshake with one.
 *
 * rpc-server runs the AArch64 tessel-rpc-server: directly on an AArch64 host, else
 * through qemu-aarch64 with Debian's cross sysroot (binfmt_misc is not relied on). The
 * server binary is --server PATH, else $TSL_RPC_SERVER, else the one the build made
 * (tests/rpc/tessel-rpc-server-aarch64 next to this tunecli's build folder, or
 * build-aarch64/tessel-rpc-server from cross/build.sh). Every other option goes to the
 * server (--host, --port, --key, --timeout, caps; see docs/rpc.md). The process is
 * replaced by the server (exec), so signals reach it directly. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "op_args.h"
#include "tuner/remote.h"
#include "tunecli.h"

/* The server binary next to this executable's build tree, or NULL. */
static const char *find_server(char *buf, size_t n) {
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len <= 0) return NULL;
  exe[len] = '\0';
  char *slash = strrchr(exe, '/');
  if (!slash) return NULL;
  *slash = '\0';
  static const char *const rel[] = {"../tests/rpc/tessel-rpc-server-aarch64", "../../build-aarch64/tessel-rpc-server",
                                    "tessel-rpc-server"};
  for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
    snprintf(buf, n, "%s/%s", exe, rel[i]);
    if (access(buf, X_OK) == 0) return buf;
  }
  return NULL;
}

int tunecli_rpc_server(int argc, char **argv) {
  const char *server = getenv("TSL_RPC_SERVER"), *qemu_cpu = "cortex-a53";
  char **args = calloc((size_t)argc + 8, sizeof *args);
  if (!args) return 1;
  int n = 0;
  char found[PATH_MAX + 64];
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--server") == 0 && i + 1 < argc) server = argv[++i];
    else if (strcmp(argv[i], "--qemu-cpu") == 0 && i + 1 < argc) qemu_cpu = argv[++i];
    else args[n++] = argv[i];
  }
  if (!server || !server[0]) server = find_server(found, sizeof found);
  if (!server) {
    fprintf(stderr, "tunecli rpc-server: error: no tessel-rpc-server binary found; build it (ninja builds "
                    "tests/rpc/tessel-rpc-server-aarch64, or cross/build.sh) or give --server PATH\n");
    free(args);
    return 1;
  }
  struct utsname u;
  bool native = uname(&u) == 0 && strcmp(u.machine, "aarch64") == 0;
  char **full = calloc((size_t)n + 8, sizeof *full);
  if (!full) {
    free(args);
    return 1;
  }
  int k = 0;
  if (!native) {
    full[k++] = "qemu-aarch64";
    full[k++] = "-cpu";
    full[k++] = (char *)qemu_cpu;
    full[k++] = "-L";
    full[k++] = "/usr/aarch64-linux-gnu";
  }
  full[k++] = (char *)server;
  for (int i = 0; i < n; i++) full[k++] = args[i];
  full[k] = NULL;
  fflush(stdout);
  execvp(full[0], full);
  fprintf(stderr, "tunecli rpc-server: error: cannot run %s: %s%s\n", full[0], strerror(errno),
          native ? "" : " (install qemu-user)");
  free(full);
  free(args);
  return 1;
}

int tunecli_rpc_info(int argc, char **argv) {
  const char *device = NULL, *key = getenv("TSL_RPC_KEY");
  double timeout = 10;
  for (int i = 0; i < argc; i++) {
    bool has = i + 1 < argc;
    if (strcmp(argv[i], "--device") == 0 && has) device = argv[++i];
    else if (strcmp(argv[i], "--key") == 0 && has) key = argv[++i];
    else if (strcmp(argv[i], "--timeout") == 0 && has) timeout = atof(argv[++i]);
    else {
      fprintf(stderr, "tunecli rpc-info: error: unknown option or missing value '%s' (see tunecli help)\n", argv[i]);
      return 2;
    }
  }
  if (!device || !key || !(timeout > 0)) {
    fprintf(stderr, "tunecli rpc-info: error: give --device tcp://HOST:PORT and --key KEY (or TSL_RPC_KEY)\n");
    return 2;
  }
  tsl_remote *r = NULL;
  tsl_status st = tsl_remote_connect(device, key, timeout, &r);
  if (st != TSL_OK) return tunecli_fail("rpc-info", st);
  const tsl_remote_info *in = tsl_remote_get_info(r);
  printf("device %s\n  id %s\n  %s\n  caps: message %llu bytes, file %llu bytes, buffers %llu bytes, timeout %.3g s\n",
         in->url, in->id, in->fingerprint, (unsigned long long)in->max_message, (unsigned long long)in->max_file,
         (unsigned long long)in->max_buffer, in->max_timeout_s);
  tsl_remote_close(r);
  return 0;
}
