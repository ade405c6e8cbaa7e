/*
 * Fuzz target for the layout-plan reader: any input is either rejected with
 * a message naming a line, or read into a plan that writes back to text the
 * reader accepts again with the same contents.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optimizer/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    plan a, b;
    char err[256];
    if (!plan_parse((const char *)data, size, "fuzz", &a, err, sizeof err)) {
        if (strncmp(err, "fuzz:", 5))
            abort();        /* every error names the plan and a line */
        plan_free(&a);
        return 0;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f || !plan_write(f, &a))
        abort();
    fclose(f);
    if (!plan_parse(buf, len, "again", &b, err, sizeof err))
        abort();
    if (a.nprocs != b.nprocs || a.ninverts != b.ninverts || a.nhints != b.nhints ||
        a.npins != b.npins || a.cold_align != b.cold_align || a.cold_offset != b.cold_offset || strcmp(a.build_id, b.build_id))
        abort();
    for (size_t i = 0; i < a.nprocs; i++) {
        if (a.procs[i].addr != b.procs[i].addr || a.procs[i].nblocks != b.procs[i].nblocks ||
            a.procs[i].align != b.procs[i].align || a.procs[i].gap != b.procs[i].gap ||
            plan_cold_start(&a.procs[i]) != plan_cold_start(&b.procs[i]))
            abort();
        for (size_t k = 0; k < a.procs[i].nblocks; k++)
            if (a.procs[i].blocks[k].addr != b.procs[i].blocks[k].addr ||
                a.procs[i].blocks[k].align != b.procs[i].blocks[k].align)
                abort();
    }
    free(buf);
    plan_free(&a);
    plan_free(&b);
    return 0;
}
