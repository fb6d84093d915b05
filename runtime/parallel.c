/* The thread pool behind runtime/parallel.h and the pool controls of
 * include/tessel/runtime.h.
 *
 * One job runs at a time (launch_mu). A launch writes the job's fields, then publishes
 * a ticket: the job's generation in the high bits and its number of participants in
 * the low 16 bits. Worker i takes part when i < participants. Workers never read the
 * job's fields unless they take part, and the launcher does not return (so the next
 * launch cannot overwrite the fields) before every participant has counted itself
 * out of `pending`; so the fields need no further synchronisation.
 */
#include "runtime/parallel.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessel/runtime.h"

/* Spin iterations (each one CPU pause, tens of cycles) before a thread blocks: a few
 * microseconds, enough to catch the next launch of a graph without burning a core. */
#define SPIN_ITERS 2000
#define TICKET_PARTS_BITS 16
#define TICKET_PARTS_MASK ((1u << TICKET_PARTS_BITS) - 1)

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

typedef struct pool {
  pthread_mutex_t launch_mu; /* held for a whole launch */
  pthread_mutex_t mu;        /* guards the condition variables and `shutdown` waits */
  pthread_cond_t work_cv;
  pthread_cond_t done_cv;
  pthread_t workers[TSL_MAX_THREADS]; /* index 0 unused: the launcher is participant 0 */
  uint64_t start_gen[TSL_MAX_THREADS];
  int nworkers;
  atomic_uint_fast64_t ticket;
  atomic_bool shutdown;
  atomic_int pending; /* participants' parts 1..nparts-1 not yet finished */
  /* part_gen[i]: the last launch generation whose part i someone took (claim_part) */
  atomic_uint_fast64_t part_gen[TSL_MAX_THREADS];
  atomic_int warm; /* open tsl_parallel_warm_begin calls: workers spin instead of sleeping */

  /* The current job. */
  tsl_parallel_task task;
  void *closure;
  int64_t extent;
  int nparts;
  bool dynamic;
  int64_t chunk;
  atomic_int_fast64_t next;
  bool balanced;
  /* balanced: participant i's pieces not yet taken, [front, back) as front << 32 | back
   * (at most TSL_SCHED_BALANCED_PIECES of them): its owner takes the front one, a thief
   * the back one; one cache line each (the owner's updates would otherwise take the line
   * from its neighbours) */
  struct {
    _Alignas(64) atomic_uint_fast64_t pieces;
  } share[TSL_MAX_THREADS];
  atomic_bool failed;
  pthread_mutex_t err_mu;
  int64_t err_begin;
  int32_t err;
} pool;

static pool g_pool = {
    .launch_mu = PTHREAD_MUTEX_INITIALIZER,
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .work_cv = PTHREAD_COND_INITIALIZER,
    .done_cv = PTHREAD_COND_INITIALIZER,
    .err_mu = PTHREAD_MUTEX_INITIALIZER,
};

static _Thread_local bool tl_in_parallel;
/* The calling thread's own thread count (tsl_parallel_set_local_threads), 0 for none. */
static _Thread_local int tl_num_threads;

static atomic_int g_num_threads;
static atomic_int g_sched_kind = TSL_SCHED_BALANCED;
static atomic_int_fast64_t g_sched_chunk = 1;
static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;

/* The child of a fork has only the forking thread: forget the parent's workers and
 * reset the locks, which another parent thread may have held at the fork. */
static void pool_after_fork_child(void) {
  pthread_mutex_init(&g_pool.launch_mu, NULL);
  pthread_mutex_init(&g_pool.mu, NULL);
  pthread_mutex_init(&g_pool.err_mu, NULL);
  pthread_cond_init(&g_pool.work_cv, NULL);
  pthread_cond_init(&g_pool.done_cv, NULL);
  g_pool.nworkers = 0;
  atomic_store(&g_pool.shutdown, false);
  atomic_store(&g_pool.pending, 0);
  atomic_store(&g_pool.warm, 0);
}

static int default_num_threads(void) {
  const char *env = getenv("TSL_NUM_THREADS");
  if (env && env[0]) {
    char *end = NULL;
    long v = strtol(env, &end, 10);
    if (*end == '\0' && v >= 1 && v <= TSL_MAX_THREADS) return (int)v;
    fprintf(stderr, "tessel: TSL_NUM_THREADS='%s' ignored (want an integer in 1..%d)\n", env, TSL_MAX_THREADS);
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int allowed = CPU_COUNT(&set);
    if (allowed > 0 && (n < 1 || allowed < n)) n = allowed;
  }
  if (n < 1) n = 1;
  if (n > TSL_MAX_THREADS) n = TSL_MAX_THREADS;
  return (int)n;
}

bool tsl_parallel_schedule_parse(const char *s, tsl_sched *kind, int64_t *chunk) {
  if (!s || !kind || !chunk) return false;
  if (strcmp(s, "static") == 0 || strcmp(s, "balanced") == 0) {
    *kind = s[0] == 's' ? TSL_SCHED_STATIC : TSL_SCHED_BALANCED;
    *chunk = 1;
    return true;
  }
  if (strncmp(s, "dynamic,", 8) != 0 || s[8] < '0' || s[8] > '9') return false;
  char *end = NULL;
  errno = 0;
  long long v = strtoll(s + 8, &end, 10);
  if (*end != '\0' || errno == ERANGE || v < 1) return false;
  *kind = TSL_SCHED_DYNAMIC;
  *chunk = (int64_t)v;
  return true;
}

/* TSL_PARALLEL_SCHEDULE (tsl_parallel_schedule_parse); anything else is ignored with a
 * warning, once. */
static void schedule_from_environment(void) {
  const char *env = getenv("TSL_PARALLEL_SCHEDULE");
  if (!env || !env[0]) return;
  tsl_sched kind;
  int64_t chunk;
  if (!tsl_parallel_schedule_parse(env, &kind, &chunk)) {
    fprintf(stderr, "tessel: TSL_PARALLEL_SCHEDULE='%s' ignored (want static, balanced or dynamic,CHUNK with CHUNK >= 1)\n",
            env);
    return;
  }
  atomic_store(&g_sched_chunk, (int_fast64_t)chunk);
  atomic_store(&g_sched_kind, (int)kind);
}

static void init_once(void) {
  atomic_store(&g_num_threads, default_num_threads());
  schedule_from_environment();
  pthread_atfork(NULL, NULL, pool_after_fork_child);
}

tsl_status tsl_set_num_threads(int n) {
  if (n < 1 || n > TSL_MAX_THREADS)
    return tsl_error(TSL_ERR_INVALID, "tsl_set_num_threads: %d threads (allowed 1..%d)", n, TSL_MAX_THREADS);
  pthread_once(&g_init_once, init_once);
  atomic_store(&g_num_threads, n);
  return TSL_OK;
}

int tsl_get_num_threads(void) {
  if (tl_num_threads > 0) return tl_num_threads;
  pthread_once(&g_init_once, init_once);
  return atomic_load(&g_num_threads);
}

int tsl_parallel_set_local_threads(int n) {
  int prev = tl_num_threads;
  tl_num_threads = n >= 1 && n <= TSL_MAX_THREADS ? n : 0;
  return prev;
}

tsl_status tsl_set_parallel_schedule(tsl_sched kind, int64_t chunk) {
  pthread_once(&g_init_once, init_once); /* the environment's choice first, this call over it */
  if (kind != TSL_SCHED_STATIC && kind != TSL_SCHED_DYNAMIC && kind != TSL_SCHED_BALANCED)
    return tsl_error(TSL_ERR_INVALID, "tsl_set_parallel_schedule: unknown schedule %d", (int)kind);
  if (kind == TSL_SCHED_DYNAMIC && chunk < 1)
    return tsl_error(TSL_ERR_INVALID, "tsl_set_parallel_schedule: dynamic chunk %lld (must be >= 1)", (long long)chunk);
  if (kind == TSL_SCHED_DYNAMIC) atomic_store(&g_sched_chunk, chunk);
  atomic_store(&g_sched_kind, (int)kind);
  return TSL_OK;
}

void tsl_get_parallel_schedule(tsl_sched *kind, int64_t *chunk) {
  pthread_once(&g_init_once, init_once);
  if (kind) *kind = (tsl_sched)atomic_load(&g_sched_kind);
  if (chunk) *chunk = atomic_load(&g_sched_chunk);
}

static void record_error(int64_t begin, int32_t code) {
  pthread_mutex_lock(&g_pool.err_mu);
  if (begin < g_pool.err_begin) {
    g_pool.err_begin = begin;
    g_pool.err = code;
  }
  pthread_mutex_unlock(&g_pool.err_mu);
}

/* Takes part `id` of launch generation `gen` for the calling thread: true for exactly
 * one caller per part and generation. A worker that wakes late (asleep on the condition
 * variable, or descheduled by another process) finds its part already taken by the
 * launcher, which runs the parts nobody started once its own is done, so a launch never
 * waits for a thread to wake up. A worker still holding an older generation's ticket
 * fails here, so it never runs a part of a job it was not launched for. */
static bool claim_part(int id, uint64_t gen) {
  uint_fast64_t v = atomic_load(&g_pool.part_gen[id]);
  while (v < gen)
    if (atomic_compare_exchange_weak(&g_pool.part_gen[id], &v, gen)) return true;
  return false;
}

/* Participant i's contiguous share [*begin, *end) of the current job (static split). */
static void share_of(const pool *p, int i, int64_t *begin, int64_t *end) {
  int64_t q = p->extent / p->nparts, r = p->extent % p->nparts;
  *begin = i * q + (i < r ? i : r);
  *end = *begin + q + (i < r ? 1 : 0);
}

/* The size of the pieces of a share of `len` iterations (the last may be shorter). */
static int64_t piece_size(int64_t len) {
  int64_t piece = (len + TSL_SCHED_BALANCED_PIECES - 1) / TSL_SCHED_BALANCED_PIECES;
  return piece < 1 ? 1 : piece;
}

/* How many pieces a share of `len` iterations has (at most TSL_SCHED_BALANCED_PIECES). */
static int64_t piece_count(int64_t len) {
  int64_t piece = piece_size(len);
  return (len + piece - 1) / piece;
}

/* Takes one piece of participant i's share: the front one for its owner, else the back
 * one (a thief leaves the owner its next iterations, in order); -1 when none is left. */
static int take_piece(pool *p, int i, bool owner) {
  uint_fast64_t v = atomic_load(&p->share[i].pieces), w;
  do {
    uint_fast64_t front = v >> 32, back = v & 0xffffffffu;
    if (front >= back) return -1;
    w = owner ? (front + 1) << 32 | back : front << 32 | (back - 1);
  } while (!atomic_compare_exchange_weak(&p->share[i].pieces, &v, w));
  return owner ? (int)(v >> 32) : (int)(w & 0xffffffffu);
}

/* Runs pieces of participant i's share (as its owner or a thief) until none is left;
 * false when the job failed. */
static bool run_pieces(pool *p, int i, bool owner) {
  int64_t begin, end;
  share_of(p, i, &begin, &end);
  int64_t piece = piece_size(end - begin);
  for (;;) {
    if (atomic_load(&p->failed)) return false;
    int k = take_piece(p, i, owner);
    if (k < 0) return true;
    int64_t b = begin + k * piece, e = end - b > piece ? b + piece : end;
    int32_t rc = p->task(b, e, p->closure);
    if (rc != 0) {
      record_error(b, rc);
      atomic_store(&p->failed, true);
      return false;
    }
  }
}

/* Participant `id`'s part of the current job. */
static void run_share(int id) {
  pool *p = &g_pool;
  if (p->balanced) { /* its own share, then what is left of the others' */
    for (int k = 0; k < p->nparts; k++)
      if (!run_pieces(p, (id + k) % p->nparts, k == 0)) return;
    return;
  }
  if (!p->dynamic) {
    int64_t begin, end;
    share_of(p, id, &begin, &end);
    int32_t rc = p->task(begin, end, p->closure);
    if (rc != 0) record_error(begin, rc);
    return;
  }
  for (;;) {
    if (atomic_load(&p->failed)) return;
    int_fast64_t begin = atomic_load(&p->next), end;
    do {
      if (begin >= p->extent) return;
      end = p->extent - begin > p->chunk ? begin + p->chunk : p->extent;
    } while (!atomic_compare_exchange_weak(&p->next, &begin, end));
    int32_t rc = p->task(begin, end, p->closure);
    if (rc != 0) {
      record_error(begin, rc);
      atomic_store(&p->failed, true);
    }
  }
}

/* Waits for a ticket of a generation other than `seen`; false on shutdown. Spins while
 * a warm section is open (tsl_parallel_warm_begin) and SPIN_ITERS pauses after it, then
 * blocks until a new ticket or a warm section (which wakes the pool) arrives. */
static bool wait_ticket(uint64_t seen, uint64_t *ticket) {
  for (;;) {
    for (int i = 0; i < SPIN_ITERS || atomic_load(&g_pool.warm) > 0; i++) {
      if (atomic_load(&g_pool.shutdown)) return false;
      uint64_t t = atomic_load(&g_pool.ticket);
      if (t >> TICKET_PARTS_BITS != seen) {
        *ticket = t;
        return true;
      }
      cpu_relax();
    }
    pthread_mutex_lock(&g_pool.mu);
    while (!atomic_load(&g_pool.shutdown) && atomic_load(&g_pool.warm) == 0 &&
           atomic_load(&g_pool.ticket) >> TICKET_PARTS_BITS == seen)
      pthread_cond_wait(&g_pool.work_cv, &g_pool.mu);
    bool alive = !atomic_load(&g_pool.shutdown);
    *ticket = atomic_load(&g_pool.ticket);
    pthread_mutex_unlock(&g_pool.mu);
    if (!alive) return false;
    if (*ticket >> TICKET_PARTS_BITS != seen) return true;
    /* woken by a warm section: spin for its launches */
  }
}

static void *worker_main(void *arg) {
  int id = (int)(intptr_t)arg;
  tl_in_parallel = true; /* loops launched from a task run inline */
  uint64_t seen = g_pool.start_gen[id];
  uint64_t ticket;
  while (wait_ticket(seen, &ticket)) {
    seen = ticket >> TICKET_PARTS_BITS;
    if ((uint64_t)id >= (ticket & TICKET_PARTS_MASK) || !claim_part(id, seen)) continue;
    run_share(id);
    if (atomic_fetch_sub(&g_pool.pending, 1) == 1) {
      pthread_mutex_lock(&g_pool.mu);
      pthread_cond_signal(&g_pool.done_cv);
      pthread_mutex_unlock(&g_pool.mu);
    }
  }
  return NULL;
}

/* Grows the pool to `want` workers (launch_mu held); returns how many exist. Workers
 * start with every signal blocked so that signals go to application threads. */
static int ensure_workers(int want) {
  if (want > TSL_MAX_THREADS - 1) want = TSL_MAX_THREADS - 1;
  if (g_pool.nworkers >= want) return g_pool.nworkers;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  while (g_pool.nworkers < want) {
    int id = g_pool.nworkers + 1;
    g_pool.start_gen[id] = atomic_load(&g_pool.ticket) >> TICKET_PARTS_BITS;
    if (pthread_create(&g_pool.workers[id], NULL, worker_main, (void *)(intptr_t)id) != 0) break;
    char name[16]; /* the kernel's limit; the mask only proves the bound to the compiler */
    snprintf(name, sizeof name, "tessel-w%d", id & 0xfff);
    pthread_setname_np(g_pool.workers[id], name);
    g_pool.nworkers = id;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return g_pool.nworkers;
}

static int32_t run_inline(tsl_parallel_task task, void *closure, int64_t extent) {
  bool was = tl_in_parallel;
  tl_in_parallel = true;
  int32_t rc = task(0, extent, closure);
  tl_in_parallel = was;
  return rc;
}

int32_t tsl_parallel_for(tsl_parallel_task task, void *closure, int64_t extent) {
  if (!task) return -1;
  if (extent <= 0) return 0;
  if (tl_in_parallel) return task(0, extent, closure);
  /* the environment's schedule and the fork handler, even when a thread-local count
   * lets tsl_get_num_threads skip them */
  pthread_once(&g_init_once, init_once);
  int nthreads = tsl_get_num_threads();
  int kind = atomic_load(&g_sched_kind);
  bool dynamic = kind == TSL_SCHED_DYNAMIC;
  int64_t chunk = atomic_load(&g_sched_chunk);
  if (chunk > extent) chunk = extent;
  int64_t pieces = dynamic ? (extent - 1) / chunk + 1 : extent;
  int nparts = pieces < nthreads ? (int)pieces : nthreads;
  if (nparts <= 1) return run_inline(task, closure, extent);
  if (pthread_mutex_trylock(&g_pool.launch_mu) != 0) return run_inline(task, closure, extent);
  int have = ensure_workers(nparts - 1);
  if (have + 1 < nparts) nparts = have + 1;
  if (nparts <= 1) {
    pthread_mutex_unlock(&g_pool.launch_mu);
    return run_inline(task, closure, extent);
  }
  pool *p = &g_pool;
  p->task = task;
  p->closure = closure;
  p->extent = extent;
  p->nparts = nparts;
  p->dynamic = dynamic;
  p->balanced = kind == TSL_SCHED_BALANCED;
  p->chunk = chunk;
  atomic_store(&p->next, 0);
  for (int i = 0; p->balanced && i < nparts; i++) {
    int64_t begin, end;
    share_of(p, i, &begin, &end);
    atomic_store(&p->share[i].pieces, (uint_fast64_t)piece_count(end - begin)); /* front 0, back the count */
  }
  atomic_store(&p->failed, false);
  p->err_begin = INT64_MAX;
  p->err = 0;
  atomic_store(&p->pending, nparts - 1);

  pthread_mutex_lock(&p->mu);
  uint64_t gen = (atomic_load(&p->ticket) >> TICKET_PARTS_BITS) + 1;
  atomic_store(&p->ticket, gen << TICKET_PARTS_BITS | (uint64_t)nparts);
  pthread_cond_broadcast(&p->work_cv);
  pthread_mutex_unlock(&p->mu);

  tl_in_parallel = true;
  run_share(0);
  /* the parts whose workers have not started yet: run them here instead of waiting */
  for (int i = 1; i < nparts; i++)
    if (claim_part(i, gen)) {
      run_share(i);
      atomic_fetch_sub(&p->pending, 1);
    }
  tl_in_parallel = false;

  for (int i = 0; i < SPIN_ITERS && atomic_load(&p->pending) > 0; i++) cpu_relax();
  if (atomic_load(&p->pending) > 0) {
    pthread_mutex_lock(&p->mu);
    while (atomic_load(&p->pending) > 0) pthread_cond_wait(&p->done_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
  }
  int32_t rc = p->err;
  pthread_mutex_unlock(&p->launch_mu);
  return rc;
}

bool tsl_parallel_warm_begin(void) {
  if (tl_in_parallel || tsl_get_num_threads() < 2) return false;
  if (atomic_fetch_add(&g_pool.warm, 1) == 0) {
    pthread_mutex_lock(&g_pool.mu);
    pthread_cond_broadcast(&g_pool.work_cv);
    pthread_mutex_unlock(&g_pool.mu);
  }
  return true;
}

void tsl_parallel_warm_end(bool began) {
  if (began) atomic_fetch_sub(&g_pool.warm, 1);
}

void tsl_thread_pool_shutdown(void) {
  if (tl_in_parallel) return;
  pthread_mutex_lock(&g_pool.launch_mu);
  pthread_mutex_lock(&g_pool.mu);
  atomic_store(&g_pool.shutdown, true);
  pthread_cond_broadcast(&g_pool.work_cv);
  pthread_mutex_unlock(&g_pool.mu);
  for (int id = 1; id <= g_pool.nworkers; id++) pthread_join(g_pool.workers[id], NULL);
  g_pool.nworkers = 0;
  atomic_store(&g_pool.shutdown, false);
  pthread_mutex_unlock(&g_pool.launch_mu);
}

/* Kernel workspaces. A kernel allocates its workspaces (Winograd's transformed block,
 * a padded copy, ...) on every call, inside its parallel body when they are per
 * thread; handed straight to malloc, blocks above glibc's mmap threshold come back as
 * fresh pages each call on the pool's workers (whose arenas trim their top), so each
 * call page-faults its whole workspace again (measured: a 56x56 Winograd F(4x4) layer
 * on 2 threads took 3x the page faults of the same work on 1 thread and ran no faster).
 * So each thread keeps the last few blocks it freed and hands one back when it fits:
 * at most WS_CACHE_SLOTS blocks a thread, each reused only for a request of at least
 * half its size, freed when the thread exits. A block carries its capacity in a
 * 64-byte header before the address returned. */
#define WS_CACHE_SLOTS 4
#define WS_HEADER 64

typedef struct ws_cache {
  void *block[WS_CACHE_SLOTS]; /* the header's address; NULL: empty slot */
  size_t cap[WS_CACHE_SLOTS];  /* usable bytes after the header */
} ws_cache;

static _Thread_local ws_cache tl_ws;
static _Thread_local bool tl_ws_registered;
static pthread_key_t g_ws_key;
static pthread_once_t g_ws_once = PTHREAD_ONCE_INIT;

static void ws_cache_release(void *cache) {
  ws_cache *c = cache;
  for (int i = 0; i < WS_CACHE_SLOTS; i++) {
    free(c->block[i]);
    c->block[i] = NULL;
    c->cap[i] = 0;
  }
}

static void ws_key_create(void) {
  if (pthread_key_create(&g_ws_key, ws_cache_release) != 0) g_ws_key = (pthread_key_t)-1;
}

void *tsl_kernel_alloc(int64_t bytes) {
  if (bytes < 0 || (uint64_t)bytes > SIZE_MAX - 2 * WS_HEADER) return NULL;
  size_t size = ((size_t)bytes + 63) / 64 * 64;
  if (size == 0) size = 64;
  ws_cache *c = &tl_ws;
  int best = -1;
  for (int i = 0; i < WS_CACHE_SLOTS; i++)
    if (c->block[i] && c->cap[i] >= size && c->cap[i] / 2 <= size && (best < 0 || c->cap[i] < c->cap[best])) best = i;
  if (best >= 0) {
    unsigned char *h = c->block[best];
    c->block[best] = NULL;
    c->cap[best] = 0;
    return h + WS_HEADER;
  }
  void *h = NULL;
  if (posix_memalign(&h, 64, size + WS_HEADER) != 0) return NULL;
  memcpy(h, &size, sizeof size);
  return (unsigned char *)h + WS_HEADER;
}

void tsl_kernel_free(void *p) {
  if (!p) return;
  unsigned char *h = (unsigned char *)p - WS_HEADER;
  size_t cap;
  memcpy(&cap, h, sizeof cap);
  if (!tl_ws_registered) {
    /* the thread's cache is freed at its exit (the key's destructor) */
    pthread_once(&g_ws_once, ws_key_create);
    if (g_ws_key == (pthread_key_t)-1 || pthread_setspecific(g_ws_key, &tl_ws) != 0) {
      free(h);
      return;
    }
    tl_ws_registered = true;
  }
  ws_cache *c = &tl_ws;
  /* an empty slot, else the one of the smallest block */
  int slot = 0;
  for (int i = 0; i < WS_CACHE_SLOTS && c->block[slot]; i++)
    if (!c->block[i] || c->cap[i] < c->cap[slot]) slot = i;
  if (c->block[slot] && c->cap[slot] >= cap) {
    free(h); /* the cache holds larger blocks */
    return;
  }
  free(c->block[slot]);
  c->block[slot] = h;
  c->cap[slot] = cap;
}
