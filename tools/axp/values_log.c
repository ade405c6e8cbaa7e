/* tools/axp/values_log.c: see values_log.h. */
#include <inttypes.h>

#include "tools/axp/values_log.h"

FILE *values_log_open(outfile *o, const char *path, char *err, size_t errlen)
{
    FILE *f = outfile_open_stream(o, path, 0666, err, errlen);
    if (f)
        fprintf(f, "# run index cpu pid tid pc result ea latency level target taken\n");
    return f;
}

static void hex_or_dash(FILE *f, bool has, uint64_t v)
{
    if (has)
        fprintf(f, " 0x%" PRIx64, v);
    else
        fputs(" -", f);
}

void values_log_put(void *ctx, const axp_value *v)
{
    FILE *f = ctx;
    fprintf(f, "%" PRIu64 " %u %d %d %d 0x%" PRIx64, v->run, v->index, v->cpu, v->pid, v->tid, v->pc);
    hex_or_dash(f, v->has & AXP_V_RESULT, v->result);
    hex_or_dash(f, v->has & AXP_V_EA, v->ea);
    if (v->has & AXP_V_LATENCY)
        fprintf(f, " %u %c", v->latency, "dsbm"[v->level & 3]);
    else
        fputs(" - -", f);
    hex_or_dash(f, v->has & AXP_V_TARGET, v->target);
    if (v->has & AXP_V_BRANCH)
        fprintf(f, " %d\n", v->taken ? 1 : 0);
    else
        fputs(" -\n", f);
}
