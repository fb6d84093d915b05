/* tsl_dsl_parse and the module / op-definition accessors of dsl/parser.h. */
#include <stdlib.h>
#include <string.h>

#include "dsl/ast.h"

tsl_status tsl_dsl_parse(const char *text, const char *filename, tsl_dsl_module **out) {
  if (out) *out = NULL;
  if (!text || !out) return tsl_error(TSL_ERR_INVALID, "tsl_dsl_parse: NULL text or output");
  tsl_dsl_module *m = calloc(1, sizeof *m);
  if (!m) return tsl_error(TSL_ERR_NOMEM, "tsl_dsl_parse: out of memory");
  size_t len = strlen(text);
  m->src.text = dsl_pool_strndup(&m->pool, text, len);
  m->src.len = len;
  const char *fn = filename ? filename : "<dsl>";
  m->src.filename = dsl_pool_strndup(&m->pool, fn, strlen(fn));
  dsl_token *toks;
  int ntoks;
  dsl_vec ops = {0};
  tsl_status st = dsl_lex(&m->pool, &m->src, &toks, &ntoks);
  if (st == TSL_OK) st = dsl_parse_tokens(&m->pool, &m->src, toks, ntoks, &ops);
  for (int i = 0; st == TSL_OK && i < ops.n; i++) {
    tsl_dsl_op *op = ops.items[i];
    op->src = &m->src;
    for (int j = 0; j < i; j++)
      if (strcmp(((tsl_dsl_op *)ops.items[j])->name, op->name) == 0) {
        const tsl_dsl_op *prev = ops.items[j];
        st = dsl_fail(&m->src, TSL_ERR_PARSE, op->pos, "duplicate op '%s' (already defined at %d:%d)", op->name,
                      prev->pos.line, prev->pos.col);
        break;
      }
    if (st == TSL_OK) st = dsl_sema_op(&m->pool, op);
    if (st == TSL_OK && op->schedule) st = dsl_check_schedule(op);
  }
  if (st != TSL_OK) {
    tsl_dsl_module_free(m);
    return st;
  }
  m->nops = ops.n;
  m->ops = (tsl_dsl_op **)ops.items;
  *out = m;
  return TSL_OK;
}

void tsl_dsl_module_free(tsl_dsl_module *m) {
  if (!m) return;
  dsl_pool_free(&m->pool);
  free(m);
}

int tsl_dsl_module_count(const tsl_dsl_module *m) { return m ? m->nops : 0; }

const tsl_dsl_op *tsl_dsl_module_op(const tsl_dsl_module *m, int i) {
  return m && i >= 0 && i < m->nops ? m->ops[i] : NULL;
}

const tsl_dsl_op *tsl_dsl_module_find(const tsl_dsl_module *m, const char *name) {
  if (!m || !name) return NULL;
  for (int i = 0; i < m->nops; i++)
    if (strcmp(m->ops[i]->name, name) == 0) return m->ops[i];
  return NULL;
}

const char *tsl_dsl_op_name(const tsl_dsl_op *def) { return def ? def->name : NULL; }
const char *tsl_dsl_op_text(const tsl_dsl_op *def) { return def ? def->text : NULL; }
int tsl_dsl_op_ninputs(const tsl_dsl_op *def) { return def ? def->ninputs : 0; }
const tsl_dsl_input_info *tsl_dsl_op_input(const tsl_dsl_op *def, int i) {
  return def && i >= 0 && i < def->ninputs ? &def->input_info[i] : NULL;
}
int tsl_dsl_op_nparams(const tsl_dsl_op *def) { return def ? def->nscalars : 0; }
const tsl_dsl_param_info *tsl_dsl_op_param(const tsl_dsl_op *def, int i) {
  return def && i >= 0 && i < def->nscalars ? &def->param_info[i] : NULL;
}
