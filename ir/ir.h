/* tessel loop IR: types, expressions and statements.
 *
 * ---------------------------------------------------------------------------
 * Semantics contract (read this before writing a pass or a backend)
 * ---------------------------------------------------------------------------
 * Types. A tsl_type is (code, bits, lanes). Scalars have lanes == 1; vectors have
 *   lanes > 1 and every lane behaves as the scalar op applied lane-wise. bool is
 *   (TSL_BOOL, 1). f16 is a storage type only: arithmetic on it is refused; cast to
 *   f32 first.
 *
 * Index arithmetic. Loop variables, extents, buffer indices and shapes are i64.
 *   Integer + - * wrap modulo 2^bits (two's complement) in the codegen, but passes may
 *   assume index arithmetic (i64) never overflows: bounds are per-shape constants
 *   and far from 2^63.
 *
 * Division and modulo. Integer TSL_E_DIV is FLOOR division (rounds toward -inf) and
 *   TSL_E_MOD is FLOOR modulo (result has the sign of the divisor, 0 <= a mod b < b
 *   for b > 0), as in TVM's floordiv/floormod and Python. So (-7)/2 == -4 and
 *   (-7) mod 2 == 1; a == (a/b)*b + a mod b always holds. Integer division or modulo by
 *   zero gives 0 (as in Halide), so data-dependent divisors can never trap; no pass
 *   folds it (a constant zero divisor is refused by the DSL and the codegen), and the
 *   codegen pays for the check only when the divisor is not a constant.
 *   Unsigned division is ordinary unsigned division. Float division is IEEE; TSL_E_MOD
 *   on floats is refused.
 *
 * Floats. IEEE-754 binary32/64, round to nearest. A float add or subtract whose
 *   operand is a multiply (x*y + z, z - x*y, ...), or a broadcast of one, is contracted
 *   into one rounding on targets with FMA, as C's FP_CONTRACT ON within one expression
 *   (codegen/llvm.h); TSL_CALL_FMA is always fused. The codegen does not enable
 *   fast-math reassociation, so a vectorized reduction over a spatial axis gives
 *   bit-identical results to the scalar loop (scalar and vector code contract alike). min/max follow LLVM minnum/maxnum EXCEPT that the
 *   IR min/max propagate NaN (llvm.minimum/maximum): max(NaN, x) == NaN. Pooling
 *   relies on this (shared/cases C08).
 *
 * Evaluation. Expressions are pure except TSL_E_LOAD (reads memory) and TSL_E_CALL
 *   to intrinsics marked impure (prefetch). A pass may evaluate a pure child zero or
 *   more times. TSL_E_SELECT may evaluate BOTH branches (it becomes a vector blend):
 *   a branch that could read out of bounds must use a predicated load or an
 *   if-then-else statement instead. TSL_E_AND / TSL_E_OR do not short-circuit.
 *
 * Memory. After bound inference every load and store is in bounds by construction;
 *   nothing checks at run time. Loads/stores name a tsl_buffer and carry one index per
 *   buffer dimension until storage flattening, exactly one (the element offset)
 *   after it. A vector load/store has an index of `lanes` lanes (usually a ramp); a
 *   predicated one touches only lanes whose predicate is true (others read 0).
 *
 * Variables. A variable is a TSL_E_VAR node; identity is the node's address, the
 *   name is only for printing. A variable is bound by exactly one For or Let (or is a
 *   kernel argument); passes that duplicate a binder must make fresh variables.
 *
 * Ownership. Nodes are immutable once built and allocated in the current arena
 *   (ir/arena.h); they are never freed one by one. Passes build new nodes and may
 *   share unchanged subtrees.
 *
 * Constructors validate their operands (matching types and lanes, integer types
 *   for index math, ...). On a violation they abort with a message naming the node:
 *   that is a bug in tessel, not bad user input — user input is checked by the DSL
 *   and the schedule before it reaches here.
 */
#ifndef TESSEL_IR_IR_H
#define TESSEL_IR_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ir/arena.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- types ---------------------------------------------------------------- */

typedef enum tsl_type_code {
  TSL_TYPE_BOOL = 0,
  TSL_TYPE_INT = 1,
  TSL_TYPE_UINT = 2,
  TSL_TYPE_FLOAT = 3,
  TSL_TYPE_HANDLE = 4 /* an opaque pointer (void *): kernel closures, runtime handles */
} tsl_type_code;

typedef struct tsl_type {
  uint8_t code;   /* tsl_type_code */
  uint8_t bits;   /* 1 for bool; 8/16/32/64 for int/uint; 16/32/64 for float; 64 handle */
  uint16_t lanes; /* 1 for scalars */
} tsl_type;

static inline tsl_type tsl_type_make(tsl_type_code c, int bits, int lanes) {
  tsl_type t = {(uint8_t)c, (uint8_t)bits, (uint16_t)lanes};
  return t;
}
#define TSL_BOOL tsl_type_make(TSL_TYPE_BOOL, 1, 1)
#define TSL_I8 tsl_type_make(TSL_TYPE_INT, 8, 1)
#define TSL_I16 tsl_type_make(TSL_TYPE_INT, 16, 1)
#define TSL_I32 tsl_type_make(TSL_TYPE_INT, 32, 1)
#define TSL_I64 tsl_type_make(TSL_TYPE_INT, 64, 1)
#define TSL_U8 tsl_type_make(TSL_TYPE_UINT, 8, 1)
#define TSL_U16 tsl_type_make(TSL_TYPE_UINT, 16, 1)
#define TSL_U32 tsl_type_make(TSL_TYPE_UINT, 32, 1)
#define TSL_U64 tsl_type_make(TSL_TYPE_UINT, 64, 1)
#define TSL_F16 tsl_type_make(TSL_TYPE_FLOAT, 16, 1)
#define TSL_F32 tsl_type_make(TSL_TYPE_FLOAT, 32, 1)
#define TSL_F64 tsl_type_make(TSL_TYPE_FLOAT, 64, 1)
#define TSL_HANDLE tsl_type_make(TSL_TYPE_HANDLE, 64, 1)

static inline bool tsl_type_eq(tsl_type a, tsl_type b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
static inline tsl_type tsl_type_with_lanes(tsl_type t, int lanes) {
  t.lanes = (uint16_t)lanes;
  return t;
}
static inline tsl_type tsl_type_element(tsl_type t) { return tsl_type_with_lanes(t, 1); }
static inline bool tsl_type_is_int(tsl_type t) { return t.code == TSL_TYPE_INT; }
static inline bool tsl_type_is_uint(tsl_type t) { return t.code == TSL_TYPE_UINT; }
static inline bool tsl_type_is_intlike(tsl_type t) {
  return t.code == TSL_TYPE_INT || t.code == TSL_TYPE_UINT;
}
static inline bool tsl_type_is_float(tsl_type t) { return t.code == TSL_TYPE_FLOAT; }
static inline bool tsl_type_is_bool(tsl_type t) { return t.code == TSL_TYPE_BOOL; }
/* Size of one element (all lanes) in bytes; bool counts as 1 byte per lane. */
size_t tsl_type_bytes(tsl_type t);

/* Writes "f32", "i64x8", "bool", "u32x16" ... into buf (>= 16 bytes); returns buf. */
const char *tsl_type_str(tsl_type t, char *buf, size_t n);
/* Parses "f32", "i8", "u64", "bool", "f16", "f64" (scalars). false if unknown. */
bool tsl_type_parse(const char *s, tsl_type *out);

/* ---- buffers -------------------------------------------------------------- */

typedef enum tsl_buffer_kind {
  TSL_BUF_ARG = 0,   /* passed to the kernel by pointer (tensor data) */
  TSL_BUF_LOCAL = 1, /* allocated inside the kernel by a TSL_S_ALLOCATE */
  TSL_BUF_TENSOR = 2 /* a TE tensor before lowering decides where it lives */
} tsl_buffer_kind;

/* A multi-dimensional array of scalars of `dtype`, row-major (last dimension
 * contiguous) unless `strides` is set. Shapes are per-shape JIT constants.
 * `origin` is an opaque back pointer for the layer that made the buffer (the DSL
 * sets it to the tsl_tensor the buffer stores); ir/ never looks at it. */
typedef struct tsl_buffer {
  const char *name;
  tsl_type dtype; /* scalar element type */
  int ndim;
  int64_t *shape;   /* ndim extents */
  int64_t *strides; /* ndim strides in elements, or NULL for compact row-major */
  int64_t align;    /* guaranteed alignment of element 0 in bytes (64 for args) */
  tsl_buffer_kind kind;
  const void *origin;
} tsl_buffer;

/* New buffer in the current arena; shape is copied. strides may be NULL. */
tsl_buffer *tsl_buffer_new(const char *name, tsl_type dtype, int ndim, const int64_t *shape,
                           tsl_buffer_kind kind);
/* Number of elements (product of the shape). */
int64_t tsl_buffer_numel(const tsl_buffer *b);

/* ---- expressions ---------------------------------------------------------- */

typedef enum tsl_expr_kind {
  TSL_E_INT,      /* integer / bool / uint constant: int_value (uint64 stored bitwise) */
  TSL_E_FLOAT,    /* float constant: float_value */
  TSL_E_VAR,      /* variable: var.name */
  TSL_E_ADD, TSL_E_SUB, TSL_E_MUL, TSL_E_DIV, TSL_E_MOD, TSL_E_MIN, TSL_E_MAX,
  TSL_E_EQ, TSL_E_NE, TSL_E_LT, TSL_E_LE, TSL_E_GT, TSL_E_GE, /* -> bool (same lanes) */
  TSL_E_AND, TSL_E_OR, /* bool x bool -> bool, no short circuit */
  TSL_E_NOT,           /* bool -> bool: un.a */
  TSL_E_SELECT,        /* select.cond ? select.t : select.f; cond is bool, scalar or same lanes */
  TSL_E_CAST,          /* convert un.a to `type` (same lanes); float->int truncates toward 0
                          and SATURATES to the type's range (NaN gives 0), identically on
                          every target; int->int wraps; int->float rounds to nearest */
  TSL_E_BROADCAST,     /* scalar broadcast.value repeated broadcast.lanes times */
  TSL_E_RAMP,          /* base, base+stride, ..., lanes values (base/stride scalar ints) */
  TSL_E_LOAD,          /* load.buf[load.index...] (lanes from the index), optional predicate */
  TSL_E_CALL,          /* intrinsic call.op(call.args...) */
  TSL_E_LET,           /* let.var = let.value in let.body */
  TSL_E_REDUCE         /* TE only (never in lowered IR): reduce.combiner over reduce.axes */
} tsl_expr_kind;

/* Intrinsics. Types: "T" means any arithmetic type with lanes; args share a type
 * unless stated. */
typedef enum tsl_intrinsic {
  TSL_CALL_FMA,        /* fma(a,b,c) = a*b+c rounded once; float T */
  TSL_CALL_POPCOUNT,   /* popcount(a): number of set bits per lane; int/uint T -> T */
  TSL_CALL_SHL,        /* a << b; int/uint; the amount b is clamped to [0, bits - 1] so
                          every target gives the same result for any b */
  TSL_CALL_SHR,        /* a >> b (b clamped likewise); arithmetic for int, logical for uint */
  TSL_CALL_BIT_AND, TSL_CALL_BIT_OR, TSL_CALL_BIT_XOR, /* int/uint/bool */
  TSL_CALL_BIT_NOT,    /* ~a */
  TSL_CALL_ABS,        /* |a|; for int, abs(INT_MIN) wraps */
  TSL_CALL_EXP, TSL_CALL_LOG, TSL_CALL_SQRT, TSL_CALL_TANH, /* float T */
  TSL_CALL_ERF,        /* erf(a), float T; f32 lowers to a polynomial within 1 ulp
                          (codegen/llvm_math.c), f64 to libm's erf */
  TSL_CALL_FLOOR, TSL_CALL_CEIL, TSL_CALL_ROUND, /* float T; round: half to even */
  TSL_CALL_POW,        /* pow(a,b), float T */
  TSL_CALL_ISNAN,      /* float T -> bool */
  TSL_CALL_REDUCE_ADD, /* horizontal sum of a vector -> scalar (ordered for floats) */
  TSL_CALL_REDUCE_MAX, TSL_CALL_REDUCE_MIN, /* horizontal max/min (NaN propagating) */
  TSL_CALL_PREFETCH,   /* prefetch(address_of_load): impure hint; args[0] is a TSL_E_LOAD
                          whose address is prefetched; type i32 0; used in Evaluate */
  TSL_CALL_LIKELY,     /* likely(cond): cond, a hint for loop partitioning */
  TSL_CALL_COUNT_
} tsl_intrinsic;

typedef enum tsl_combiner {
  TSL_REDUCE_SUM = 0,
  TSL_REDUCE_MAX = 1, /* NaN propagating */
  TSL_REDUCE_MIN = 2  /* NaN propagating */
} tsl_combiner;

typedef struct tsl_expr tsl_expr;

/* An iteration axis of a TE stage: a variable over [min, min+extent). */
typedef struct tsl_iter_var {
  tsl_expr *var; /* a TSL_E_VAR of type i64 */
  int64_t min;
  int64_t extent;
  bool is_reduce;
} tsl_iter_var;

struct tsl_expr {
  tsl_expr_kind kind;
  tsl_type type;
  union {
    int64_t int_value;
    double float_value;
    struct { const char *name; } var;
    struct { tsl_expr *a, *b; } bin;  /* ADD..OR */
    struct { tsl_expr *a; } un;        /* NOT, CAST */
    struct { tsl_expr *cond, *t, *f; } select;
    struct { tsl_expr *value; int lanes; } broadcast;
    struct { tsl_expr *base, *stride; int lanes; } ramp;
    struct {
      tsl_buffer *buf;
      int nindex;
      tsl_expr **index;     /* nindex indices (ndim before flattening, 1 after) */
      tsl_expr *predicate;  /* NULL, or bool with the load's lanes */
    } load;
    struct { tsl_intrinsic op; int nargs; tsl_expr **args; } call;
    struct { tsl_expr *var, *value, *body; } let;
    struct {
      tsl_combiner combiner;
      tsl_expr *source;     /* scalar value combined over the axes */
      int naxes;
      tsl_iter_var *axes;   /* reduction axes (is_reduce) */
      tsl_expr *condition;  /* NULL or bool: only points where it holds take part */
    } reduce;
  };
};

/* Constructors (all allocate in the current arena). */
tsl_expr *tsl_int(tsl_type t, int64_t v);   /* t: int/uint/bool, lanes 1 (broadcast for more) */
tsl_expr *tsl_i64(int64_t v);               /* i64 constant */
tsl_expr *tsl_i32(int32_t v);
tsl_expr *tsl_bool(bool v);
tsl_expr *tsl_float(tsl_type t, double v);  /* t: float, lanes 1 */
tsl_expr *tsl_f32(float v);
tsl_expr *tsl_var(const char *name, tsl_type t); /* fresh variable (name copied) */
tsl_expr *tsl_binary(tsl_expr_kind k, tsl_expr *a, tsl_expr *b); /* ADD..OR */
tsl_expr *tsl_add(tsl_expr *a, tsl_expr *b);
tsl_expr *tsl_sub(tsl_expr *a, tsl_expr *b);
tsl_expr *tsl_mul(tsl_expr *a, tsl_expr *b);
tsl_expr *tsl_div(tsl_expr *a, tsl_expr *b); /* floor division for ints */
tsl_expr *tsl_mod(tsl_expr *a, tsl_expr *b); /* floor modulo for ints */
tsl_expr *tsl_min(tsl_expr *a, tsl_expr *b);
tsl_expr *tsl_max(tsl_expr *a, tsl_expr *b);
tsl_expr *tsl_eq(tsl_expr *a, tsl_expr *b);
tsl_expr *tsl_ne(tsl_expr *a, tsl_expr *b);
tsl_expr *tsl_lt(tsl_expr *a, tsl_expr *b);
tsl_expr *tsl_le(tsl_expr *a, tsl_expr *b);
tsl_expr *tsl_gt(tsl_expr *a, tsl_expr *b);
tsl_expr *tsl_ge(tsl_expr *a, tsl_expr *b);
tsl_expr *tsl_and(tsl_expr *a, tsl_expr *b);
tsl_expr *tsl_or(tsl_expr *a, tsl_expr *b);
tsl_expr *tsl_not(tsl_expr *a);
tsl_expr *tsl_select(tsl_expr *cond, tsl_expr *t, tsl_expr *f);
tsl_expr *tsl_cast(tsl_type t, tsl_expr *a); /* t.lanes is taken from a */
tsl_expr *tsl_broadcast(tsl_expr *value, int lanes);
tsl_expr *tsl_ramp(tsl_expr *base, tsl_expr *stride, int lanes);
/* index: nindex expressions copied; all int with equal lanes; predicate may be NULL. */
tsl_expr *tsl_load(tsl_buffer *buf, int nindex, tsl_expr *const *index, tsl_expr *predicate);
tsl_expr *tsl_call(tsl_intrinsic op, tsl_type t, int nargs, tsl_expr *const *args);
tsl_expr *tsl_let(tsl_expr *var, tsl_expr *value, tsl_expr *body);
tsl_expr *tsl_reduce(tsl_combiner c, tsl_expr *source, int naxes, const tsl_iter_var *axes,
                     tsl_expr *condition);
/* The identity of a combiner for type t: 0, -inf (or INT_MIN), +inf (or INT_MAX). */
tsl_expr *tsl_reduce_identity(tsl_combiner c, tsl_type t);

/* Convenience: is e an integer constant (TSL_E_INT, lanes 1)? Sets *v. */
bool tsl_expr_is_const_int(const tsl_expr *e, int64_t *v);
/* Name of an expression kind / intrinsic ("add", "fma", ...). */
const char *tsl_expr_kind_name(tsl_expr_kind k);
const char *tsl_intrinsic_name(tsl_intrinsic op);
/* Intrinsic by name; returns TSL_CALL_COUNT_ if unknown. */
tsl_intrinsic tsl_intrinsic_from_name(const char *name);

/* ---- statements ----------------------------------------------------------- */

typedef enum tsl_stmt_kind {
  TSL_S_FOR,      /* for (var = min; var < min + extent; var++) body */
  TSL_S_STORE,    /* store.buf[store.index...] = store.value (lanes from the index) */
  TSL_S_ALLOCATE, /* allocate.buf (TSL_BUF_LOCAL) live within body */
  TSL_S_SEQ,      /* seq.stmts[0]; ...; seq.stmts[n-1] */
  TSL_S_IF,       /* if (cond) then_case else else_case (else may be NULL) */
  TSL_S_LET,      /* let var = value in body */
  TSL_S_EVALUATE  /* evaluate an expression for its side effect (prefetch) */
} tsl_stmt_kind;

typedef enum tsl_for_kind {
  TSL_FOR_SERIAL = 0,
  TSL_FOR_PARALLEL = 1,   /* iterations run on the runtime thread pool (runtime ABI) */
  TSL_FOR_VECTORIZED = 2, /* constant extent; the vectorize pass turns it into lanes */
  TSL_FOR_UNROLLED = 3    /* constant extent; the unroll pass replicates the body */
} tsl_for_kind;

typedef struct tsl_stmt tsl_stmt;
struct tsl_stmt {
  tsl_stmt_kind kind;
  union {
    struct { tsl_expr *var; tsl_expr *min, *extent; tsl_for_kind for_kind; tsl_stmt *body; } loop;
    struct {
      tsl_buffer *buf;
      int nindex;
      tsl_expr **index;
      tsl_expr *value;
      tsl_expr *predicate; /* NULL or bool with the value's lanes */
    } store;
    struct { tsl_buffer *buf; tsl_stmt *body; } allocate;
    struct { int n; tsl_stmt **stmts; } seq;
    struct { tsl_expr *cond; tsl_stmt *then_case, *else_case; } if_;
    struct { tsl_expr *var, *value; tsl_stmt *body; } let;
    struct { tsl_expr *value; } evaluate;
  };
};

tsl_stmt *tsl_for(tsl_expr *var, tsl_expr *min, tsl_expr *extent, tsl_for_kind kind,
                  tsl_stmt *body);
tsl_stmt *tsl_store(tsl_buffer *buf, int nindex, tsl_expr *const *index, tsl_expr *value,
                    tsl_expr *predicate);
tsl_stmt *tsl_allocate(tsl_buffer *buf, tsl_stmt *body);
/* Sequence of n statements (copied; NULL entries are dropped; n==1 returns the one). */
tsl_stmt *tsl_seq(int n, tsl_stmt *const *stmts);
tsl_stmt *tsl_seq2(tsl_stmt *a, tsl_stmt *b);
tsl_stmt *tsl_if(tsl_expr *cond, tsl_stmt *then_case, tsl_stmt *else_case);
tsl_stmt *tsl_let_stmt(tsl_expr *var, tsl_expr *value, tsl_stmt *body);
tsl_stmt *tsl_evaluate(tsl_expr *value);
const char *tsl_for_kind_name(tsl_for_kind k);

/* ---- lowered functions ---------------------------------------------------- */

/* A kernel argument: a buffer passed by pointer, or a scalar variable by value. */
typedef struct tsl_arg {
  bool is_buffer;
  tsl_buffer *buf; /* is_buffer */
  tsl_expr *var;   /* !is_buffer: a TSL_E_VAR (i64, i32, f32, f64 ...) */
} tsl_arg;

/* A lowered kernel: `int32_t name(args...)` returning 0 on success. Buffers arrive
 * as pointers to their element 0, 64-byte aligned (runtime guarantee) and not
 * aliasing each other (noalias). */
typedef struct tsl_func {
  const char *name;
  int nargs;
  tsl_arg *args;
  tsl_stmt *body;
  /* The vector register width in bits the kernel is compiled for (a schedule's
   * vector_width step; codegen narrows the target to it); 0: the target's own. */
  int vector_bits;
} tsl_func;

tsl_func *tsl_func_new(const char *name, int nargs, const tsl_arg *args, tsl_stmt *body);

/* ---- printing, equality, hashing (ir/printer.c, ir/equality.c) ------------- */

/* Print as readable text, e.g. "for (i, 0, 16) vectorized {...}"; deterministic. */
void tsl_print_expr(FILE *f, const tsl_expr *e);
void tsl_print_stmt(FILE *f, const tsl_stmt *s);
void tsl_print_func(FILE *f, const tsl_func *fn);
/* Same text into a malloc'd string (caller frees). */
char *tsl_expr_to_string(const tsl_expr *e);
char *tsl_stmt_to_string(const tsl_stmt *s);

/* Structural equality: same tree shape and constants; variables are equal when
 * they are the same node or are bound at corresponding positions (alpha-equivalence
 * of For/Let binders); buffers compare by identity. */
bool tsl_expr_equal(const tsl_expr *a, const tsl_expr *b);
bool tsl_stmt_equal(const tsl_stmt *a, const tsl_stmt *b);
/* A hash consistent with the equality above (free variables hash by identity). */
uint64_t tsl_expr_hash(const tsl_expr *e);
uint64_t tsl_stmt_hash(const tsl_stmt *s);

#ifdef __cplusplus
}
#endif
#endif
