/* The kernel ABI without LLVM: symbol names and signatures (codegen/kernel_abi.h). */
#include "codegen/kernel_abi.h"

#include <stdbool.h>
#include <string.h>

char *tsl_codegen_symbol_name(const char *name, char *buf, size_t n) {
  if (n == 0) return buf;
  size_t j = 0;
  if (!name || !*name || (name[0] >= '0' && name[0] <= '9')) {
    if (j + 1 < n) buf[j++] = '_';
  }
  for (const char *p = name ? name : ""; *p && j + 1 < n; p++) {
    char ch = *p;
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
    buf[j++] = ok ? ch : '_';
  }
  buf[j] = '\0';
  return buf;
}

/* The ABI type of a scalar argument (kernel_abi.h), or false. */
static bool scalar_abi(tsl_type t, tsl_arg_type *out) {
  if (t.lanes != 1) return false;
  switch ((tsl_type_code)t.code) {
  case TSL_TYPE_BOOL: *out = TSL_ARG_I32; return true;
  case TSL_TYPE_INT:
  case TSL_TYPE_UINT:
    if (t.bits != 8 && t.bits != 16 && t.bits != 32 && t.bits != 64) return false;
    *out = t.bits == 64 ? TSL_ARG_I64 : TSL_ARG_I32;
    return true;
  case TSL_TYPE_FLOAT:
    if (t.bits == 32) *out = TSL_ARG_F32;
    else if (t.bits == 64) *out = TSL_ARG_F64;
    else return false;
    return true;
  case TSL_TYPE_HANDLE: *out = TSL_ARG_PTR; return true;
  }
  return false;
}

tsl_status tsl_codegen_kernel_sig(const tsl_func *f, tsl_kernel_sig *sig) {
  if (f->nargs < 0 || f->nargs > TSL_MAX_KERNEL_ARGS)
    return tsl_error(TSL_ERR_UNSUPPORTED, "codegen %s: %d arguments (at most %d)", f->name, f->nargs,
                     TSL_MAX_KERNEL_ARGS);
  memset(sig, 0, sizeof *sig);
  sig->nargs = f->nargs;
  for (int i = 0; i < f->nargs; i++) {
    const tsl_arg *a = &f->args[i];
    if (a->is_buffer) {
      if (!a->buf) return tsl_error(TSL_ERR_INVALID, "codegen %s: argument %d has no buffer", f->name, i);
      sig->args[i] = TSL_ARG_PTR;
    } else {
      char t[32];
      if (!a->var || a->var->kind != TSL_E_VAR)
        return tsl_error(TSL_ERR_INVALID, "codegen %s: argument %d is not a variable", f->name, i);
      if (!scalar_abi(a->var->type, &sig->args[i]))
        return tsl_error(TSL_ERR_UNSUPPORTED, "codegen %s: argument %s of type %s cannot be passed",
                         f->name, a->var->var.name, tsl_type_str(a->var->type, t, sizeof t));
    }
  }
  return TSL_OK;
}
