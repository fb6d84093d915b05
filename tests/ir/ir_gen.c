/* Random integer IR expressions (see ir_gen.h). */
#include "ir_gen.h"

static bool is_i64(tsl_type t) { return t.code == TSL_TYPE_INT && t.bits == 64; }

static void type_bounds(tsl_type t, int64_t *lo, int64_t *hi) {
  if (t.code == TSL_TYPE_UINT) {
    *lo = 0;
    *hi = t.bits >= 63 ? INT64_MAX : (int64_t)((1ull << t.bits) - 1);
  } else {
    *lo = t.bits >= 64 ? INT64_MIN : -(int64_t)(1ull << (t.bits - 1));
    *hi = t.bits >= 64 ? INT64_MAX : (int64_t)((1ull << (t.bits - 1)) - 1);
  }
}

uint64_t ir_gen_u64(ir_gen *g) {
  g->s ^= g->s >> 12;
  g->s ^= g->s << 25;
  g->s ^= g->s >> 27;
  return g->s * 0x2545F4914F6CDD1Dull;
}

int64_t ir_gen_int(ir_gen *g, int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
  if (span == 0) return (int64_t)ir_gen_u64(g);
  return (int64_t)((uint64_t)lo + ir_gen_u64(g) % span);
}

static bool chance(ir_gen *g, int percent) { return ir_gen_int(g, 0, 99) < percent; }

void ir_gen_init(ir_gen *g, uint64_t seed, tsl_type t, int nfree) {
  static const char *names[] = {"x", "y", "z", "w", "u", "v"};
  g->s = seed * 0x9E3779B97F4A7C15ull + 1;
  g->t = t;
  g->nfree = g->nvars = nfree;
  g->lanes = 1;
  g->ranges = tsl_var_ranges_new();
  int64_t tlo, thi;
  type_bounds(t, &tlo, &thi);
  for (int i = 0; i < nfree; i++) {
    g->vars[i] = tsl_var(names[i % 6], t);
    g->ranged[i] = chance(g, 75);
    if (is_i64(t)) {
      g->lo[i] = ir_gen_int(g, -20, 10);
      g->hi[i] = g->lo[i] + ir_gen_int(g, 0, chance(g, 20) ? 0 : 24);
      if (!g->ranged[i]) {
        g->lo[i] = -40;
        g->hi[i] = 40;
      }
    } else if (g->ranged[i]) {
      int64_t a = ir_gen_int(g, tlo, thi), w = ir_gen_int(g, 0, chance(g, 50) ? 16 : 200);
      g->lo[i] = a;
      g->hi[i] = (thi - a < w) ? thi : a + w;
    } else {
      g->lo[i] = tlo;
      g->hi[i] = thi;
    }
    if (g->ranged[i]) tsl_var_ranges_set(g->ranges, g->vars[i], tsl_interval_range(g->lo[i], g->hi[i]));
  }
}

void ir_gen_assign(ir_gen *g, int64_t *values) {
  for (int i = 0; i < g->nfree; i++) {
    /* favour the ends of each range, where off-by-one rules break */
    int r = (int)ir_gen_int(g, 0, 9);
    values[i] = r == 0 ? g->lo[i] : r == 1 ? g->hi[i] : ir_gen_int(g, g->lo[i], g->hi[i]);
  }
}

static tsl_expr *konst(ir_gen *g) {
  tsl_type t = g->t;
  int64_t v;
  int r = (int)ir_gen_int(g, 0, 9);
  if (is_i64(t)) {
    if (r < 6) v = ir_gen_int(g, -10, 10);
    else if (r < 8) v = (chance(g, 70) ? 1 : -1) * ((int64_t)1 << ir_gen_int(g, 1, 5));
    else v = ir_gen_int(g, -100, 100);
  } else {
    int64_t lo, hi;
    type_bounds(t, &lo, &hi);
    v = r < 6 ? ir_gen_int(g, t.code == TSL_TYPE_UINT ? 0 : -10, 10) : ir_gen_int(g, lo, hi);
  }
  return tsl_int(t, v);
}

static tsl_expr *nonzero_konst(ir_gen *g) {
  for (;;) {
    tsl_expr *k = konst(g);
    if (k->int_value != 0) return k;
  }
}

static tsl_expr *leaf(ir_gen *g) {
  if (chance(g, 65)) return g->vars[ir_gen_int(g, 0, g->nvars - 1)];
  return konst(g);
}

tsl_expr *ir_gen_cond(ir_gen *g, int depth) {
  int r = (int)ir_gen_int(g, 0, 9);
  if (depth <= 0 || r < 6) {
    static const tsl_expr_kind cmps[] = {TSL_E_EQ, TSL_E_NE, TSL_E_LT, TSL_E_LE, TSL_E_GT, TSL_E_GE};
    int d = depth > 0 ? depth - 1 : 0;
    return tsl_binary(cmps[ir_gen_int(g, 0, 5)], ir_gen_expr(g, d), ir_gen_expr(g, d));
  }
  if (r == 6) return tsl_not(ir_gen_cond(g, depth - 1));
  if (r == 7 && chance(g, 30)) return tsl_bool(chance(g, 50));
  return tsl_binary(chance(g, 50) ? TSL_E_AND : TSL_E_OR, ir_gen_cond(g, depth - 1), ir_gen_cond(g, depth - 1));
}

tsl_expr *ir_gen_expr(ir_gen *g, int depth) {
  if (depth <= 0 || chance(g, 15)) return leaf(g);
  int d = depth - 1;
  tsl_type t = g->t;
  switch (ir_gen_int(g, 0, 12)) {
  case 0:
  case 1: return tsl_add(ir_gen_expr(g, d), ir_gen_expr(g, d));
  case 2: return tsl_sub(ir_gen_expr(g, d), ir_gen_expr(g, d));
  case 3:
    if (depth <= 2 && chance(g, 30)) return tsl_mul(ir_gen_expr(g, d), ir_gen_expr(g, d));
    return chance(g, 50) ? tsl_mul(ir_gen_expr(g, d), konst(g)) : tsl_mul(konst(g), ir_gen_expr(g, d));
  case 4:
  case 5:
  case 6: {
    tsl_expr *k = nonzero_konst(g);
    int r = (int)ir_gen_int(g, 0, 19);
    tsl_expr *num = ir_gen_expr(g, d);
    if (r < 8) num = tsl_add(tsl_mul(ir_gen_expr(g, d), k), ir_gen_expr(g, d)); /* (a*k + b) */
    tsl_expr *den = r == 19 ? tsl_int(t, 0) : r >= 16 ? ir_gen_expr(g, d) : k;
    return chance(g, 50) ? tsl_div(num, den) : tsl_mod(num, den);
  }
  case 7: return tsl_min(ir_gen_expr(g, d), ir_gen_expr(g, d));
  case 8: return tsl_max(ir_gen_expr(g, d), ir_gen_expr(g, d));
  case 9:
  case 10: return tsl_select(ir_gen_cond(g, d), ir_gen_expr(g, d), ir_gen_expr(g, d));
  case 11:
    if (g->nvars < IR_GEN_MAX_VARS) {
      tsl_expr *v = tsl_var("t", t);
      tsl_expr *value = ir_gen_expr(g, d);
      g->vars[g->nvars++] = v;
      tsl_expr *body = ir_gen_expr(g, d);
      g->nvars--;
      return tsl_let(v, value, body);
    }
    return leaf(g);
  default:
    if (is_i64(t)) return tsl_cast(t, tsl_cast(chance(g, 50) ? TSL_I32 : TSL_I8, ir_gen_expr(g, d)));
    return tsl_cast(t, tsl_cast(TSL_I64, ir_gen_expr(g, d)));
  }
}

tsl_expr *ir_gen_vector(ir_gen *g, int depth, int lanes) {
  if (depth <= 0 || chance(g, 20)) {
    if (chance(g, 50)) return tsl_broadcast(ir_gen_expr(g, 1), lanes);
    tsl_expr *stride = chance(g, 30) ? ir_gen_expr(g, 0) : konst(g);
    return tsl_ramp(ir_gen_expr(g, 1), stride, lanes);
  }
  int d = depth - 1;
  switch (ir_gen_int(g, 0, 7)) {
  case 0: return tsl_add(ir_gen_vector(g, d, lanes), ir_gen_vector(g, d, lanes));
  case 1: return tsl_sub(ir_gen_vector(g, d, lanes), ir_gen_vector(g, d, lanes));
  case 2: return tsl_mul(ir_gen_vector(g, d, lanes), tsl_broadcast(konst(g), lanes));
  case 3: return tsl_div(ir_gen_vector(g, d, lanes), tsl_broadcast(nonzero_konst(g), lanes));
  case 4: return tsl_mod(ir_gen_vector(g, d, lanes), tsl_broadcast(nonzero_konst(g), lanes));
  case 5: return tsl_min(ir_gen_vector(g, d, lanes), ir_gen_vector(g, d, lanes));
  case 6: return tsl_max(ir_gen_vector(g, d, lanes), ir_gen_vector(g, d, lanes));
  default:
    return tsl_select(tsl_lt(ir_gen_vector(g, d, lanes), ir_gen_vector(g, d, lanes)), ir_gen_vector(g, d, lanes),
                      ir_gen_vector(g, d, lanes));
  }
}
