/* The text form of a schedule's step list: print and parse (see schedule.h).
 *
 * Grammar (one step a line):
 *   line  := ws [ step ws ] [ '#' any* ]
 *   step  := ident ws '(' ws arg ws ( ',' ws arg ws )* ')'
 *   arg   := int | ident | '"' (any but '"' and newline)* '"' | kw ws '=' ws int
 *   int   := ['-'] digit+
 *   kw    := "factor" | "nparts"      (split only: split(s, x, nparts=4) is TVM's
 *                                      split by nparts; factor= is the plain split)
 *   ident := [A-Za-z_] [A-Za-z0-9_.]*
 * Names that are not plain identifiers print quoted, so every name round-trips.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/source_error.h"
#include "schedule/schedule.h"

static bool is_ident(const char *s) {
  if (!(isalpha((unsigned char)*s) || *s == '_')) return false;
  for (s++; *s; s++)
    if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '.')) return false;
  return true;
}

static void print_step(FILE *f, const tsl_step *step) {
  const char *name = tsl_step_kind_name(step->kind);
  fprintf(f, "%s(", name ? name : "?");
  for (int i = 0; i < step->nargs; i++) {
    const tsl_step_arg *a = &step->args[i];
    if (i) fputs(", ", f);
    if (a->is_int && step->kind == TSL_STEP_SPLIT_NPARTS) fprintf(f, "nparts=%lld", (long long)a->value);
    else if (a->is_int) fprintf(f, "%lld", (long long)a->value);
    else if (is_ident(a->name)) fputs(a->name, f);
    else fprintf(f, "\"%s\"", a->name);
  }
  fputc(')', f);
}

void tsl_schedule_print(FILE *f, const tsl_schedule *s) {
  for (int i = 0; i < s->nsteps; i++) {
    print_step(f, &s->steps[i]);
    fputc('\n', f);
  }
}

static char *to_string(const tsl_schedule *s, const tsl_step *one) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  if (one) print_step(f, one);
  else tsl_schedule_print(f, s);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

char *tsl_schedule_to_string(const tsl_schedule *s) { return to_string(s, NULL); }

char *tsl_step_to_string(const tsl_step *step) { return to_string(NULL, step); }

/* ---- parsing ---- */

typedef struct parser {
  const char *p;
  int line;
  const char *line_start;
  const char *source; /* "schedule", or the file name (tsl_schedule_from_text_file) */
  bool located;       /* file form: "FILE:L:C: error: WHY" + the line and a caret */
} parser;

static int column(const parser *ps) { return (int)(ps->p - ps->line_start) + 1; }

static void skip_blanks(parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r') ps->p++;
}

/* The error at column col of the current line: "schedule:L:C: why", or in the file form
 * "FILE:L:C: error: why" followed by the line (indented by two spaces) and a caret under
 * the column, as the DSL's messages (docs/dsl.md section 9). */
static tsl_status error_at(const parser *ps, tsl_status st, int col, const char *why) {
  if (!ps->located) return tsl_error(st, "%s:%d:%d: %s", ps->source, ps->line, col, why);
  return tsl_source_error_at(st, ps->source, ps->line, col, ps->line_start, ps->line_start + strlen(ps->line_start),
                             why);
}

static tsl_status parse_error(const parser *ps, const char *why) {
  return error_at(ps, TSL_ERR_PARSE, column(ps), why);
}

static char *copy_range(const char *a, const char *b) {
  char *s = malloc((size_t)(b - a) + 1);
  if (!s) return NULL;
  memcpy(s, a, (size_t)(b - a));
  s[b - a] = '\0';
  return s;
}

static tsl_status parse_arg(parser *ps, tsl_step_arg *arg) {
  const char *start = ps->p;
  if (*ps->p == '-' || isdigit((unsigned char)*ps->p)) {
    const char *q = ps->p + (*ps->p == '-');
    if (!isdigit((unsigned char)*q)) return parse_error(ps, "expected a number after '-'");
    errno = 0;
    char *end;
    long long v = strtoll(ps->p, &end, 10);
    if (errno == ERANGE) return parse_error(ps, "integer out of range");
    ps->p = end;
    if (isalpha((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '.')
      return parse_error(ps, "a name cannot start with a digit");
    *arg = (tsl_step_arg){true, NULL, v};
    return TSL_OK;
  }
  if (*ps->p == '"') {
    ps->p++;
    const char *b = ps->p;
    while (*ps->p && *ps->p != '"' && *ps->p != '\n') ps->p++;
    if (*ps->p != '"') return parse_error(ps, "unterminated quoted name");
    if (ps->p == b) return parse_error(ps, "empty name");
    char *name = copy_range(b, ps->p);
    if (!name) return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
    ps->p++;
    *arg = (tsl_step_arg){false, name, 0};
    return TSL_OK;
  }
  if (!(isalpha((unsigned char)*ps->p) || *ps->p == '_')) return parse_error(ps, "expected a name or an integer");
  while (isalnum((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '.') ps->p++;
  char *name = copy_range(start, ps->p);
  if (!name) return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  *arg = (tsl_step_arg){false, name, 0};
  return TSL_OK;
}

static void free_args(tsl_step_arg *args, int n) {
  for (int i = 0; i < n; i++) free((char *)args[i].name);
  free(args);
}

/* A keyword prefix "name =" at ps->p: 0 when there is none (ps->p unchanged), 1 for
 * factor=, 2 for nparts= (ps->p after the '=' and blanks), -1 for another name. */
static int keyword(parser *ps) {
  const char *q = ps->p;
  if (!(isalpha((unsigned char)*q) || *q == '_')) return 0;
  while (isalnum((unsigned char)*q) || *q == '_') q++;
  size_t n = (size_t)(q - ps->p);
  const char *e = q;
  while (*e == ' ' || *e == '\t') e++;
  if (*e != '=') return 0;
  int kw = n == 6 && strncmp(ps->p, "factor", 6) == 0 ? 1 : n == 6 && strncmp(ps->p, "nparts", 6) == 0 ? 2 : -1;
  if (kw < 0) return -1;
  ps->p = e + 1;
  skip_blanks(ps);
  return kw;
}

/* Parses one step at ps->p (after blanks); fills *step (args malloc'd). */
static tsl_status parse_step(parser *ps, tsl_step *step) {
  const char *b = ps->p;
  while (isalnum((unsigned char)*ps->p) || *ps->p == '_') ps->p++;
  if (ps->p == b) return parse_error(ps, "expected a primitive name");
  size_t n = (size_t)(ps->p - b);
  int kind = -1;
  for (int k = 0; k < TSL_STEP_COUNT_; k++) {
    const char *name = tsl_step_kind_name((tsl_step_kind)k);
    if (kind < 0 && strlen(name) == n && strncmp(name, b, n) == 0) kind = k;
  }
  if (kind < 0) {
    ps->p = b;
    char msg[128];
    snprintf(msg, sizeof msg, "unknown primitive '%.*s'", (int)(n > 64 ? 64 : n), b);
    return parse_error(ps, msg);
  }
  skip_blanks(ps);
  if (*ps->p != '(') return parse_error(ps, "expected '('");
  ps->p++;
  int cap = 4, nargs = 0;
  tsl_step_arg *args = calloc((size_t)cap, sizeof *args);
  if (!args) return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
  for (;;) {
    skip_blanks(ps);
    if (nargs == cap) {
      tsl_step_arg *q = realloc(args, sizeof *args * (size_t)cap * 2);
      if (!q) {
        free_args(args, nargs);
        return tsl_error(TSL_ERR_NOMEM, "schedule: out of memory");
      }
      args = q;
      cap *= 2;
    }
    const char *kw_start = ps->p;
    int kw = keyword(ps);
    if (kw < 0 || (kw > 0 && kind != TSL_STEP_SPLIT)) {
      ps->p = kw_start;
      free_args(args, nargs);
      return parse_error(ps, kw < 0 ? "unknown keyword (split takes factor= or nparts=)"
                                    : "keyword arguments are for split only");
    }
    tsl_status rc = parse_arg(ps, &args[nargs]);
    if (rc == TSL_OK && kw > 0 && !args[nargs].is_int) {
      free((char *)args[nargs].name);
      rc = parse_error(ps, "expected an integer after the keyword");
    }
    if (rc != TSL_OK) {
      free_args(args, nargs);
      return rc;
    }
    if (kw == 2) kind = TSL_STEP_SPLIT_NPARTS;
    nargs++;
    skip_blanks(ps);
    if (*ps->p == ',') {
      ps->p++;
      continue;
    }
    if (*ps->p == ')') {
      ps->p++;
      break;
    }
    free_args(args, nargs);
    return parse_error(ps, "expected ',' or ')'");
  }
  step->kind = (tsl_step_kind)kind;
  step->nargs = nargs;
  step->args = args;
  return TSL_OK;
}

/* after_step (optional): run on the schedule after every step applies; its failure is
 * reported at that step like a step that does not apply. */
static tsl_status from_text(const tsl_te_program *p, const char *text, const char *source, bool located,
                            tsl_schedule_check_fn after_step, void *check_ctx, tsl_schedule **out) {
  *out = NULL;
  if (!text) return tsl_error(TSL_ERR_INVALID, "%s: no text", source);
  tsl_schedule *s;
  tsl_status rc = tsl_schedule_new(p, &s);
  if (rc != TSL_OK) return rc;
  parser ps = {text, 1, text, source, located};
  while (*ps.p) {
    skip_blanks(&ps);
    if (*ps.p && *ps.p != '\n' && *ps.p != '#') {
      tsl_step step;
      const char *step_start = ps.p;
      rc = parse_step(&ps, &step);
      if (rc == TSL_OK) {
        skip_blanks(&ps);
        if (*ps.p && *ps.p != '\n' && *ps.p != '#') rc = parse_error(&ps, "unexpected text after the step");
        bool applied = false;
        if (rc == TSL_OK) {
          rc = tsl_schedule_apply(s, &step);
          applied = rc == TSL_OK;
          if (applied && after_step) rc = after_step(s, check_ctx);
          if (rc != TSL_OK) {
            /* keep the step's own message (or the check's), prefixed with where it was
             * written (and, in the file form, the step) */
            char msg[4096];
            if (located) {
              char *st_text = tsl_step_to_string(&step);
              snprintf(msg, sizeof msg, "step %s %s: %s", st_text ? st_text : "?",
                       applied ? "applies, but the schedule then fails" : "does not apply", tsl_last_error());
              free(st_text);
            } else {
              snprintf(msg, sizeof msg, "%s", tsl_last_error());
            }
            rc = error_at(&ps, rc, (int)(step_start - ps.line_start) + 1, msg);
          }
        }
        free_args(step.args, step.nargs);
      }
      if (rc != TSL_OK) {
        tsl_schedule_free(s);
        return rc;
      }
    }
    while (*ps.p && *ps.p != '\n') ps.p++;
    if (*ps.p == '\n') {
      ps.p++;
      ps.line++;
      ps.line_start = ps.p;
    }
  }
  *out = s;
  return TSL_OK;
}

tsl_status tsl_schedule_from_text(const tsl_te_program *p, const char *text, tsl_schedule **out) {
  return from_text(p, text, "schedule", false, NULL, NULL, out);
}

tsl_status tsl_schedule_from_text_file(const tsl_te_program *p, const char *text, const char *filename,
                                       tsl_schedule **out) {
  return from_text(p, text, filename ? filename : "schedule", filename != NULL, NULL, NULL, out);
}

/* The replays' checks. The step blamed is the first of the last run of steps after which
 * the schedule fails: the step after the last prefix that passes. (Not the first prefix
 * that fails: a later step may mend it, e.g. an axis unrolled before it is split. Not the
 * first prefix that fails with the whole schedule's message either: a count in it, such
 * as the copies an unroll makes, grows with later steps.) */
typedef struct replay {
  tsl_schedule_check_fn check;
  void *ctx;
  int steps;       /* steps applied so far */
  int last_passed; /* the number of steps of the last prefix that passed (0: none did) */
  int blame;       /* second replay: fail after this many steps */
  tsl_status whole_rc;
  const char *whole; /* the whole schedule's error message */
} replay;

static tsl_status record_prefix(const tsl_schedule *s, void *ctx) {
  replay *r = ctx;
  r->steps++;
  if (r->check(s, r->ctx) == TSL_OK) r->last_passed = r->steps;
  tsl_clear_error();
  return TSL_OK;
}

static tsl_status fail_at_blamed_step(const tsl_schedule *s, void *ctx) {
  (void)s;
  replay *r = ctx;
  return ++r->steps == r->blame ? tsl_error(r->whole_rc, "%s", r->whole) : TSL_OK;
}

tsl_status tsl_schedule_from_text_file_checked(const tsl_te_program *p, const char *text, const char *filename,
                                               tsl_schedule_check_fn check, void *check_ctx, tsl_schedule **out) {
  tsl_status rc = tsl_schedule_from_text_file(p, text, filename, out);
  if (rc != TSL_OK || !check) return rc;
  rc = check(*out, check_ctx);
  if (rc == TSL_OK) return TSL_OK;
  tsl_schedule_free(*out);
  *out = NULL;
  char whole[4096];
  snprintf(whole, sizeof whole, "%s", tsl_last_error());
  const char *source = filename ? filename : "schedule";
  replay r = {check, check_ctx, 0, 0, 0, rc, whole};
  /* the program unscheduled fails already: no step is to blame */
  tsl_schedule *empty = NULL;
  if (tsl_schedule_new(p, &empty) != TSL_OK || check(empty, check_ctx) != TSL_OK) {
    tsl_schedule_free(empty);
    return tsl_error(r.whole_rc, "%s: %s", source, whole);
  }
  tsl_schedule_free(empty);
  tsl_schedule *again = NULL;
  if (from_text(p, text, source, filename != NULL, record_prefix, &r, &again) != TSL_OK) {
    tsl_schedule_free(again);
    return tsl_error(r.whole_rc, "%s: %s", source, whole);
  }
  tsl_schedule_free(again);
  r.blame = r.last_passed + 1;
  r.steps = 0;
  rc = from_text(p, text, source, filename != NULL, fail_at_blamed_step, &r, &again);
  if (rc != TSL_OK) return rc; /* located at the blamed step */
  tsl_schedule_free(again);
  return tsl_error(r.whole_rc, "%s: %s", source, whole);
}
