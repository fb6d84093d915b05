/* tessel — status codes and error messages shared by every module.
 *
 * Every public call returns a tsl_status. On failure the call also records a
 * human-readable message ("where: why") in thread-local storage; read it with
 * tsl_last_error() before the next failing call on the same thread overwrites it.
 */
#ifndef TESSEL_STATUS_H
#define TESSEL_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tsl_status {
  TSL_OK = 0,
  TSL_ERR_INVALID = 1,     /* bad argument or malformed input (shape, attribute, text) */
  TSL_ERR_PARSE = 2,       /* DSL / schedule / records text that does not parse */
  TSL_ERR_SCHEDULE = 3,    /* an illegal schedule step */
  TSL_ERR_CODEGEN = 4,     /* LLVM refused to build, verify, optimize or JIT a module */
  TSL_ERR_RUNTIME = 5,     /* a kernel or runtime call failed while running */
  TSL_ERR_IO = 6,          /* file or transport error */
  TSL_ERR_NOMEM = 7,       /* allocation failed */
  TSL_ERR_UNSUPPORTED = 8, /* valid input that this build or target cannot handle */
  TSL_ERR_NOT_FOUND = 9    /* a named kernel, op, model or record does not exist */
} tsl_status;

/* Record `st` with a printf-style message for the calling thread and return `st`,
 * so that error paths read `return tsl_error(TSL_ERR_INVALID, "conv2d: stride %d", s);`.
 * Messages longer than 4095 bytes are truncated. */
tsl_status tsl_error(tsl_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The message recorded by the last failing call on this thread ("" if none). The
 * pointer stays valid until the next tsl_error() on this thread. */
const char *tsl_last_error(void);

/* Clear the calling thread's message. */
void tsl_clear_error(void);

/* A short constant name for a status ("invalid", "parse", ...). */
const char *tsl_status_name(tsl_status st);

#ifdef __cplusplus
}
#endif
#endif
