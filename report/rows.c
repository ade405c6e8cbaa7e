/*
 * report/rows.c: per-procedure or per-image sample rows as JSON (cpo prof
 * --json), the shape programs read.
 */
#include <inttypes.h>

#include "common/json.h"
#include "report/rows.h"

void rpt_rows_json(FILE *f, const est_set *s, const est_row *rows, size_t n, bool per_image)
{
    fprintf(f, "[");
    for (size_t i = 0; i < n; i++) {
        const est_row *r = &rows[i];
        fprintf(f, "%s\n  {", i ? "," : "");
        if (!per_image) {
            fprintf(f, "\"procedure\": ");
            json_string(f, r->name);
            fprintf(f, ", ");
        }
        fprintf(f, "\"image\": ");
        json_string(f, s->images[r->image].path);
        fprintf(f, ", \"samples\": {");
        for (size_t e = 0; e < s->nevents; e++) {
            fprintf(f, "%s", e ? ", " : "");
            json_string(f, s->events[e]);
            fprintf(f, ": %" PRIu64, r->counts[e]);
        }
        fprintf(f, "}}");
    }
    fprintf(f, "%s]\n", n ? "\n" : "");
}
