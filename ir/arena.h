/* Bump arenas for IR nodes.
 *
 * IR nodes are immutable and freed in bulk: every tsl_* constructor allocates in the
 * calling thread's *current* arena. Compiling one kernel typically does
 *
 *     tsl_arena *a = tsl_arena_new();
 *     tsl_arena *prev = tsl_arena_set_current(a);
 *     ... build TE, lower, codegen ...
 *     tsl_arena_set_current(prev);
 *     tsl_arena_free(a);
 *
 * When no arena was set, a per-thread default arena is created on first use and
 * lives until tsl_arena_free_default() (or thread exit; it is then leaked by design).
 * Allocation failure aborts: IR building has no partial-failure path.
 */
#ifndef TESSEL_IR_ARENA_H
#define TESSEL_IR_ARENA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tsl_arena tsl_arena;

tsl_arena *tsl_arena_new(void);
/* Frees every block of the arena. Must not be the current arena of any thread. */
void tsl_arena_free(tsl_arena *a);
/* Makes `a` current for the calling thread; returns the previous one (may be NULL). */
tsl_arena *tsl_arena_set_current(tsl_arena *a);
/* The calling thread's current arena (creating the default one if needed). */
tsl_arena *tsl_arena_current(void);
/* Frees the calling thread's default arena (used by tests to stay leak-free). */
void tsl_arena_free_default(void);
/* Zeroed, 16-byte aligned memory from the current arena. */
void *tsl_alloc(size_t bytes);
/* Copies of a string / array into the current arena. */
char *tsl_strdup(const char *s);
void *tsl_memdup(const void *p, size_t bytes);
/* Total bytes handed out by `a` (for reports and tests). */
size_t tsl_arena_bytes(const tsl_arena *a);

#ifdef __cplusplus
}
#endif
#endif
