/* Thread-local error messages behind include/tessel/status.h. */
#include "tessel/status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[4096];

tsl_status tsl_error(tsl_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return st;
}

const char *tsl_last_error(void) { return last_error; }

void tsl_clear_error(void) { last_error[0] = '\0'; }

const char *tsl_status_name(tsl_status st) {
  switch (st) {
  case TSL_OK: return "ok";
  case TSL_ERR_INVALID: return "invalid";
  case TSL_ERR_PARSE: return "parse";
  case TSL_ERR_SCHEDULE: return "schedule";
  case TSL_ERR_CODEGEN: return "codegen";
  case TSL_ERR_RUNTIME: return "runtime";
  case TSL_ERR_IO: return "io";
  case TSL_ERR_NOMEM: return "nomem";
  case TSL_ERR_UNSUPPORTED: return "unsupported";
  case TSL_ERR_NOT_FOUND: return "not-found";
  }
  return "unknown";
}
