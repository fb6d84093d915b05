/* Where a file replacement writes (file_replace.h). */
#include "runtime/file_replace.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static tsl_status copy_path(const char *src, char *out, size_t n) {
  if (strlen(src) >= n) return tsl_error(TSL_ERR_INVALID, "file replace: path %s longer than %zu bytes", src, n - 1);
  memcpy(out, src, strlen(src) + 1);
  return TSL_OK;
}

tsl_status tsl_file_replace_target(const char *path, char *out, size_t n, bool *in_place) {
  if (!path || !out || !in_place || n == 0) return tsl_error(TSL_ERR_INVALID, "file replace: NULL argument");
  *in_place = false;
  struct stat ls, st;
  if (lstat(path, &ls) != 0) return copy_path(path, out, n); /* a new file */
  if (S_ISREG(ls.st_mode)) return copy_path(path, out, n);
  bool link = S_ISLNK(ls.st_mode);
  if (!link || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
    *in_place = true; /* a FIFO, a device, or a link to one or to nothing */
    return copy_path(path, out, n);
  }
  char *real = realpath(path, NULL);
  if (!real) return tsl_error(TSL_ERR_IO, "file replace: cannot resolve the symlink %s: %s", path, strerror(errno));
  tsl_status s = copy_path(real, out, n);
  free(real);
  return s;
}
