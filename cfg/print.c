/*
 * cfg/print.c: a procedure's CFG as text or as Graphviz dot.
 */
#include <inttypes.h>

#include "cfg/internal.h"
#include "cfg/paths.h"

static const char *const kind_names[] = {
    "fall", "taken", "table", "return", "out", "entry"
};

const char *cfg_edge_kind_name(unsigned kind)
{
    return kind < sizeof kind_names / sizeof kind_names[0] ? kind_names[kind] : "?";
}

static void node_name(char *buf, size_t n, uint32_t b)
{
    if (b == CFG_ENTRY)
        snprintf(buf, n, "ENTRY");
    else if (b == CFG_EXIT)
        snprintf(buf, n, "EXIT");
    else
        snprintf(buf, n, "B%" PRIu32, b);
}

static void block_flags(FILE *f, uint32_t fl)
{
    static const char *const names[] = {
        "entry", "alt-entry", "links", "indirect", "table-jump", "bad-code",
        "unreachable", "calls"
    };
    for (unsigned i = 0; i < 8; i++)
        if (fl & (1u << i))
            fprintf(f, " %s", names[i]);
}

void cfg_print(FILE *f, const cfg_program *p, const cfg_proc *fn)
{
    (void)p;
    fprintf(f, "proc %s 0x%" PRIx64 "-0x%" PRIx64 ": %zu blocks, %zu edges, %zu loops, "
               "%" PRIu32 " classes, %zu calls\n",
            fn->name, fn->start, fn->end, fn->nblocks, fn->nedges, fn->nloops,
            fn->nclasses, fn->ncalls);
    if (fn->flags & CFG_PF_MISSING)
        fprintf(f, "missing edges: %s\n", fn->why);
    if (fn->flags & CFG_PF_IRREDUCIBLE)
        fprintf(f, "irreducible\n");
    cfg_paths P;
    char err[256];
    if (cfg_paths_build(fn, NULL, &P, err, sizeof err)) {
        fprintf(f, "paths: %" PRIu64 " acyclic paths, %zu increments\n", P.npaths, P.nchords);
        cfg_paths_free(&P);
    } else {
        fprintf(f, "paths: %s\n", err);
    }
    for (size_t t = 0; t < fn->ntables; t++)
        fprintf(f, "table 0x%" PRIx64 ": %" PRIu32 " x %" PRIu32 "-byte entries at 0x%" PRIx64 "\n",
                fn->tables[t].jump, fn->tables[t].count, fn->tables[t].entsize, fn->tables[t].table);
    for (size_t l = 0; l < fn->nloops; l++)
        fprintf(f, "loop L%zu: header B%" PRIu32 ", %" PRIu32 " blocks, depth %" PRIu32 "%s\n",
                l, fn->loops[l].header, fn->loops[l].nblocks, fn->loops[l].depth,
                fn->loops[l].parent == CFG_NONE ? "" : ", nested");
    for (size_t b = 0; b < fn->nblocks; b++) {
        const cfg_block *bl = &fn->blocks[b];
        fprintf(f, "B%zu 0x%" PRIx64 "-0x%" PRIx64 " %" PRIu64 " insns class %" PRIu32,
                b, bl->start, bl->end, (bl->end - bl->start) / 4, bl->eqclass);
        if (bl->loop != CFG_NONE)
            fprintf(f, " loop L%" PRIu32 " depth %" PRIu32, bl->loop, bl->loop_depth);
        block_flags(f, bl->flags);
        fputc('\n', f);
        for (uint32_t k = 0; k < bl->nout; k++) {
            const cfg_edge *e = &fn->edges[fn->out_edges[bl->first_out + k]];
            char to[16];
            node_name(to, sizeof to, e->to);
            fprintf(f, "  -> %s %s class %" PRIu32, to, cfg_edge_kind_name(e->kind), e->eqclass);
            if (e->kind == CFG_EDGE_OUT && e->target)
                fprintf(f, " to 0x%" PRIx64, e->target);
            fputc('\n', f);
        }
    }
    for (size_t b = 0; b < fn->nedges; b++)
        if (fn->edges[b].from == CFG_ENTRY)
            fprintf(f, "ENTRY -> B%" PRIu32 " class %" PRIu32 "\n", fn->edges[b].to,
                    fn->edges[b].eqclass);
    for (size_t c = 0; c < fn->ncalls; c++) {
        fprintf(f, "call 0x%" PRIx64 " in B%" PRIu32, fn->calls[c].site, fn->calls[c].block);
        if (fn->calls[c].target)
            fprintf(f, " -> 0x%" PRIx64, fn->calls[c].target);
        fputc('\n', f);
    }
}

void cfg_print_dot(FILE *f, const cfg_program *p, const cfg_proc *fn)
{
    (void)p;
    fprintf(f, "digraph \"%s\" {\n  node [shape=box fontname=monospace];\n", fn->name);
    fprintf(f, "  ENTRY [shape=oval];\n  EXIT [shape=oval];\n");
    for (size_t b = 0; b < fn->nblocks; b++) {
        const cfg_block *bl = &fn->blocks[b];
        fprintf(f, "  B%zu [label=\"B%zu 0x%" PRIx64 "\\n%" PRIu64 " insns, class %" PRIu32 "\"%s];\n",
                b, b, bl->start, (bl->end - bl->start) / 4, bl->eqclass,
                bl->flags & CFG_BF_INDIRECT ? " color=red" : "");
    }
    for (size_t e = 0; e < fn->nedges; e++) {
        const cfg_edge *x = &fn->edges[e];
        char a[16], z[16];
        node_name(a, sizeof a, x->from);
        node_name(z, sizeof z, x->to);
        fprintf(f, "  %s -> %s [label=\"%s c%" PRIu32 "\"%s];\n", a, z,
                cfg_edge_kind_name(x->kind), x->eqclass,
                x->kind == CFG_EDGE_FALL ? " style=dashed" : "");
    }
    fprintf(f, "}\n");
}
