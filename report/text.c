/*
 * report/text.c: the report as text, the numbers the HTML page draws.
 */
#include <inttypes.h>

#include "report/report.h"

static double change(double before, double after)
{
    return before > 0 ? 100 * (after / before - 1) : 0;
}

static void side_line(FILE *f, const char *what, const rpt_side *s)
{
    uint64_t runs = s->exits[0] + s->exits[1] + s->exits[2];
    fprintf(f, "%-7s %s (build-id %.16s)\n", what, s->path, s->build_id[0] ? s->build_id : "none");
    fprintf(f, "        %.0f cycle samples, mean period %.0f; %" PRIu64 " runs (%" PRIu64
            " failed, %" PRIu64 " killed by a signal)\n",
            s->samples, s->period, runs, s->exits[1], s->exits[2]);
    if (!s->analysed)
        fprintf(f, "        not analysed: %s\n", s->why);
}

void rpt_text(const rpt *r, FILE *f, size_t max)
{
    const rpt_side *b = &r->side[0], *a = &r->side[1];
    fprintf(f, "cpo report: database %s\n", r->db);
    side_line(f, "before", b);
    side_line(f, "after", a);
    if (b->cycles_per_run > 0 && a->cycles_per_run > 0)
        fprintf(f, "cycles per run: %.0f -> %.0f (%+.1f%%)\n", b->cycles_per_run,
                a->cycles_per_run, change(b->cycles_per_run, a->cycles_per_run));
    else
        fprintf(f, "cycles per run: not known (no runs counted on one side)\n");
    if (r->has_imiss)
        fprintf(f, "imiss samples: %.0f -> %.0f\n", b->imiss, a->imiss);
    size_t n = rpt_hot(r, max);
    fprintf(f, "\n%-28s %10s %10s %12s %12s %6s %6s", "procedure", "samples", "samples", "executions",
            "executions", "CPI", "CPI");
    if (r->has_imiss)
        fprintf(f, " %8s %8s", "imiss", "imiss");
    fprintf(f, "\n%-28s %10s %10s %12s %12s %6s %6s%s\n", "", "before", "after", "before", "after",
            "before", "after", r->has_imiss ? "   before    after" : "");
    for (size_t i = 0; i < n; i++) {
        const rpt_proc *p = &r->procs[i];
        fprintf(f, "%-28.28s %10.0f %10.0f %12.0f %12.0f", p->name, p->samples[0], p->samples[1],
                p->execs[0], p->execs[1]);
        for (int k = 0; k < 2; k++)
            if (p->cpi[k] > 0)
                fprintf(f, " %6.2f", p->cpi[k]);
            else
                fputs("      -", f);
        if (r->has_imiss)
            fprintf(f, " %8.0f %8.0f", p->imiss[0], p->imiss[1]);
        fputc('\n', f);
    }
    fprintf(f, "\nstall cycles by cause (estimated%s), before -> after\n",
            rpt_stall_scale(r, 0) < 1 ? ", per run" : "");
    for (size_t i = 0; i < n && i < 10; i++) {
        const rpt_proc *p = &r->procs[i];
        fprintf(f, "%-28.28s", p->name);
        for (unsigned c = 0; c < RPT_NCAUSES; c++)
            if (rpt_cause_name(c) && (p->stall[0][c] > 0 || p->stall[1][c] > 0))
                fprintf(f, " %s %.0f -> %.0f;", rpt_cause_name(c), p->stall[0][c] * rpt_stall_scale(r, 0),
                        p->stall[1][c] * rpt_stall_scale(r, 1));
        fputc('\n', f);
    }
    fprintf(f, "\nI-cache placement (%u-byte cache): first line's set, lines\n", r->icache_size);
    for (size_t i = 0; i < n && i < 16; i++) {
        const rpt_proc *p = &r->procs[i];
        fprintf(f, "%-28.28s", p->name);
        for (int k = 0; k < 2; k++)
            if (p->size[k])
                fprintf(f, "  %s set %4" PRIu64 ", %3" PRIu64 " lines", k ? "after" : "before",
                        p->start[k] % r->icache_size / r->icache_line,
                        (p->start[k] % r->icache_line + p->size[k] + r->icache_line - 1) / r->icache_line);
        fputc('\n', f);
    }
}
