/* Inline SVG charts of `tunecli report` (report_svg.h). */
#include "report_svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};
enum { NPALETTE = (int)(sizeof palette / sizeof palette[0]) };

int report_series_add(report_series *s, double x, double y) {
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 16;
    double *nx = realloc(s->x, (size_t)cap * sizeof *nx);
    if (!nx) return -1;
    s->x = nx;
    double *ny = realloc(s->y, (size_t)cap * sizeof *ny);
    if (!ny) return -1;
    s->y = ny;
    s->cap = cap;
  }
  s->x[s->n] = x;
  s->y[s->n] = y;
  s->n++;
  return 0;
}

void report_series_clear(report_series *s) {
  free(s->x);
  free(s->y);
  s->x = s->y = NULL;
  s->n = s->cap = 0;
}

void report_html_escape(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
  }
}

/* A "nice" tick step (1, 2 or 5 times a power of ten) giving about `ticks` ticks over
 * [0, max]. */
static double nice_step(double max, int ticks) {
  if (!(max > 0) || !isfinite(max)) return 1;
  double raw = max / ticks, p = pow(10, floor(log10(raw))), m = raw / p;
  return p * (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10);
}

static void svg_open(FILE *f, const char *id, const char *kind, int w, int h, const char *title) {
  fprintf(f, "<svg class=\"chart\" data-chart=\"%s\" data-kind=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
             "role=\"img\" font-family=\"sans-serif\" font-size=\"12\">\n",
          id, kind, w, h, w, h);
  fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\" stroke=\"#cccccc\"/>\n", w, h);
  fputs("<text x=\"10\" y=\"18\" font-weight=\"bold\">", f);
  report_html_escape(f, title);
  fputs("</text>\n", f);
}

void report_svg_curve(FILE *f, const char *id, const char *title, const char *y_label, const report_series *s,
                      int ns, double x_max) {
  enum { PW = 560, PH = 220, ML = 60, MT = 34, LEGEND = 300 };
  int legend_h = 20 * ns + 40;
  int w = ML + PW + 20 + LEGEND, h = MT + PH + 44 > legend_h ? MT + PH + 44 : legend_h;
  double y_max = 0;
  for (int i = 0; i < ns; i++)
    for (int k = 0; k < s[i].n; k++)
      if (isfinite(s[i].y[k]) && s[i].y[k] > y_max) y_max = s[i].y[k];
  double ystep = nice_step(y_max, 5), ytop = ystep * ceil(y_max / ystep);
  if (!(ytop > 0)) ytop = 1;
  if (!(x_max > 0)) x_max = 1;
  double xstep = nice_step(x_max, 8), xtop = xstep * ceil(x_max / xstep);
  svg_open(f, id, "curve", w, h, title);
  /* axes, grid and ticks */
  for (double v = 0; v <= ytop + ystep / 2; v += ystep) {
    double y = MT + PH - v / ytop * PH;
    fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e5e5e5\"/>", ML, y, ML + PW, y);
    fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", ML - 6, y + 4, v);
  }
  for (double v = 0; v <= xtop + xstep / 2; v += xstep) {
    double x = ML + v / xtop * PW;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#999999\"/>", x, MT + PH, x, MT + PH + 5);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", x, MT + PH + 18, v);
  }
  fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#666666\"/>\n", ML, MT, PW, PH);
  fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">trial</text>\n", ML + PW / 2, MT + PH + 36);
  fprintf(f, "<text x=\"14\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 14 %d)\">", MT + PH / 2, MT + PH / 2);
  report_html_escape(f, y_label);
  fputs("</text>\n", f);
  for (int i = 0; i < ns; i++) {
    const char *color = palette[i % NPALETTE];
    fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", color);
    for (int k = 0; k < s[i].n; k++)
      fprintf(f, "%s%.1f,%.1f", k ? " " : "", ML + s[i].x[k] / xtop * PW, MT + PH - s[i].y[k] / ytop * PH);
    fputs("\"/>\n", f);
    for (int k = 0; k < s[i].n; k++)
      fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>", ML + s[i].x[k] / xtop * PW,
              MT + PH - s[i].y[k] / ytop * PH, color);
    int ly = MT + 10 + 20 * i;
    fprintf(f, "\n<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">",
            ML + PW + 20, ly - 4, color, ML + PW + 40, ly + 2);
    report_html_escape(f, s[i].label);
    fputs("</text>\n", f);
  }
  fputs("</svg>\n", f);
}

void report_svg_bars(FILE *f, const char *id, const char *title, const char *unit, const char *const *labels,
                     const double *a, const double *b, int n, const char *label_a, const char *label_b) {
  enum { LW = 260, BW = 420, VALUE = 110, ROW = 26, MT = 52, BAR = 10 };
  int w = LW + BW + VALUE, h = MT + ROW * n + 12;
  double max = 0;
  for (int i = 0; i < n; i++) {
    if (isfinite(a[i]) && a[i] > max) max = a[i];
    if (isfinite(b[i]) && b[i] > max) max = b[i];
  }
  if (!(max > 0)) max = 1;
  svg_open(f, id, "bars", w, h, title);
  const char *color[2] = {"#9a9a9a", "#1f77b4"};
  const char *name[2] = {label_a, label_b};
  for (int k = 0; k < 2; k++) {
    fprintf(f, "<rect x=\"%d\" y=\"28\" width=\"14\" height=\"%d\" fill=\"%s\"/><text x=\"%d\" y=\"38\">", 10 + 200 * k,
            BAR, color[k], 30 + 200 * k);
    report_html_escape(f, name[k]);
    fputs("</text>\n", f);
  }
  for (int i = 0; i < n; i++) {
    int y = MT + ROW * i;
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", LW - 8, y + BAR + 4);
    /* long node names keep their tail (the distinctive part) */
    size_t len = strlen(labels[i]);
    report_html_escape(f, len > 40 ? labels[i] + len - 40 : labels[i]);
    fputs("</text>\n", f);
    const double v[2] = {a[i], b[i]};
    for (int k = 0; k < 2; k++) {
      int by = y + BAR * k;
      if (isfinite(v[k]) && v[k] > 0) {
        double bw = v[k] / max * BW;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", LW, by, bw < 1 ? 1 : bw, BAR - 1,
                color[k]);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\">%.1f %s</text>\n", LW + bw + 4, by + BAR - 1, v[k], unit);
      } else {
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"10\">-</text>\n", LW + 4, by + BAR - 1);
      }
    }
  }
  fputs("</svg>\n", f);
}
