/* Inline SVG charts for `tunecli report` (tools/tunecli/cmd_report.c): written straight
 * into the HTML page, no script, no external resource (the page works offline and in
 * a headless browser). Sizes are CSS pixels; every text is HTML-escaped. */
#ifndef TESSEL_TOOLS_REPORT_SVG_H
#define TESSEL_TOOLS_REPORT_SVG_H

#include <stdio.h>

/* One line of a curve chart: n points (x[i], y[i]), x increasing. */
typedef struct report_series {
  char label[224];
  int n, cap;
  double *x, *y;
} report_series;

/* Appends a point. Returns 0, or -1 when out of memory (the series is unchanged). */
int report_series_add(report_series *s, double x, double y);
void report_series_clear(report_series *s);

/* Writes s as HTML text: & < > " escaped. */
void report_html_escape(FILE *f, const char *s);

/* A line chart (720 x 300 plus the legend) of ns series over x in [0, x_max] and y from
 * 0 to the largest y: each series a polyline with a dot per point, a color of its own
 * (cycling through 8), and a legend line. `y_label` names the unit of y. `id` goes into
 * the svg's data-chart attribute (for tests and styling). */
void report_svg_curve(FILE *f, const char *id, const char *title, const char *y_label, const report_series *s,
                      int ns, double x_max);

/* A horizontal bar chart of n rows, two bars a row: a[i] (label_a, gray) and b[i]
 * (label_b, blue), with each value written after its bar in `unit` (format "%.1f").
 * Values <= 0 or not finite draw no bar ("-"). */
void report_svg_bars(FILE *f, const char *id, const char *title, const char *unit, const char *const *labels,
                     const double *a, const double *b, int n, const char *label_a, const char *label_b);

#endif
