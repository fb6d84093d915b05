/* Other processes' CPU time during a span (busy.h). */
#define _DEFAULT_SOURCE
#include "busy.h"

#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tessel/runtime.h"

/* The "cpu" line of /proc/stat: busy and steal jiffies of all CPUs, in seconds. Guest
 * time is already inside user time (proc(5)). */
static bool proc_stat(double *busy, double *steal) {
  FILE *f = fopen("/proc/stat", "r");
  if (!f) return false;
  unsigned long long v[8] = {0};
  int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                 &v[7]);
  fclose(f);
  long hz = sysconf(_SC_CLK_TCK);
  if (n < 8 || hz <= 0) return false;
  /* user nice system idle iowait irq softirq steal */
  *busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / (double)hz;
  *steal = (double)v[7] / (double)hz;
  return true;
}

static double self_cpu_s(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

void tsl_busy_begin(tsl_busy_span *sp) {
  sp->wall_s = tsl_time_now();
  sp->self_s = self_cpu_s();
  sp->ok = proc_stat(&sp->busy_s, &sp->steal_s);
}

bool tsl_busy_end(const tsl_busy_span *sp, double *others, double *steal) {
  *others = *steal = 0;
  double busy, st, wall = tsl_time_now() - sp->wall_s;
  if (!sp->ok || wall < 0.1 || !proc_stat(&busy, &st)) return false;
  double o = (busy - sp->busy_s) - (self_cpu_s() - sp->self_s);
  *others = o > 0 ? o / wall : 0;
  *steal = (st - sp->steal_s) / wall;
  return true;
}
