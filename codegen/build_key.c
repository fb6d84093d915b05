/* The level-1 build cache key: a canonical text of everything lowering reads
 * (build_key.h). */
#include "codegen/build_key.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- code identity ------------------------------------------------------------------ */

static char code_id[160];
static pthread_once_t code_id_once = PTHREAD_ONCE_INIT;
/* The file of the object holding this code when it has no build id: a shared
 * library's path, or "" for the main program (read through /proc/self/exe, which is
 * the running file even if the path was rebuilt since). */
static char code_file[4096];
static bool code_file_found;

/* The build-id note of the loaded object holding this function's code. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  uintptr_t self = (uintptr_t)&tsl_build_code_id;
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    mine = ph->p_type == PT_LOAD && self >= lo && self < lo + ph->p_memsz;
  }
  if (!mine) return 0;
  code_file_found = true;
  snprintf(code_file, sizeof code_file, "%s", info->dlpi_name ? info->dlpi_name : "");
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
    while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
      const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
      size_t name_sz = (nh->n_namesz + 3u) & ~3u, desc_sz = (nh->n_descsz + 3u) & ~3u;
      const unsigned char *name = p + sizeof *nh, *desc = name + name_sz;
      if ((size_t)(end - name) < name_sz || (size_t)(end - desc) < nh->n_descsz) break;
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 && nh->n_descsz > 0 &&
          nh->n_descsz <= 64) {
        size_t len = (size_t)snprintf(code_id, sizeof code_id, "gnu-build-id:");
        for (unsigned k = 0; k < nh->n_descsz; k++)
          len += (size_t)snprintf(code_id + len, sizeof code_id - len, "%02x", desc[k]);
        return 1;
      }
      p = desc + desc_sz;
    }
  }
  return 1; /* the right object, but without a note */
}

/* Fallback: a hash of the file that holds this code. */
static void file_identity(void) {
  if (!code_file_found) return;
  int fd = open(code_file[0] ? code_file : "/proc/self/exe", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat sb;
  unsigned char *buf = NULL;
  if (fstat(fd, &sb) == 0 && sb.st_size > 0 && (buf = malloc((size_t)sb.st_size))) {
    size_t got = 0;
    while (got < (size_t)sb.st_size) {
      ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
      if (r <= 0) break;
      got += (size_t)r;
    }
    if (got == (size_t)sb.st_size) {
      tsl_jit_cache_key k = tsl_jit_cache_key_of(buf, got, "tessel code");
      snprintf(code_id, sizeof code_id, "file:%zu:%016" PRIx64 "%016" PRIx64, got, k.h[0], k.h[1]);
    }
  }
  free(buf);
  close(fd);
}

static void init_code_id(void) {
  dl_iterate_phdr(find_build_id, NULL);
  if (!code_id[0]) file_identity();
}

const char *tsl_build_code_id(void) {
  pthread_once(&code_id_once, init_code_id);
  return code_id[0] ? code_id : NULL;
}

/* ---- canonical writer --------------------------------------------------------------- */

/* Pointer -> number in order of first appearance (open addressing). */
typedef struct ptr_ids {
  const void **keys;
  int *ids;
  int cap, n;
} ptr_ids;

typedef struct writer {
  FILE *f;
  ptr_ids vars, bufs, ops;
  bool bad;        /* a node the writer does not know: no key */
  const char *why; /* what it was */
} writer;

static size_t slot_of(const ptr_ids *m, const void *p) {
  uintptr_t h = (uintptr_t)p;
  h ^= h >> 17;
  h *= 0x9E3779B97F4A7C15ull;
  size_t mask = (size_t)m->cap - 1;
  for (size_t i = (size_t)(h >> 7) & mask;; i = (i + 1) & mask)
    if (!m->keys[i] || m->keys[i] == p) return i;
}

/* The number of p: >= 0 when seen before; -1 - (new number) when new (recorded). */
static int id_of(writer *w, ptr_ids *m, const void *p) {
  if (2 * (m->n + 1) > m->cap) {
    int cap = m->cap ? 2 * m->cap : 64;
    ptr_ids g = {calloc((size_t)cap, sizeof *g.keys), calloc((size_t)cap, sizeof *g.ids), cap, m->n};
    if (!g.keys || !g.ids) {
      free(g.keys);
      free(g.ids);
      w->bad = true;
      w->why = "out of memory";
      return 0;
    }
    for (int i = 0; i < m->cap; i++)
      if (m->keys[i]) {
        size_t s = slot_of(&g, m->keys[i]);
        g.keys[s] = m->keys[i];
        g.ids[s] = m->ids[i];
      }
    free(m->keys);
    free(m->ids);
    *m = g;
  }
  size_t s = slot_of(m, p);
  if (m->keys[s]) return m->ids[s];
  m->keys[s] = p;
  m->ids[s] = m->n++;
  return -1 - m->ids[s];
}

static void str(writer *w, const char *s) {
  if (!s) {
    fputs(" -", w->f);
    return;
  }
  fprintf(w->f, " %zu:%s", strlen(s), s);
}

static void i64(writer *w, int64_t v) { fprintf(w->f, " %" PRId64, v); }

static void type(writer *w, tsl_type t) { fprintf(w->f, " t%u.%u.%u", t.code, t.bits, t.lanes); }

static void buffer(writer *w, const tsl_buffer *b) {
  if (!b) {
    fputs(" B-", w->f);
    return;
  }
  int id = id_of(w, &w->bufs, b);
  if (id >= 0) {
    fprintf(w->f, " B%d", id);
    return;
  }
  fprintf(w->f, " B%d{", -1 - id);
  str(w, b->name);
  type(w, b->dtype);
  fprintf(w->f, " nd%d", b->ndim);
  for (int i = 0; i < b->ndim; i++) i64(w, b->shape[i]);
  if (b->strides) {
    fputs(" strides", w->f);
    for (int i = 0; i < b->ndim; i++) i64(w, b->strides[i]);
  }
  fprintf(w->f, " align%" PRId64 " kind%d", b->align, (int)b->kind);
  /* a TE tensor's buffer names its tensor: say whether that is an input */
  const tsl_te_tensor *t = b->kind == TSL_BUF_TENSOR ? tsl_te_tensor_of(b) : NULL;
  if (t && t->op && t->op->kind == TSL_TE_PLACEHOLDER) {
    fputs(" placeholder", w->f);
    str(w, t->op->name);
  }
  fputs(" }", w->f);
}

static void expr(writer *w, const tsl_expr *e);

static void var(writer *w, const tsl_expr *v) {
  if (!v) {
    fputs(" V-", w->f);
    return;
  }
  int id = id_of(w, &w->vars, v);
  if (id >= 0) {
    fprintf(w->f, " V%d", id);
    return;
  }
  fprintf(w->f, " V%d{", -1 - id);
  if (v->kind != TSL_E_VAR) {
    w->bad = true;
    w->why = "a binder that is not a variable";
  } else {
    str(w, v->var.name);
  }
  type(w, v->type);
  fputs(" }", w->f);
}

static void iter_var(writer *w, const tsl_iter_var *iv) {
  fputs(" iv", w->f);
  var(w, iv->var);
  i64(w, iv->min);
  i64(w, iv->extent);
  fprintf(w->f, " r%d", (int)iv->is_reduce);
}

static void float_bits(writer *w, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  fprintf(w->f, " 0x%016" PRIx64 "(%a)", bits, v);
}

static void expr(writer *w, const tsl_expr *e) {
  if (!e) {
    fputs(" _", w->f);
    return;
  }
  fprintf(w->f, " (%d", (int)e->kind);
  type(w, e->type);
  switch (e->kind) {
  case TSL_E_INT: i64(w, e->int_value); break;
  case TSL_E_FLOAT: float_bits(w, e->float_value); break;
  case TSL_E_VAR: var(w, e); break;
  case TSL_E_ADD: case TSL_E_SUB: case TSL_E_MUL: case TSL_E_DIV: case TSL_E_MOD: case TSL_E_MIN:
  case TSL_E_MAX: case TSL_E_EQ: case TSL_E_NE: case TSL_E_LT: case TSL_E_LE: case TSL_E_GT: case TSL_E_GE:
  case TSL_E_AND: case TSL_E_OR:
    expr(w, e->bin.a);
    expr(w, e->bin.b);
    break;
  case TSL_E_NOT:
  case TSL_E_CAST: expr(w, e->un.a); break;
  case TSL_E_SELECT:
    expr(w, e->select.cond);
    expr(w, e->select.t);
    expr(w, e->select.f);
    break;
  case TSL_E_BROADCAST:
    expr(w, e->broadcast.value);
    fprintf(w->f, " x%d", e->broadcast.lanes);
    break;
  case TSL_E_RAMP:
    expr(w, e->ramp.base);
    expr(w, e->ramp.stride);
    fprintf(w->f, " x%d", e->ramp.lanes);
    break;
  case TSL_E_LOAD:
    buffer(w, e->load.buf);
    fprintf(w->f, " n%d", e->load.nindex);
    for (int i = 0; i < e->load.nindex; i++) expr(w, e->load.index[i]);
    expr(w, e->load.predicate);
    break;
  case TSL_E_CALL:
    fprintf(w->f, " op%d n%d", (int)e->call.op, e->call.nargs);
    for (int i = 0; i < e->call.nargs; i++) expr(w, e->call.args[i]);
    break;
  case TSL_E_LET:
    var(w, e->let.var);
    expr(w, e->let.value);
    expr(w, e->let.body);
    break;
  case TSL_E_REDUCE:
    fprintf(w->f, " c%d n%d", (int)e->reduce.combiner, e->reduce.naxes);
    for (int i = 0; i < e->reduce.naxes; i++) iter_var(w, &e->reduce.axes[i]);
    expr(w, e->reduce.source);
    expr(w, e->reduce.condition);
    break;
  default:
    w->bad = true;
    w->why = "an unknown expression kind";
    break;
  }
  fputc(')', w->f);
}

/* An op: in full at its first appearance, by number after that. */
static void op(writer *w, const tsl_te_op *o) {
  if (!o) {
    fputs(" O-", w->f);
    return;
  }
  int id = id_of(w, &w->ops, o);
  if (id >= 0) {
    fprintf(w->f, " O%d", id);
    return;
  }
  fprintf(w->f, "\n  O%d{ kind%d", -1 - id, (int)o->kind);
  str(w, o->name);
  str(w, o->tag);
  buffer(w, o->output ? o->output->buf : NULL);
  if (o->kind == TSL_TE_COMPUTE) {
    fprintf(w->f, "\n    axes%d", o->naxis);
    for (int i = 0; i < o->naxis; i++) iter_var(w, &o->axis[i]);
    fprintf(w->f, "\n    reduce%d", o->nreduce);
    for (int i = 0; i < o->nreduce; i++) iter_var(w, &o->reduce_axis[i]);
    fputs("\n    body", w->f);
    expr(w, o->body);
    fprintf(w->f, "\n    inputs%d", o->ninputs);
    for (int i = 0; i < o->ninputs; i++) buffer(w, o->inputs[i] ? o->inputs[i]->buf : NULL);
    /* the producers of what this op reads, so the whole graph is in the text */
    for (int i = 0; i < o->ninputs; i++)
      if (o->inputs[i]) op(w, o->inputs[i]->op);
  }
  fputs(" }", w->f);
}

static void tensor(writer *w, const tsl_te_tensor *t) {
  if (!t) {
    fputs(" T-", w->f);
    return;
  }
  buffer(w, t->buf);
  op(w, t->op);
}

static void stage(writer *w, const tsl_stage *st) {
  fputs("\nstage", w->f);
  str(w, st->name);
  fprintf(w->f, " output%d", (int)st->is_output);
  op(w, st->op);
  fprintf(w->f, "\n  iters%d root%d", st->niters, st->nroot);
  for (int i = 0; i < st->niters; i++) {
    const tsl_stage_iter *it = &st->iters[i];
    fputs("\n   ", w->f);
    str(w, it->name);
    var(w, it->var);
    i64(w, it->min);
    i64(w, it->extent);
    fprintf(w->f, " r%d a%d", (int)it->is_reduce, (int)it->annotation);
  }
  fprintf(w->f, "\n  leaf%d", st->nleaf);
  for (int i = 0; i < st->nleaf; i++) fprintf(w->f, " %d", st->leaf[i]);
  fprintf(w->f, "\n  rels%d", st->nrels);
  for (int i = 0; i < st->nrels; i++) {
    const tsl_iter_relation *r = &st->rels[i];
    fprintf(w->f, " [%d %d %d %d %d %" PRId64 " %" PRId64 "]", (int)r->kind, r->parent, r->outer, r->inner, r->fused,
            r->factor, r->nparts);
  }
  fprintf(w->f, "\n  attach%d %d %d", (int)st->attach, st->attach_stage, st->attach_iter);
  int nalign = st->op ? st->op->naxis : 0;
  fputs("\n  align", w->f);
  for (int i = 0; i < nalign && st->align_factor && st->align_offset; i++)
    fprintf(w->f, " %" PRId64 "/%" PRId64, st->align_factor[i], st->align_offset[i]);
  fputs("\n  order", w->f);
  for (int i = 0; i < nalign && st->storage_order; i++) fprintf(w->f, " %d", st->storage_order[i]);
  fprintf(w->f, "\n  prefetch%d", st->nprefetch);
  for (int i = 0; i < st->nprefetch; i++) {
    buffer(w, st->prefetch[i].tensor);
    fprintf(w->f, " %d %" PRId64, st->prefetch[i].iter, st->prefetch[i].offset);
  }
}

static void write_all(writer *w, const tsl_schedule *s, const char *name, const tsl_lower_options *opts,
                      const char *ctx, const char *code) {
  fputs("tessel kernel key v1\ncode", w->f);
  str(w, code);
  fputs("\ncontext", w->f);
  str(w, ctx);
  fputs("\nkernel", w->f);
  str(w, name);
  fprintf(w->f, "\nlower tail%d vector_bits%d max_unroll%" PRId64, (int)opts->tail, opts->vector_bits,
          opts->max_unroll);
  const tsl_te_program *p = s->program;
  fputs("\nprogram", w->f);
  str(w, p ? p->name : NULL);
  if (p) {
    fprintf(w->f, "\ninputs%d", p->ninputs);
    for (int i = 0; i < p->ninputs; i++) tensor(w, p->inputs[i]);
    fprintf(w->f, "\noutputs%d", p->noutputs);
    for (int i = 0; i < p->noutputs; i++) tensor(w, p->outputs[i]);
  }
  fprintf(w->f, "\nstages%d", s->nstages);
  for (int i = 0; i < s->nstages; i++) stage(w, s->stages[i]);
  fprintf(w->f, "\nvector_bits%d", s->vector_bits);
  fprintf(w->f, "\nsteps%d", s->nsteps);
  for (int i = 0; i < s->nsteps; i++) {
    const tsl_step *st = &s->steps[i];
    fprintf(w->f, "\n  %d n%d", (int)st->kind, st->nargs);
    for (int k = 0; k < st->nargs; k++) {
      if (st->args[k].is_int) fprintf(w->f, " i%" PRId64, st->args[k].value);
      else str(w, st->args[k].name);
    }
  }
  fputc('\n', w->f);
}

tsl_status tsl_build_key_text(const tsl_schedule *s, const char *name, const tsl_lower_options *opts,
                              const char *ctx, char **out) {
  if (out) *out = NULL;
  if (!s || !name || !opts || !ctx || !out) return tsl_error(TSL_ERR_INVALID, "build key: NULL argument");
  const char *code = tsl_build_code_id();
  if (!code) return tsl_error(TSL_ERR_UNSUPPORTED, "build key: no identity of the tessel code (no build id)");
  char *text = NULL;
  size_t len = 0;
  writer w = {0};
  w.f = open_memstream(&text, &len);
  if (!w.f) return tsl_error(TSL_ERR_NOMEM, "build key: out of memory");
  write_all(&w, s, name, opts, ctx, code);
  bool io_ok = fclose(w.f) == 0;
  free(w.vars.keys);
  free(w.vars.ids);
  free(w.bufs.keys);
  free(w.bufs.ids);
  free(w.ops.keys);
  free(w.ops.ids);
  if (!io_ok || !text) {
    free(text);
    return tsl_error(TSL_ERR_NOMEM, "build key: out of memory");
  }
  if (w.bad) {
    free(text);
    return tsl_error(TSL_ERR_INVALID, "build key: %s in kernel %s", w.why, name);
  }
  *out = text;
  return TSL_OK;
}

tsl_status tsl_build_cache_key(const tsl_schedule *s, const char *name, const tsl_lower_options *opts,
                               const char *ctx, tsl_jit_cache_key *out) {
  char *text = NULL;
  tsl_status st = tsl_build_key_text(s, name, opts, ctx, &text);
  if (st != TSL_OK) return st;
  *out = tsl_jit_cache_key_of(text, strlen(text), ctx);
  free(text);
  return TSL_OK;
}
