/*
 * cpo cfg IMAGE [--proc NAME|ADDR] [--dot]
 *
 * With --proc, one procedure's CFG: blocks, edges, loops, jump tables and
 * frequency-equivalence classes, as text or Graphviz dot.  Without it, one
 * summary line per procedure and the totals.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "tools/cpo/commands.h"

static const char usage_text[] = "usage: cpo cfg IMAGE [--proc NAME|ADDR] [--dot]\n";

int cmd_cfg(int argc, char **argv)
{
    static const struct option opts[] = {
        { "proc", required_argument, 0, 'p' },
        { "dot", no_argument, 0, 'd' },
        { 0, 0, 0, 0 },
    };
    const char *proc = NULL;
    bool dot = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "p:d", opts, NULL)) != -1) {
        switch (c) {
        case 'p': proc = optarg; break;
        case 'd': dot = true; break;
        default: fputs(usage_text, stderr); return 2;
        }
    }
    if (optind + 1 != argc) {
        fputs(usage_text, stderr);
        return 2;
    }
    image_error ierr;
    image *img = image_open(argv[optind], &ierr);
    if (!img) {
        fprintf(stderr, "cpo: %s\n", ierr.msg);
        return 1;
    }
    char err[256];
    cfg_program *p = cfg_build(img, err, sizeof err);
    if (!p) {
        fprintf(stderr, "cpo: %s\n", err);
        image_close(img);
        return 1;
    }
    int rc = 0;
    if (proc) {
        const cfg_proc *f = cfg_proc_named(p, proc);
        char *end;
        if (!f && !strncmp(proc, "0x", 2)) {
            uint64_t a = strtoull(proc, &end, 16);
            if (!*end)
                f = cfg_proc_at(p, a);
        }
        if (!f) {
            fprintf(stderr, "cpo: %s: no procedure '%s'\n", img->path, proc);
            rc = 1;
        } else if (dot) {
            cfg_print_dot(stdout, p, f);
        } else {
            cfg_print(stdout, p, f);
        }
    } else {
        size_t blocks = 0, edges = 0, missing = 0, tables = 0;
        for (size_t i = 0; i < p->nprocs; i++) {
            const cfg_proc *f = &p->procs[i];
            printf("0x%" PRIx64 " %-32s %6zu blocks %6zu edges %4zu loops %s%s\n",
                   f->start, f->name, f->nblocks, f->nedges, f->nloops,
                   f->flags & CFG_PF_MISSING ? "missing edges: " : "",
                   f->flags & CFG_PF_MISSING ? f->why : "");
            blocks += f->nblocks;
            edges += f->nedges;
            missing += (f->flags & CFG_PF_MISSING) != 0;
            tables += f->ntables;
        }
        printf("%zu procedures, %zu blocks, %zu edges, %zu jump tables, %zu missing edges\n",
               p->nprocs, blocks, edges, tables, missing);
    }
    cfg_free(p);
    image_close(img);
    return rc;
}
