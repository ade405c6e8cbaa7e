/*
 * report/html.c: the report as one static HTML page with inline SVG
 * charts: no script, no style sheet or font from elsewhere, so it reads
 * the same from a file on a machine without a network.
 */
#include <inttypes.h>
#include <string.h>

#include "report/report.h"

static const char *const colour[2] = { "#8c8c8c", "#2b6cb0" };   /* before, after */
static const char *const cause_colour[RPT_NCAUSES] = {
    [ASR_FETCH_BLOCK] = "#f6ad55", [ASR_SLOTTING] = "#ecc94b", [ASR_LOAD_STORE] = "#9ae6b4",
    [ASR_DEPENDENCY] = "#4fd1c5", [ASR_MULTIPLIER] = "#b794f4", [ASR_DIVIDER] = "#f687b3",
    [RPT_DYNAMIC] = "#e53e3e",
};

static void esc(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void head(FILE *f)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<title>cpo report</title>\n<style>\n"
          "body{font-family:sans-serif;margin:2em;max-width:70em;color:#222}\n"
          "table{border-collapse:collapse;font-size:90%}\n"
          "td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}\n"
          "td:first-child,th:first-child{text-align:left}\n"
          "svg text{font-size:11px;font-family:sans-serif}\n"
          ".b{color:#666}.a{color:#2b6cb0}\n</style></head><body>\n", f);
}

static void summary(const rpt *r, FILE *f)
{
    fputs("<h1>cpo report</h1>\n<table>\n<tr><th></th><th>image</th><th>build-id</th>"
          "<th>cycle samples</th><th>runs</th><th>cycles per run</th></tr>\n", f);
    for (int k = 0; k < 2; k++) {
        const rpt_side *s = &r->side[k];
        fprintf(f, "<tr><td>%s</td><td>", k ? "after" : "before");
        esc(f, s->path);
        fprintf(f, "</td><td>%.16s</td><td id=\"samples-%s\">%.0f</td><td>%" PRIu64
                "</td><td id=\"cpr-%s\">%.0f</td></tr>\n", s->build_id, k ? "after" : "before",
                s->samples, s->exits[0] + s->exits[1] + s->exits[2], k ? "after" : "before",
                s->cycles_per_run);
    }
    fputs("</table>\n", f);
    const rpt_side *b = &r->side[0], *a = &r->side[1];
    if (b->cycles_per_run > 0 && a->cycles_per_run > 0) {
        double ch = 100 * (a->cycles_per_run / b->cycles_per_run - 1), m = b->cycles_per_run;
        if (a->cycles_per_run > m)
            m = a->cycles_per_run;
        fprintf(f, "<p id=\"change\">Cycles per run: %.0f &rarr; %.0f (%+.1f%%)</p>\n",
                b->cycles_per_run, a->cycles_per_run, ch);
        fputs("<svg width=\"520\" height=\"70\" role=\"img\" aria-label=\"cycles per run\">\n", f);
        for (int k = 0; k < 2; k++) {
            double w = 400 * r->side[k].cycles_per_run / m;
            fprintf(f, "<text x=\"0\" y=\"%d\">%s</text><rect x=\"50\" y=\"%d\" width=\"%.1f\" "
                    "height=\"22\" fill=\"%s\"/><text x=\"%.1f\" y=\"%d\">%.3g</text>\n",
                    20 + 30 * k, k ? "after" : "before", 5 + 30 * k, w, colour[k], 55 + w,
                    20 + 30 * k, r->side[k].cycles_per_run);
        }
        fputs("</svg>\n", f);
    }
    for (int k = 0; k < 2; k++)
        if (!r->side[k].analysed) {
            fprintf(f, "<p>%s was not analysed: ", k ? "after" : "before");
            esc(f, r->side[k].why);
            fputs("</p>\n", f);
        }
}

static void table(const rpt *r, FILE *f, size_t n)
{
    fputs("<h2>Hot procedures</h2>\n<table>\n<tr><th>procedure</th><th>samples before</th>"
          "<th>samples after</th><th>executions before</th><th>executions after</th>"
          "<th>CPI before</th><th>CPI after</th>", f);
    if (r->has_imiss)
        fputs("<th>imiss before</th><th>imiss after</th>", f);
    fputs("</tr>\n", f);
    for (size_t i = 0; i < n; i++) {
        const rpt_proc *p = &r->procs[i];
        fputs("<tr><td>", f);
        esc(f, p->name);
        fprintf(f, "</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td>", p->samples[0],
                p->samples[1], p->execs[0], p->execs[1]);
        for (int k = 0; k < 2; k++)
            if (p->cpi[k] > 0)
                fprintf(f, "<td>%.2f</td>", p->cpi[k]);
            else
                fputs("<td>-</td>", f);
        if (r->has_imiss)
            fprintf(f, "<td>%.0f</td><td>%.0f</td>", p->imiss[0], p->imiss[1]);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* A stacked bar per procedure and side: stall cycles by cause. */
static void stalls(const rpt *r, FILE *f, size_t n)
{
    if (n > 10)
        n = 10;
    double m = 0;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) {
            double t = 0;
            for (unsigned c = 0; c < RPT_NCAUSES; c++)
                t += rpt_cause_name(c) ? r->procs[i].stall[k][c] * rpt_stall_scale(r, k) : 0;
            if (t > m)
                m = t;
        }
    fprintf(f, "<h2>Stall cycles by cause (estimated%s)</h2>\n",
            rpt_stall_scale(r, 0) < 1 ? ", per run" : "");
    fprintf(f, "<svg width=\"760\" height=\"%zu\" role=\"img\" aria-label=\"stalls\">\n", 40 + 44 * n);
    int x = 0;
    for (unsigned c = 0; c < RPT_NCAUSES; c++)
        if (rpt_cause_name(c)) {
            fprintf(f, "<rect x=\"%d\" y=\"2\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                    "<text x=\"%d\" y=\"11\">%s</text>\n", x, cause_colour[c], x + 13, rpt_cause_name(c));
            x += 95;
        }
    for (size_t i = 0; i < n; i++) {
        const rpt_proc *p = &r->procs[i];
        int y = 30 + 44 * (int)i;
        fprintf(f, "<text x=\"0\" y=\"%d\">", y + 14);
        esc(f, p->name);
        fputs("</text>\n", f);
        for (int k = 0; k < 2; k++) {
            double at = 200;
            for (unsigned c = 0; c < RPT_NCAUSES; c++) {
                if (!rpt_cause_name(c) || m <= 0)
                    continue;
                double w = 520 * p->stall[k][c] * rpt_stall_scale(r, k) / m;
                fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"%s\"/>\n",
                        at, y + 18 * k, w, cause_colour[c]);
                at += w;
            }
            fprintf(f, "<text x=\"%.1f\" y=\"%d\">%s</text>\n", at + 4, y + 12 + 18 * k,
                    k ? "after" : "before");
        }
    }
    fputs("</svg>\n", f);
}

/* Where each hot procedure falls in the direct-mapped I-cache. */
static void placement(const rpt *r, FILE *f, size_t n)
{
    if (n > 16)
        n = 16;
    uint32_t sets = r->icache_size / r->icache_line;
    double scale = 512.0 / sets;
    fprintf(f, "<h2>Placement in the %u-byte I-cache</h2>\n<p>Each row is a hot procedure; "
            "the bars are the cache sets its code occupies, before (grey) and after (blue).</p>\n",
            r->icache_size);
    fprintf(f, "<svg width=\"760\" height=\"%zu\" role=\"img\" aria-label=\"placement\">\n", 30 + 26 * n);
    fprintf(f, "<text x=\"200\" y=\"12\">set 0</text><text x=\"680\" y=\"12\">set %u</text>\n",
            sets - 1);
    for (size_t i = 0; i < n; i++) {
        const rpt_proc *p = &r->procs[i];
        int y = 20 + 26 * (int)i;
        fprintf(f, "<text x=\"0\" y=\"%d\">", y + 14);
        esc(f, p->name);
        fputs("</text>\n", f);
        for (int k = 0; k < 2; k++) {
            if (!p->size[k])
                continue;
            uint64_t first = p->start[k] / r->icache_line;
            uint64_t lines = (p->start[k] + p->size[k] + r->icache_line - 1) / r->icache_line - first;
            if (lines > sets)
                lines = sets;
            for (uint64_t l = 0; l < lines;) {
                uint64_t set = (first + l) % sets, run = sets - set;
                if (run > lines - l)
                    run = lines - l;
                fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"10\" fill=\"%s\"/>\n",
                        200 + scale * (double)set, y + 11 * k, scale * (double)run, colour[k]);
                l += run;
            }
        }
    }
    fputs("</svg>\n", f);
}

void rpt_html(const rpt *r, FILE *f, size_t max)
{
    size_t n = rpt_hot(r, max);
    head(f);
    summary(r, f);
    table(r, f, n);
    stalls(r, f, n);
    placement(r, f, n);
    fputs("<p>Samples are those of <code>cpo prof</code> and <code>cpo diff</code>; executions, "
          "CPI and stalls are the estimator's, on each image's own control-flow graph.</p>\n"
          "</body></html>\n", f);
}
