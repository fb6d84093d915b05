/* Replacing a file's contents without ever leaving it truncated, and without replacing
 * what the name stands for.
 *
 * The usual way (write a temporary next to the file, then rename it over the name)
 * replaces the name's directory entry: a symlink becomes a regular file and its target
 * keeps the old bytes, a FIFO or a device (/dev/stdout, /dev/full) is replaced by a
 * regular file. tsl_file_replace_target says where the rename must go instead: onto the
 * file a symlink resolves to, or nowhere (write the name in place) when it names
 * something that is not a regular file. */
#ifndef TESSEL_RUNTIME_FILE_REPLACE_H
#define TESSEL_RUNTIME_FILE_REPLACE_H

#include <stdbool.h>
#include <stddef.h>

#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For a write of `path`: *in_place false and out (n bytes) the file to write through a
 * temporary in its directory and rename onto: path itself when it does not exist or is a
 * regular file, the regular file a symlink resolves to; *in_place true (out = path) when
 * path exists and is, or links to, something else (a FIFO, a device) or is a dangling
 * symlink: open and write it directly.
 * Errors: TSL_ERR_INVALID (NULL arguments, n too small for the path), TSL_ERR_IO (the
 * symlink cannot be resolved: the message says why). */
tsl_status tsl_file_replace_target(const char *path, char *out, size_t n, bool *in_place);

#ifdef __cplusplus
}
#endif
#endif
