/* bench/core_to_core: the round trip of one cache line between two CPUs, i.e. what a
 * kernel pays when it reads data another thread's core has just written.
 *
 *   core_to_core [--repeat N] [--trips T]
 *
 * Two threads pinned to the first CPU of this process's affinity mask and to each other
 * CPU in turn pass a counter back and forth through one 64-byte-aligned atomic (acquire
 * loads spinning, release stores): T round trips per sample, N samples, the median per
 * round trip in nanoseconds. On the 2-vCPU VMs this project runs on it tells the
 * machine's two states apart (AMD Zen 5, 2026-12-05: 120-150 ns in the fast state and ~450
 * ns in the slow one, where whole models at 2 threads ran up to 1.5x slower: ConvNeXt
 * nano 2.16 against 3.25 ms); run it next to a 2-thread measurement and quote both. It
 * needs no SCHED_FIFO (two spinning FIFO threads on a 2-CPU machine starve the rest).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_REPEAT = 1001 };

static _Alignas(64) atomic_long flag;

typedef struct pong_arg {
  int cpu;
  long trips;
} pong_arg;

static int pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *pong(void *p) {
  const pong_arg *a = p;
  if (pin(a->cpu) != 0) {
    atomic_store_explicit(&flag, -1, memory_order_release); /* tells the other side */
    return p;
  }
  for (long i = 0; i < a->trips; i++) {
    while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * i + 1) {
    }
    atomic_store_explicit(&flag, 2 * i + 2, memory_order_release);
  }
  return NULL;
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* One sample: ns per round trip between cpu a (this thread) and cpu b; < 0 on error. */
static double sample(int a, int b, long trips) {
  atomic_store(&flag, 0);
  pong_arg arg = {b, trips};
  pthread_t t;
  if (pin(a) != 0 || pthread_create(&t, NULL, pong, &arg) != 0) return -1.0;
  double t0 = now_ns();
  bool failed = false;
  for (long i = 0; i < trips && !failed; i++) {
    long want = 2 * i + 2, got;
    /* a failed pong stores -1; never overwrite it */
    long expect = 2 * i;
    if (!atomic_compare_exchange_strong_explicit(&flag, &expect, 2 * i + 1, memory_order_acq_rel,
                                                 memory_order_acquire)) {
      failed = true;
      break;
    }
    while ((got = atomic_load_explicit(&flag, memory_order_acquire)) != want && got >= 0) {
    }
    failed = got < 0;
  }
  double t1 = now_ns();
  void *ret = NULL;
  pthread_join(t, &ret);
  return ret || failed ? -1.0 : (t1 - t0) / (double)trips;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

int main(int argc, char **argv) {
  int repeat = 7;
  long trips = 100000;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--trips") == 0 && i + 1 < argc) {
      trips = atol(argv[++i]);
    } else {
      fprintf(stderr, "usage: core_to_core [--repeat N] [--trips T]\n");
      return 2;
    }
  }
  if (repeat < 1 || repeat > MAX_REPEAT || trips < 1) {
    fprintf(stderr, "core_to_core: --repeat must be 1..%d and --trips >= 1\n", MAX_REPEAT);
    return 2;
  }
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof mask, &mask) != 0 || CPU_COUNT(&mask) < 2) {
    fprintf(stderr, "core_to_core: needs at least 2 CPUs in this process's affinity mask\n");
    return 1;
  }
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &mask)) continue;
    if (first < 0) {
      first = c;
      continue;
    }
    double s[MAX_REPEAT];
    for (int r = 0; r < repeat; r++) {
      s[r] = sample(first, c, trips);
      if (s[r] < 0) {
        fprintf(stderr, "core_to_core: cannot pin threads to CPUs %d and %d\n", first, c);
        return 1;
      }
    }
    qsort(s, (size_t)repeat, sizeof s[0], cmp_double);
    printf("cpu %d <-> cpu %d: round trip %.1f ns (median of %d x %ld; min %.1f, max %.1f)\n", first, c,
           s[repeat / 2], repeat, trips, s[0], s[repeat - 1]);
  }
  return 0;
}
