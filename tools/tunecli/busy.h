/* How busy the rest of the machine was while tunecli measured something: the CPU time
 * every other process (and the hypervisor, as steal time) took during a span, from
 * Linux's /proc/stat and this process's own CPU time (getrusage). Timings taken in the
 * model at 2 threads on a 2-core machine are not protected by a real-time priority from
 * another job: its code evicts the model's data from the caches of the core it shares
 * (measured in session 32: mobilenet_v2's in-situ pass picked a combination 0.96x the
 * default end to end while a build ran at nice 19, 1.07x on the quiet machine). */
#ifndef TESSEL_TUNECLI_BUSY_H
#define TESSEL_TUNECLI_BUSY_H

#include <stdbool.h>

typedef struct tsl_busy_span {
  bool ok;          /* /proc/stat was readable at the start */
  double wall_s;    /* wall clock at the start, seconds */
  double busy_s;    /* all CPUs' busy time at the start (user, nice, system, irq, softirq), seconds */
  double steal_s;   /* all CPUs' steal time at the start, seconds */
  double self_s;    /* this process's CPU time (all threads) at the start, seconds */
} tsl_busy_span;

/* Starts a span (sp->ok false where /proc/stat cannot be read: not Linux). */
void tsl_busy_begin(tsl_busy_span *sp);

/* Ends span sp: *others = the CPUs other processes kept busy on average (CPU seconds /
 * wall seconds), *steal = the CPUs the hypervisor took. Returns false (both 0) when the
 * span could not be measured or lasted under 0.1 s. */
bool tsl_busy_end(const tsl_busy_span *sp, double *others, double *steal);

#endif
