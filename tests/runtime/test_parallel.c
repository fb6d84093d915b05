/* The thread pool and tsl_parallel_for: coverage of every index exactly once, static
 * chunk shapes, nesting, errors, dynamic chunks, concurrent launches, fork, idling,
 * warm sections. */
#include <CUnit/Basic.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/parallel.h"
#include "runtime_tests.h"
#include "tessel/runtime.h"

#define MAX_CALLS 1024

/* Every call a task received: its range and its thread. */
typedef struct cover {
  atomic_int *count; /* per index */
  pthread_mutex_t mu;
  int ncalls;
  int64_t begin[MAX_CALLS], end[MAX_CALLS];
  pthread_t thread[MAX_CALLS];
} cover;

static cover *cover_new(int64_t extent) {
  cover *c = calloc(1, sizeof *c);
  c->count = calloc((size_t)(extent > 0 ? extent : 1), sizeof *c->count);
  pthread_mutex_init(&c->mu, NULL);
  return c;
}

static void cover_free(cover *c) {
  pthread_mutex_destroy(&c->mu);
  free(c->count);
  free(c);
}

static int32_t cover_task(int64_t begin, int64_t end, void *closure) {
  cover *c = closure;
  for (int64_t i = begin; i < end; i++) atomic_fetch_add(&c->count[i], 1);
  pthread_mutex_lock(&c->mu);
  if (c->ncalls < MAX_CALLS) {
    c->begin[c->ncalls] = begin;
    c->end[c->ncalls] = end;
    c->thread[c->ncalls] = pthread_self();
  }
  c->ncalls++;
  pthread_mutex_unlock(&c->mu);
  return 0;
}

static int initial_threads;
static tsl_sched initial_kind;
static int64_t initial_chunk;

static int suite_init(void) {
  initial_threads = tsl_get_num_threads();
  tsl_get_parallel_schedule(&initial_kind, &initial_chunk);
  return 0;
}

static int suite_cleanup(void) {
  tsl_set_num_threads(initial_threads);
  tsl_set_parallel_schedule(initial_kind, initial_chunk);
  return 0;
}

/* Static schedule: each index once, min(threads, extent) calls whose sizes differ by
 * at most one; the first on the calling thread, each other one on a worker of its own or,
 * when that worker had not started it by the time the caller finished its own part, on the
 * calling thread (runtime/parallel.h). Class 16: more threads than work. */
static void test_class16_parallel_for_covers_each_index_once(void) {
  CU_ASSERT_EQUAL_FATAL(tsl_set_parallel_schedule(TSL_SCHED_STATIC, 1), TSL_OK);
  static const int64_t extents[] = {0, 1, 2, 3, 7, 1000};
  static const int threads[] = {1, 2, 3, 8};
  for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
    CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(threads[ti]), TSL_OK);
    for (size_t ei = 0; ei < sizeof extents / sizeof extents[0]; ei++) {
      int64_t n = extents[ei];
      cover *c = cover_new(n);
      CU_ASSERT_EQUAL(tsl_parallel_for(cover_task, c, n), 0);
      int wrong = 0;
      for (int64_t i = 0; i < n; i++) wrong += atomic_load(&c->count[i]) != 1;
      CU_ASSERT_EQUAL(wrong, 0);
      int64_t expect_calls = n < threads[ti] ? n : threads[ti];
      CU_ASSERT_EQUAL(c->ncalls, expect_calls);
      int64_t lo = INT64_MAX, hi = 0;
      for (int k = 0; k < c->ncalls; k++) {
        int64_t size = c->end[k] - c->begin[k];
        lo = size < lo ? size : lo;
        hi = size > hi ? size : hi;
        bool mine = pthread_equal(c->thread[k], pthread_self()) != 0;
        if (c->begin[k] == 0) CU_ASSERT_TRUE(mine);
        for (int j = 0; j < k && !mine; j++) CU_ASSERT_FALSE(pthread_equal(c->thread[j], c->thread[k]));
      }
      if (c->ncalls > 0) CU_ASSERT(hi - lo <= 1 && lo >= 1);
      cover_free(c);
    }
  }
}

static void test_parallel_for_calling_thread_runs_first_chunk(void) {
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_set_parallel_schedule(TSL_SCHED_STATIC, 1), TSL_OK);
  cover *c = cover_new(10);
  CU_ASSERT_EQUAL(tsl_parallel_for(cover_task, c, 10), 0);
  CU_ASSERT_EQUAL_FATAL(c->ncalls, 2);
  for (int k = 0; k < 2; k++) {
    CU_ASSERT_EQUAL(c->end[k] - c->begin[k], 5);
    if (c->begin[k] == 0) CU_ASSERT(pthread_equal(c->thread[k], pthread_self()) != 0);
  }
  cover_free(c);
  CU_ASSERT_EQUAL(tsl_set_parallel_schedule(TSL_SCHED_BALANCED, 1), TSL_OK);
}

static void test_parallel_for_nonpositive_extent_makes_no_call(void) {
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(3), TSL_OK);
  cover *c = cover_new(1);
  CU_ASSERT_EQUAL(tsl_parallel_for(cover_task, c, 0), 0);
  CU_ASSERT_EQUAL(tsl_parallel_for(cover_task, c, -5), 0);
  CU_ASSERT_EQUAL(c->ncalls, 0);
  CU_ASSERT_EQUAL(tsl_parallel_for(NULL, c, 5), -1);
  cover_free(c);
}

/* Each outer iteration launches an inner loop: the inner launch runs inline as one call. */
typedef struct nest {
  atomic_int grid[5][10];
  atomic_int inner_calls;
  atomic_int inner_whole;
  atomic_int inner_rc;
} nest;

typedef struct inner_arg {
  nest *n;
  int64_t row;
} inner_arg;

static int32_t inner_task(int64_t begin, int64_t end, void *closure) {
  inner_arg *a = closure;
  atomic_fetch_add(&a->n->inner_calls, 1);
  if (begin == 0 && end == 10) atomic_fetch_add(&a->n->inner_whole, 1);
  for (int64_t j = begin; j < end; j++) atomic_fetch_add(&a->n->grid[a->row][j], 1);
  return 0;
}

static int32_t outer_task(int64_t begin, int64_t end, void *closure) {
  nest *n = closure;
  for (int64_t i = begin; i < end; i++) {
    inner_arg a = {n, i};
    int32_t rc = tsl_parallel_for(inner_task, &a, 10);
    if (rc != 0) atomic_store(&n->inner_rc, rc);
  }
  return 0;
}

static void test_parallel_for_nested_runs_inline_serially(void) {
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(3), TSL_OK);
  nest *n = calloc(1, sizeof *n);
  CU_ASSERT_EQUAL(tsl_parallel_for(outer_task, n, 5), 0);
  int wrong = 0;
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 10; j++) wrong += atomic_load(&n->grid[i][j]) != 1;
  CU_ASSERT_EQUAL(wrong, 0);
  CU_ASSERT_EQUAL(atomic_load(&n->inner_calls), 5);
  CU_ASSERT_EQUAL(atomic_load(&n->inner_whole), 5);
  CU_ASSERT_EQUAL(atomic_load(&n->inner_rc), 0);
  free(n);
}

/* Fails with 7 on the chunk holding `first_bad`, with 9 on the chunk holding `second_bad`. */
typedef struct failing {
  int64_t first_bad, second_bad;
  atomic_int calls;
} failing;

static int32_t failing_task(int64_t begin, int64_t end, void *closure) {
  failing *f = closure;
  atomic_fetch_add(&f->calls, 1);
  if (f->first_bad >= begin && f->first_bad < end) return 7;
  if (f->second_bad >= begin && f->second_bad < end) return 9;
  return 0;
}

static void test_parallel_for_returns_lowest_failing_chunk_code(void) {
  CU_ASSERT_EQUAL_FATAL(tsl_set_parallel_schedule(TSL_SCHED_STATIC, 1), TSL_OK);
  static const int threads[] = {1, 2, 3, 8};
  for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
    CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(threads[ti]), TSL_OK);
    failing f = {.first_bad = 500, .second_bad = 900};
    CU_ASSERT_EQUAL(tsl_parallel_for(failing_task, &f, 1000), 7);
    /* Static chunks all run, failing or not. */
    CU_ASSERT_EQUAL(atomic_load(&f.calls), threads[ti]);
    failing g = {.first_bad = -1, .second_bad = 999};
    CU_ASSERT_EQUAL(tsl_parallel_for(failing_task, &g, 1000), 9);
    failing h = {.first_bad = -1, .second_bad = -1};
    CU_ASSERT_EQUAL(tsl_parallel_for(failing_task, &h, 1000), 0);
  }
}

static void test_parallel_for_dynamic_chunks(void) {
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_set_parallel_schedule(TSL_SCHED_DYNAMIC, 3), TSL_OK);
  tsl_sched kind;
  int64_t chunk;
  tsl_get_parallel_schedule(&kind, &chunk);
  CU_ASSERT_EQUAL(kind, TSL_SCHED_DYNAMIC);
  CU_ASSERT_EQUAL(chunk, 3);
  cover *c = cover_new(100);
  CU_ASSERT_EQUAL(tsl_parallel_for(cover_task, c, 100), 0);
  int wrong = 0, misplaced = 0;
  for (int64_t i = 0; i < 100; i++) wrong += atomic_load(&c->count[i]) != 1;
  CU_ASSERT_EQUAL(wrong, 0);
  CU_ASSERT_EQUAL(c->ncalls, 34); /* ceil(100 / 3) */
  for (int k = 0; k < c->ncalls; k++) misplaced += c->begin[k] % 3 != 0 || c->end[k] - c->begin[k] > 3;
  CU_ASSERT_EQUAL(misplaced, 0);
  cover_free(c);
  failing f = {.first_bad = 0, .second_bad = 50};
  CU_ASSERT_EQUAL(tsl_parallel_for(failing_task, &f, 100), 7);
  CU_ASSERT_EQUAL(tsl_set_parallel_schedule(TSL_SCHED_DYNAMIC, 0), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_set_parallel_schedule((tsl_sched)5, 1), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_set_parallel_schedule(TSL_SCHED_STATIC, 0), TSL_OK);
  CU_ASSERT_EQUAL(tsl_set_parallel_schedule(TSL_SCHED_BALANCED, 0), TSL_OK); /* the default, for the tests below */
}

/* The balanced schedule (the default): each index once; every call a contiguous range
 * inside one thread's static share (sizes differing by <= 1), at most ceil(share /
 * TSL_SCHED_BALANCED_PIECES) long; no more calls than pieces (a worker done with its
 * share may take share 0's first piece too, before a preempted caller starts: no thread
 * is promised a piece). Class 16: more threads than work. */
static void test_class16_balanced_schedule_covers_each_index_once_in_pieces(void) {
  /* the default, unless the environment chose another */
  const char *env = getenv("TSL_PARALLEL_SCHEDULE");
  tsl_sched want = TSL_SCHED_BALANCED;
  int64_t env_chunk;
  if (env && env[0] && !tsl_parallel_schedule_parse(env, &want, &env_chunk)) want = TSL_SCHED_BALANCED;
  CU_ASSERT_EQUAL(initial_kind, want);
  CU_ASSERT_EQUAL_FATAL(tsl_set_parallel_schedule(TSL_SCHED_BALANCED, 1), TSL_OK);
  static const int64_t extents[] = {0, 1, 2, 3, 7, 17, 1000};
  static const int threads[] = {1, 2, 3, 8};
  for (size_t ti = 0; ti < sizeof threads / sizeof threads[0]; ti++) {
    CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(threads[ti]), TSL_OK);
    for (size_t ei = 0; ei < sizeof extents / sizeof extents[0]; ei++) {
      int64_t n = extents[ei];
      int parts = n < threads[ti] ? (int)n : threads[ti];
      bool inline_call = parts <= 1; /* one call over the whole range */
      cover *c = cover_new(n);
      CU_ASSERT_EQUAL(tsl_parallel_for(cover_task, c, n), 0);
      int wrong = 0, straddles = 0, too_long = 0;
      for (int64_t i = 0; i < n; i++) wrong += atomic_load(&c->count[i]) != 1;
      int64_t max_calls = 0;
      for (int k = 0; k < parts; k++) { /* the shares, computed here: sizes n/parts or one more */
        int64_t size = n / parts + (k < n % parts ? 1 : 0), piece = (size + TSL_SCHED_BALANCED_PIECES - 1) / TSL_SCHED_BALANCED_PIECES;
        max_calls += inline_call ? 1 : (size + piece - 1) / piece;
      }
      for (int k = 0; k < c->ncalls && k < MAX_CALLS; k++) {
        int64_t b = c->begin[k], e = c->end[k], lo = 0;
        int share = 0;
        for (; share < parts; share++) {
          int64_t size = n / parts + (share < n % parts ? 1 : 0);
          if (b < lo + size) break;
          lo += size;
        }
        int64_t size = n / parts + (share < n % parts ? 1 : 0);
        straddles += share >= parts || e > lo + size || e <= b;
        too_long += share < parts && e - b > (inline_call ? size : (size + TSL_SCHED_BALANCED_PIECES - 1) / TSL_SCHED_BALANCED_PIECES);
      }
      CU_ASSERT_EQUAL(wrong, 0);
      CU_ASSERT_EQUAL(straddles, 0);
      CU_ASSERT_EQUAL(too_long, 0);
      CU_ASSERT(c->ncalls <= max_calls);
      if (n > 0) CU_ASSERT(c->ncalls >= parts);
      cover_free(c);
    }
  }
  /* a failure: its code comes back; no piece runs twice (at most the 16 pieces) */
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(2), TSL_OK);
  failing f = {.first_bad = 0, .second_bad = -1};
  CU_ASSERT_EQUAL(tsl_parallel_for(failing_task, &f, 1000), 7);
  CU_ASSERT(atomic_load(&f.calls) <= 16);
}

/* A thread that is slow on its share does not hold the loop up: with two threads and a
 * worker stuck in the first piece of share 1 until the rest of share 1 has run, the
 * calling thread runs that rest, from its back (15 first) (under the static schedule the loop would wait for the
 * worker, which waits forever: here a 5 s deadline says so). Launched until the worker
 * took share 1 at least once (a late worker's share is run by the caller instead). */
typedef struct slow_share {
  pthread_t caller;
  atomic_int done[16];
  atomic_int worker_stuck, timed_out, rest_by_caller, front_first;
} slow_share;

static int32_t slow_share_task(int64_t begin, int64_t end, void *closure) {
  slow_share *s = closure;
  bool on_worker = pthread_equal(pthread_self(), s->caller) == 0;
  for (int64_t i = begin; i < end; i++) {
    if (i < 8 && !on_worker) /* the caller's own share takes a while: the worker starts share 1 first */
      for (double t0 = tsl_time_now(); tsl_time_now() - t0 < 50e-6;) {
      }
    if (i == 8 && on_worker) {
      atomic_fetch_add(&s->worker_stuck, 1);
      double t0 = tsl_time_now();
      for (;;) {
        int rest = 0;
        for (int k = 9; k < 16; k++) rest += atomic_load(&s->done[k]);
        if (rest == 7) break;
        if (tsl_time_now() - t0 > 5.0) {
          atomic_fetch_add(&s->timed_out, 1);
          break;
        }
        sched_yield();
      }
    }
    if (i > 8 && !on_worker) {
      atomic_fetch_add(&s->rest_by_caller, 1);
      /* a thief takes the back piece first: nothing of 9..14 ran before 15 */
      if (i < 15 && !atomic_load(&s->done[15])) atomic_fetch_add(&s->front_first, 1);
    }
    atomic_store(&s->done[i], 1);
  }
  return 0;
}

static void test_balanced_schedule_helps_a_slow_thread(void) {
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(2), TSL_OK);
  CU_ASSERT_EQUAL_FATAL(tsl_set_parallel_schedule(TSL_SCHED_BALANCED, 1), TSL_OK);
  bool warm = tsl_parallel_warm_begin(); /* the worker spins: it takes its share in time */
  int stuck = 0, timed_out = 0, launches = 0;
  for (; launches < 2000 && stuck == 0; launches++) {
    slow_share s = {.caller = pthread_self()};
    CU_ASSERT_EQUAL(tsl_parallel_for(slow_share_task, &s, 16), 0);
    int all = 0;
    for (int k = 0; k < 16; k++) all += atomic_load(&s.done[k]);
    CU_ASSERT_EQUAL(all, 16);
    stuck += atomic_load(&s.worker_stuck);
    timed_out += atomic_load(&s.timed_out);
    if (atomic_load(&s.worker_stuck)) {
      CU_ASSERT_EQUAL(atomic_load(&s.rest_by_caller), 7);
      CU_ASSERT_EQUAL(atomic_load(&s.front_first), 0);
    }
  }
  tsl_parallel_warm_end(warm);
  CU_ASSERT(stuck > 0);
  CU_ASSERT_EQUAL(timed_out, 0);
}

/* TSL_PARALLEL_SCHEDULE's spelling, checked against the values written out here. */
static void test_parallel_schedule_parse_accepts_the_documented_spellings(void) {
  tsl_sched kind = TSL_SCHED_DYNAMIC;
  int64_t chunk = 99;
  CU_ASSERT_TRUE(tsl_parallel_schedule_parse("static", &kind, &chunk));
  CU_ASSERT_EQUAL(kind, TSL_SCHED_STATIC);
  CU_ASSERT_TRUE(tsl_parallel_schedule_parse("balanced", &kind, &chunk));
  CU_ASSERT_EQUAL(kind, TSL_SCHED_BALANCED);
  CU_ASSERT_TRUE(tsl_parallel_schedule_parse("dynamic,16", &kind, &chunk));
  CU_ASSERT_EQUAL(kind, TSL_SCHED_DYNAMIC);
  CU_ASSERT_EQUAL(chunk, 16);
  static const char *const bad[] = {"", "Static", "dynamic", "dynamic,", "dynamic,0", "dynamic,-3", "dynamic,+4",
                                    "dynamic,4x", "dynamic, 4", "dynamic,99999999999999999999", "guided", "static "};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    kind = TSL_SCHED_STATIC;
    chunk = 7;
    CU_ASSERT_FALSE(tsl_parallel_schedule_parse(bad[i], &kind, &chunk));
    CU_ASSERT(kind == TSL_SCHED_STATIC && chunk == 7);
  }
  CU_ASSERT_FALSE(tsl_parallel_schedule_parse(NULL, &kind, &chunk));
}

static void test_set_num_threads_validates_range(void) {
  CU_ASSERT_EQUAL(tsl_set_num_threads(0), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_set_num_threads(-3), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_set_num_threads(TSL_MAX_THREADS + 1), TSL_ERR_INVALID);
  CU_ASSERT_EQUAL(tsl_set_num_threads(5), TSL_OK);
  CU_ASSERT_EQUAL(tsl_get_num_threads(), 5);
  CU_ASSERT(initial_threads >= 1 && initial_threads <= TSL_MAX_THREADS);
}

/* Class 16: the same values with 1 and with N threads (no reduction across chunks). */
static int32_t square_task(int64_t begin, int64_t end, void *closure) {
  double *y = closure;
  for (int64_t i = begin; i < end; i++) y[i] = (double)i * (double)i / 7.0 + 0.5;
  return 0;
}

static void test_class16_one_and_many_threads_identical(void) {
  enum { N = 4099 };
  double *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b);
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(1), TSL_OK);
  CU_ASSERT_EQUAL(tsl_parallel_for(square_task, a, N), 0);
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(7), TSL_OK);
  CU_ASSERT_EQUAL(tsl_parallel_for(square_task, b, N), 0);
  CU_ASSERT_EQUAL(memcmp(a, b, N * sizeof *a), 0);
  CU_ASSERT_EQUAL(b[N - 1], (double)(N - 1) * (double)(N - 1) / 7.0 + 0.5);
  free(a);
  free(b);
}

/* Two application threads launching at once: every launch still covers its range. */
typedef struct app_thread {
  cover *c;
  int launches;
  int bad;
} app_thread;

static void *app_thread_main(void *p) {
  app_thread *a = p;
  for (int i = 0; i < a->launches; i++) a->bad += tsl_parallel_for(cover_task, a->c, 64) != 0;
  return NULL;
}

static void test_parallel_for_concurrent_launches_from_two_threads(void) {
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(3), TSL_OK);
  app_thread a[2];
  pthread_t t[2];
  for (int i = 0; i < 2; i++) {
    a[i] = (app_thread){cover_new(64), 200, 0};
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t[i], NULL, app_thread_main, &a[i]), 0);
  }
  for (int i = 0; i < 2; i++) {
    pthread_join(t[i], NULL);
    int wrong = 0;
    for (int j = 0; j < 64; j++) wrong += atomic_load(&a[i].c->count[j]) != 200;
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_EQUAL(a[i].bad, 0);
    cover_free(a[i].c);
  }
}

/* A forked child has none of the parent's workers and must not wait for them. */
static void test_parallel_for_works_in_forked_child(void) {
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(3), TSL_OK);
  cover *c = cover_new(30);
  CU_ASSERT_EQUAL(tsl_parallel_for(cover_task, c, 30), 0); /* the parent's workers exist */
  cover_free(c);
  pid_t pid = fork();
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    alarm(20); /* a deadlock becomes a failure, not a hang */
    int ok = 1;
    for (int kind = 0; kind < 2; kind++) { /* the default (balanced), then static: 3 calls */
      if (kind) tsl_set_parallel_schedule(TSL_SCHED_STATIC, 1);
      cover *cc = cover_new(30);
      ok &= tsl_parallel_for(cover_task, cc, 30) == 0 && (!kind || cc->ncalls == 3);
      for (int i = 0; i < 30; i++) ok &= atomic_load(&cc->count[i]) == 1;
      cover_free(cc);
    }
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
  CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_thread_pool_shutdown_then_relaunch(void) {
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(4), TSL_OK);
  for (int kind = 0; kind < 2; kind++) { /* static (4 calls a launch), then the default */
    CU_ASSERT_EQUAL_FATAL(tsl_set_parallel_schedule(kind ? TSL_SCHED_BALANCED : TSL_SCHED_STATIC, 1), TSL_OK);
    cover *c = cover_new(40);
    CU_ASSERT_EQUAL(tsl_parallel_for(cover_task, c, 40), 0);
    tsl_thread_pool_shutdown();
    CU_ASSERT_EQUAL(tsl_parallel_for(cover_task, c, 40), 0);
    int wrong = 0;
    for (int i = 0; i < 40; i++) wrong += atomic_load(&c->count[i]) != 2;
    CU_ASSERT_EQUAL(wrong, 0);
    if (!kind) CU_ASSERT_EQUAL(c->ncalls, 8);
    cover_free(c);
  }
}

static double process_cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Idle workers block instead of spinning: the process burns almost no CPU while the
 * test thread sleeps after a launch. */
/* Launches made while the workers sleep (each after a pause longer than their spin) or
 * back to back, with the part count changing between them (3, 2, 3 parts): a worker
 * that wakes late finds its part taken by the caller, or a newer launch's ticket, and
 * never runs a part twice or a part of a launch it missed; every index is covered once
 * in every launch. */
static void test_parallel_for_late_workers_never_run_a_part_twice(void) {
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(3), TSL_OK);
  struct timespec nap = {0, 300 * 1000};
  int wrong = 0, wrong_calls = 0;
  /* static: one call per part; balanced (every 4th launch): pieces, each index once */
  for (int rep = 0; rep < 600; rep++) {
    bool balanced = rep % 4 == 3;
    CU_ASSERT_EQUAL_FATAL(tsl_set_parallel_schedule(balanced ? TSL_SCHED_BALANCED : TSL_SCHED_STATIC, 1), TSL_OK);
    int64_t n = rep % 2 ? 2 : 3 + rep % 5;
    cover *c = cover_new(n);
    if (tsl_parallel_for(cover_task, c, n) != 0) wrong++;
    for (int64_t i = 0; i < n; i++) wrong += atomic_load(&c->count[i]) != 1;
    if (!balanced) wrong_calls += c->ncalls != (n < 3 ? n : 3);
    cover_free(c);
    if (rep % 3 == 0) nanosleep(&nap, NULL);
  }
  CU_ASSERT_EQUAL(tsl_set_parallel_schedule(TSL_SCHED_BALANCED, 1), TSL_OK);
  CU_ASSERT_EQUAL(wrong, 0);
  CU_ASSERT_EQUAL(wrong_calls, 0);
}

static void test_idle_workers_block_without_spinning(void) {
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(3), TSL_OK);
  cover *c = cover_new(30);
  CU_ASSERT_EQUAL(tsl_parallel_for(cover_task, c, 30), 0);
  cover_free(c);
  struct timespec settle = {0, 20 * 1000 * 1000}, idle = {0, 150 * 1000 * 1000};
  nanosleep(&settle, NULL);
  double cpu0 = process_cpu_seconds();
  nanosleep(&idle, NULL);
  double used = process_cpu_seconds() - cpu0;
  CU_ASSERT(used < 0.03); /* a spinning worker would use ~0.15 s */
}

/* A warm section: launches inside it cover every index once; its workers spin while it
 * is open (the process burns CPU while the test thread sleeps) and block again once the
 * outermost of two nested sections ends; with one thread it opens nothing. */
static void test_warm_section_spins_then_idles(void) {
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(1), TSL_OK);
  CU_ASSERT_FALSE(tsl_parallel_warm_begin());
  tsl_parallel_warm_end(false);
  CU_ASSERT_EQUAL_FATAL(tsl_set_num_threads(2), TSL_OK);
  cover *c = cover_new(50);
  CU_ASSERT_EQUAL(tsl_parallel_for(cover_task, c, 50), 0); /* the worker exists */
  struct timespec settle = {0, 20 * 1000 * 1000}, idle = {0, 150 * 1000 * 1000};
  nanosleep(&settle, NULL); /* the worker is asleep now */
  bool outer = tsl_parallel_warm_begin(), inner = tsl_parallel_warm_begin();
  CU_ASSERT_TRUE(outer);
  CU_ASSERT_TRUE(inner);
  double cpu0 = process_cpu_seconds();
  nanosleep(&idle, NULL);
  double spun = process_cpu_seconds() - cpu0;
  CU_ASSERT(spun > 0.005); /* woken by begin, spinning: up to 0.15 s (less on a loaded machine) */
  CU_ASSERT_EQUAL(tsl_parallel_for(cover_task, c, 50), 0);
  tsl_parallel_warm_end(inner);
  CU_ASSERT_EQUAL(tsl_parallel_for(cover_task, c, 50), 0);
  tsl_parallel_warm_end(outer);
  int wrong = 0;
  for (int i = 0; i < 50; i++) wrong += atomic_load(&c->count[i]) != 3;
  CU_ASSERT_EQUAL(wrong, 0);
  cover_free(c);
  nanosleep(&settle, NULL);
  cpu0 = process_cpu_seconds();
  nanosleep(&idle, NULL);
  CU_ASSERT(process_cpu_seconds() - cpu0 < 0.03);
}

static void test_kernel_alloc_is_aligned_and_checked(void) {
  static const int64_t sizes[] = {0, 1, 63, 64, 65, 4096, 1000003};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    unsigned char *p = tsl_kernel_alloc(sizes[i]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_EQUAL((uintptr_t)p & 63, 0);
    if (sizes[i] > 0) {
      p[0] = 1;
      p[sizes[i] - 1] = 2; /* the whole block is usable (ASan checks) */
    }
    tsl_kernel_free(p);
  }
  CU_ASSERT_PTR_NULL(tsl_kernel_alloc(-1));
  tsl_kernel_free(NULL);
}

/* Workspaces handed out while others are live never overlap, keep their bytes, and a
 * freed block comes back for the next request on the same thread that it fits (the
 * per-thread cache of tsl_kernel_alloc), on the pool's workers too. */
enum { WS_LIVE = 6 };

static int32_t workspace_task(int64_t begin, int64_t end, void *closure) {
  atomic_int *bad = closure;
  for (int64_t it = begin; it < end; it++)
    for (int round = 0; round < 4; round++) {
      unsigned char *p[WS_LIVE];
      int64_t n[WS_LIVE];
      for (int i = 0; i < WS_LIVE; i++) {
        n[i] = 1000 + (it * 7 + i * 131071 + round * 65537) % 400000;
        p[i] = tsl_kernel_alloc(n[i]);
        if (!p[i] || ((uintptr_t)p[i] & 63)) {
          atomic_fetch_add(bad, 1);
          return 0;
        }
        memset(p[i], (int)(it * WS_LIVE + i) & 0xff, (size_t)n[i]);
      }
      for (int i = 0; i < WS_LIVE; i++) {
        unsigned char want = (unsigned char)((it * WS_LIVE + i) & 0xff);
        if (p[i][0] != want || p[i][n[i] / 2] != want || p[i][n[i] - 1] != want) atomic_fetch_add(bad, 1);
        tsl_kernel_free(p[i]);
      }
    }
  return 0;
}

static void test_kernel_alloc_reuses_freed_blocks_without_overlap(void) {
  unsigned char *a = tsl_kernel_alloc(300000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  tsl_kernel_free(a);
  unsigned char *b = tsl_kernel_alloc(299000); /* fits the freed block */
  CU_ASSERT_PTR_EQUAL(b, a);
  unsigned char *c = tsl_kernel_alloc(299000); /* b is live: another block */
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_PTR_NOT_EQUAL(c, b);
  tsl_kernel_free(b);
  tsl_kernel_free(c);
  unsigned char *d = tsl_kernel_alloc(1000); /* far smaller than any cached block */
  CU_ASSERT_PTR_NOT_NULL_FATAL(d);
  CU_ASSERT(d != a && d != c);
  tsl_kernel_free(d);
  atomic_int bad = 0;
  int prev = tsl_get_num_threads();
  CU_ASSERT_EQUAL(tsl_set_num_threads(2), TSL_OK);
  for (int rep = 0; rep < 3; rep++) CU_ASSERT_EQUAL(tsl_parallel_for(workspace_task, &bad, 8), 0);
  tsl_set_num_threads(prev);
  CU_ASSERT_EQUAL(atomic_load(&bad), 0);
}

void tsl_tests_runtime_parallel(void) {
  CU_pSuite s = CU_add_suite("runtime_parallel", suite_init, suite_cleanup);
  CU_add_test(s, "test_class16_parallel_for_covers_each_index_once", test_class16_parallel_for_covers_each_index_once);
  CU_add_test(s, "test_kernel_alloc_reuses_freed_blocks_without_overlap",
              test_kernel_alloc_reuses_freed_blocks_without_overlap);
  CU_add_test(s, "test_parallel_for_calling_thread_runs_first_chunk", test_parallel_for_calling_thread_runs_first_chunk);
  CU_add_test(s, "test_class16_balanced_schedule_covers_each_index_once_in_pieces",
              test_class16_balanced_schedule_covers_each_index_once_in_pieces);
  CU_add_test(s, "test_balanced_schedule_helps_a_slow_thread", test_balanced_schedule_helps_a_slow_thread);
  CU_add_test(s, "test_parallel_for_nonpositive_extent_makes_no_call",
              test_parallel_for_nonpositive_extent_makes_no_call);
  CU_add_test(s, "test_parallel_for_nested_runs_inline_serially", test_parallel_for_nested_runs_inline_serially);
  CU_add_test(s, "test_parallel_for_returns_lowest_failing_chunk_code",
              test_parallel_for_returns_lowest_failing_chunk_code);
  CU_add_test(s, "test_parallel_for_dynamic_chunks", test_parallel_for_dynamic_chunks);
  CU_add_test(s, "test_set_num_threads_validates_range", test_set_num_threads_validates_range);
  CU_add_test(s, "test_parallel_schedule_parse_accepts_the_documented_spellings",
              test_parallel_schedule_parse_accepts_the_documented_spellings);
  CU_add_test(s, "test_class16_one_and_many_threads_identical", test_class16_one_and_many_threads_identical);
  CU_add_test(s, "test_parallel_for_concurrent_launches_from_two_threads",
              test_parallel_for_concurrent_launches_from_two_threads);
  CU_add_test(s, "test_parallel_for_works_in_forked_child", test_parallel_for_works_in_forked_child);
  CU_add_test(s, "test_thread_pool_shutdown_then_relaunch", test_thread_pool_shutdown_then_relaunch);
  CU_add_test(s, "test_parallel_for_late_workers_never_run_a_part_twice",
              test_parallel_for_late_workers_never_run_a_part_twice);
  CU_add_test(s, "test_idle_workers_block_without_spinning", test_idle_workers_block_without_spinning);
  CU_add_test(s, "test_warm_section_spins_then_idles", test_warm_section_spins_then_idles);
  CU_add_test(s, "test_kernel_alloc_is_aligned_and_checked", test_kernel_alloc_is_aligned_and_checked);
}
