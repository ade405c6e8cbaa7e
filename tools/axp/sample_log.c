/* tools/axp/sample_log.c: see sample_log.h. */
#include <inttypes.h>

#include "tools/axp/sample_log.h"

FILE *sample_log_open(outfile *o, const char *path, char *err, size_t errlen)
{
    FILE *f = outfile_open_stream(o, path, 0666, err, errlen);
    if (f)
        fprintf(f, "# cpu pid pc event\n");
    return f;
}

void sample_log_put(FILE *f, int cpu, int pid, uint64_t pc, unsigned event, const axp_stack *st)
{
    fprintf(f, "%d %d 0x%" PRIx64 " %u", cpu, pid, pc, event);
    if (st) {
        fprintf(f, " %s", st->end < AXP_STK_NEND ? axp_stack_end_names[st->end] : "?");
        for (unsigned i = 1; i < st->n; i++)
            fprintf(f, " 0x%" PRIx64, st->pc[i]);
    }
    fputc('\n', f);
}
