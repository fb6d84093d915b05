/* Positioned error messages of text inputs (DSL files, schedule files): one format for
 * every "where and why" a user reads (docs/dsl.md section 9). */
#ifndef TESSEL_DSL_SOURCE_ERROR_H
#define TESSEL_DSL_SOURCE_ERROR_H

#include <stddef.h>

#include "tessel/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records with tsl_error(st, ...) and returns st:
 *   "FILE:LINE:COL: error: WHY"
 *   "  <the line>"            (cut to a window around the column on long lines, marked "...")
 *   "  <caret under COL>"
 * line_start points at the first byte of line LINE, end at the end of the text (the line
 * ends at '\n', '\r' or end). Tabs are kept in both lines so that the caret lines up in a
 * terminal; other control bytes and non-ASCII bytes are shown as '?'. COL counts bytes
 * from 1. */
tsl_status tsl_source_error_at(tsl_status st, const char *filename, int line, int col, const char *line_start,
                               const char *end, const char *why);

#ifdef __cplusplus
}
#endif

#endif
