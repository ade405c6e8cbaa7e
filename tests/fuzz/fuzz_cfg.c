/*
 * Fuzz target for the CFG builder on arbitrary images: any bytes either fail
 * to open as an image, or cfg_build either fails with a message or returns
 * procedures whose graphs hold together: procedures and blocks sorted and
 * inside their code, every edge between real blocks (or the entry and exit),
 * the edge lists by block pointing at edges of that block, loops and classes
 * in range; printing every procedure must not fail.
 * Seeds at run time: the test programs (build/programs) and dash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"

/* libbfd 2.40's DWARF reader leaks one small string per opened image. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libbfd\n";
}

static bool end_ok(const cfg_proc *f, uint32_t b)
{
    return b < f->nblocks || b == CFG_ENTRY || b == CFG_EXIT;
}

static void check_proc(const cfg_program *p, const cfg_proc *f, FILE *out)
{
    if (f->start > f->end || !f->name)
        abort();
    for (size_t i = 0; i < f->nblocks; i++) {
        const cfg_block *b = &f->blocks[i];
        if (b->start >= b->end || b->start < f->start || (i && b->start < f->blocks[i - 1].end))
            abort();
        if ((uint64_t)b->first_out + b->nout > f->nedges || (uint64_t)b->first_in + b->nin > f->nedges)
            abort();
        for (uint32_t k = 0; k < b->nout; k++)
            if (f->edges[f->out_edges[b->first_out + k]].from != i)
                abort();
        for (uint32_t k = 0; k < b->nin; k++)
            if (f->edges[f->in_edges[b->first_in + k]].to != i)
                abort();
        if (b->loop != CFG_NONE && b->loop >= f->nloops)
            abort();
        if (cfg_block_at(f, b->start) != i)
            abort();
    }
    for (size_t i = 0; i < f->nedges; i++) {
        const cfg_edge *e = &f->edges[i];
        if (!end_ok(f, e->from) || !end_ok(f, e->to) || e->kind > CFG_EDGE_ENTRY)
            abort();
        if (e->eqclass != CFG_NONE && e->eqclass >= f->nclasses)
            abort();
        cfg_edge_kind_name(e->kind);
    }
    for (size_t i = 0; i < f->nloops; i++)
        if (f->loops[i].header >= f->nblocks ||
            (f->loops[i].parent != CFG_NONE && f->loops[i].parent >= f->nloops))
            abort();
    for (size_t i = 0; i < f->ncalls; i++)
        if (f->calls[i].block >= f->nblocks)
            abort();
    if (cfg_proc_at(p, f->start) == NULL && f->start < f->end)
        abort();
    cfg_print(out, p, f);
    cfg_print_dot(out, p, f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    image_error ierr;
    image *img = image_open_mem(data, size, "fuzz", &ierr);
    if (!img)
        return 0;           /* the image fuzzer checks this side */
    char err[256];
    cfg_program *p = cfg_build(img, err, sizeof err);
    if (!p) {
        if (!err[0])
            abort();
        image_close(img);
        return 0;
    }
    FILE *out = fopen("/dev/null", "w");
    if (!out)
        abort();
    for (size_t i = 0; i < p->nprocs; i++) {
        if (i && p->procs[i].start < p->procs[i - 1].start)
            abort();
        check_proc(p, &p->procs[i], out);
    }
    fclose(out);
    for (size_t i = 0; i < p->ncode; i++) {
        uint32_t w;
        if (!cfg_word(p, p->code[i]->addr, &w) && p->code[i]->size >= 4)
            abort();
        cfg_is_code(p, p->code[i]->addr);
        cfg_past_padding(p, p->code[i]->addr);
    }
    cfg_proc_at(p, 0);
    cfg_proc_named(p, "main");
    cfg_free(p);
    image_close(img);
    return 0;
}
