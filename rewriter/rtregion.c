/*
 * rewriter/rtregion.c: the instrumented image's data region and runtime
 * (rewriter/runtime/rt.h): the header, the table of counted procedures and
 * the profile's text the writer prints, the shadow stack between guard
 * pages, the counters; the blob's words, and DT_FINI for dynamic programs.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/escape.h"
#include "rewriter/internal.h"
#include "rewriter/rtblob.h"
#include "rewriter/runtime/rt.h"

#define SS_SLOTS (1u << 19)      /* shadow stack: activations (paths alone) */
#define SS_CSLOTS (1u << 18)     /* with a tree, whose slots are larger */
#define PAGE 8192u
#define ARENA (1ull << 20)       /* the tree's nodes, until the runtime maps more */

static void put64(uint8_t *d, size_t off, uint64_t v)
{
    rw_put64(d + off, v);
}

/* The rest of a profile's image line: the original image's build-id and
 * its path. */
static void image_line(FILE *t, const image *img)
{
    char hex[129], *real = realpath(img->path, NULL);
    image_build_id_hex(img, hex, sizeof hex);
    fprintf(t, "%s ", hex[0] ? hex : "-");
    escape_write(t, real ? real : img->path);
    fputc('\n', t);
    free(real);
}

/* The texts the runtime prints, in this order, each at the header's
 * pair of fields (offset, length); the paths' tail ("outside", "end")
 * has none: it lies between the head and the variable's name. */
enum { TX_HEAD, TX_TAIL, TX_ENV, TX_MSG, TX_ERR, TX_LOST, TX_CHEAD, TX_CTAIL, TX_CUT, TX_N };
static const unsigned tx_field[TX_N][2] = {
    [TX_HEAD] = { RT_HEAD, RT_HEADLEN },     [TX_TAIL] = { 0, 0 },
    [TX_ENV] = { RT_ENVNAME, RT_ENVLEN },    [TX_MSG] = { RT_MSG, RT_MSGLEN },
    [TX_ERR] = { RT_ERRMSG, RT_ERRLEN },     [TX_LOST] = { RT_LOSTMSG, RT_LOSTLEN },
    [TX_CHEAD] = { RT_CHEAD, RT_CHEADLEN },  [TX_CTAIL] = { RT_CTAIL, RT_CTAILLEN },
    [TX_CUT] = { RT_CUTMSG, RT_CUTLEN },
};

/* The texts into t; pos[k] is where text k starts, pos[TX_N] the end. */
static void region_texts(FILE *t, const image *img, size_t pos[TX_N + 1])
{
    for (int k = 0; k < TX_N; k++) {
        pos[k] = (size_t)ftell(t);
        switch (k) {
        case TX_HEAD: fputs("cpo-paths 1\nmetrics cycles\nimage ", t); image_line(t, img); break;
        case TX_TAIL: fputs("outside 0\nend\n", t); break;
        case TX_ENV: fputs("CPO_PROFILE_OUT=", t); break;
        case TX_MSG:
            fputs("cpo: a thread the program was not instrumented for (no pthread_create), more "
                  "than 256 threads, or no memory for a thread's shadow stack: the profile is "
                  "not kept (docs/instrument.md)\n", t);
            break;
        case TX_ERR: fputs("cpo: cannot create the path profile (or its name is over 975 bytes): ", t); break;
        case TX_LOST: fputs("cpo: path runs not counted, their procedure's hashed table full: ", t); break;
        case TX_CHEAD: fputs("cpo-cct 1\nmetrics calls cycles\nimage 0 ", t); image_line(t, img); break;
        case TX_CTAIL: fputs("end\n", t); break;
        case TX_CUT:
            fputs("cpo: no memory for more of the calling context tree: calls in new contexts "
                  "were charged to their callers (docs/instrument.md)\n", t);
            break;
        }
    }
    pos[TX_N] = (size_t)ftell(t);
}

/* The table of counted procedures at procs, their call sites at sites;
 * lns is where their "proc 0x... NAME" lines are (lineoff, nameoff: each
 * line's start and its name's, within them).  The counters' offsets
 * become final (counters). */
static void region_procs(rw_instr *in, const cfg_program *prog, uint8_t *d, size_t procs, size_t sites,
                         size_t lns, const size_t *lineoff, const size_t *nameoff, uint64_t counters)
{
    for (size_t i = 0; i < in->nip; i++) {
        in->ip[i].counts += counters;
        uint8_t *p = d + procs + RT_PSIZE * i;
        put64(p, RT_P_COUNTS, in->ip[i].counts);
        put64(p, RT_P_NPATHS, in->ip[i].npaths);
        put64(p, RT_P_LINE, lns + lineoff[i]);
        put64(p, RT_P_LINELEN, lineoff[i + 1] - lineoff[i]);
        put64(p, RT_P_ADDR, prog->procs[in->ip[i].proc].start);
        put64(p, RT_P_NAME, lns + nameoff[i]);
        put64(p, RT_P_NAMELEN, lineoff[i + 1] - 1 - nameoff[i]);
        put64(p, RT_P_NSITES, in->ip[i].nsites);
        put64(p, RT_P_SITES, sites + 8 * in->ip[i].site0);
        put64(p, RT_P_HCAP, in->ip[i].hcap);
    }
    for (size_t k = 0; k < in->nsites; k++)
        put64(d, sites + 8 * k, in->sites[k]);
}

/* The region's contents but the addresses: the bytes the file holds, and
 * its size in memory (the shadow stack between its guard pages, the
 * counters and the tree's arena are zero pages).  The counters' offsets
 * become final. */
bool rw_instr_build_region(rw_ctx *cx)
{
    rw_instr *in = cx->ins;
    const cfg_program *prog = cx->prog;
    char *txt = NULL, *lines = NULL;
    size_t txtlen = 0, lineslen = 0, pos[TX_N + 1];
    FILE *t = open_memstream(&txt, &txtlen), *l = open_memstream(&lines, &lineslen);
    if (!t || !l) {
        if (t)
            fclose(t);
        if (l)
            fclose(l);
        return rw_fail(cx, "out of memory");
    }
    region_texts(t, cx->img, pos);
    /* Per procedure its "proc 0x... NAME" line, of which the name alone
     * is the tree's. */
    size_t *lineoff = calloc(in->nip + 1, sizeof *lineoff), *nameoff = calloc(in->nip + 1, sizeof *nameoff);
    for (size_t i = 0; i < in->nip && lineoff && nameoff; i++) {
        const cfg_proc *f = &prog->procs[in->ip[i].proc];
        lineoff[i] = (size_t)ftell(l);
        fprintf(l, "proc 0x%llx ", (unsigned long long)f->start);
        nameoff[i] = (size_t)ftell(l);
        escape_write(l, f->name);
        fputc('\n', l);
    }
    if (lineoff)
        lineoff[in->nip] = (size_t)ftell(l);
    bool ok = fclose(t) == 0 && fclose(l) == 0 && lineoff && nameoff;
    size_t ttab = RT_HDRSIZE, procs = ttab + 16 * RT_NTHREADS;
    size_t sites = procs + RT_PSIZE * in->nip, pool = sites + 8 * in->nsites;
    size_t strs = pool + 8 * in->npool, lns = strs + txtlen;
    size_t fsz = (lns + lineslen + PAGE - 1) & ~(size_t)(PAGE - 1);
    uint8_t *d = ok ? calloc(1, fsz) : NULL;
    if (d) {
        uint64_t slot = rw_slot_size(in);
        uint64_t guard1 = fsz, stack = guard1 + PAGE;
        uint64_t guard2 = stack + slot * (in->cct ? SS_CSLOTS : SS_SLOTS);
        uint64_t counters = guard2 + PAGE;
        uint64_t arena = (counters + in->counters + 63) & ~(uint64_t)63;
        in->ss_first = stack + slot * RT_SLACK;
        in->arena = in->cct ? arena : 0;
        in->guard1 = guard1;
        in->guard2 = guard2;
        put64(d, RT_MODE, (in->nopaths ? 0 : RT_M_PATHS) | (in->cct ? RT_M_CCT : 0));
        put64(d, RT_ARENA, arena);
        put64(d, RT_AFREE, arena);
        put64(d, RT_AEND, in->cct ? arena + ARENA - RT_LINK_SIZE : arena);
        for (int k = 0; k < TX_N; k++)
            if (tx_field[k][0]) {
                put64(d, tx_field[k][0], strs + pos[k]);
                put64(d, tx_field[k][1], pos[k + 1] - pos[k]);
            }
        put64(d, RT_NPROCS, in->nip);
        put64(d, RT_TTAB, ttab);
        put64(d, RT_TCAP, in->threads);
        put64(d, RT_PROCS, procs);
        put64(d, RT_COUNTERS, counters);
        put64(d, RT_COUNTLEN, in->counters);
        region_procs(in, prog, d, procs, sites, lns, lineoff, nameoff, counters);
        for (size_t k = 0; k < in->npool; k++)
            put64(d, pool + 8 * k, in->pool[k]);
        in->pool_off = pool;
        memcpy(d + strs, txt, txtlen);
        memcpy(d + lns, lines, lineslen);
        in->data = d;
        in->filesz = fsz;
        in->memsz = in->cct ? arena + ARENA : counters + in->counters;
    }
    free(txt);
    free(lines);
    free(lineoff);
    free(nameoff);
    return d ? true : rw_fail(cx, "out of memory");
}

/* The region goes at addr (page-aligned): its addresses. */
void rw_instr_place(rw_ctx *cx, uint64_t addr)
{
    rw_instr *in = cx->ins;
    in->region = addr;
    put64(in->data, RT_SSP, addr + in->ss_first);
    put64(in->data, RT_GUARD, addr + in->guard1);
    put64(in->data, RT_GUARD2, addr + in->guard2);
}

/* The blob at the start of the new code, its words filled in. */
void rw_instr_blob(rw_ctx *cx, uint8_t *p)
{
    rw_instr *in = cx->ins;
    memcpy(p, rw_rt_blob, rw_rt_size());
    uint64_t entry = rw_map(cx, cx->img->entry);
    rw_put64(p + RT_B_REGION, in->region - in->blob_addr);
    rw_put64(p + RT_B_ENTRY, entry - in->blob_addr);
    rw_put64(p + RT_B_REGABS, in->region);
    if (in->ofini)
        rw_put64(p + RT_B_OFINI, in->ofini - in->blob_addr);
}

/* A dynamic program's DT_FINI goes to the runtime's finaliser (after
 * rw_patch_dynamic gave it the moved address). */
void rw_instr_fini(rw_ctx *cx)
{
    const image_section *d = NULL;
    for (size_t s = 0; s < cx->img->nsections; s++)
        if (cx->img->sections[s].type == SHT_DYNAMIC)
            d = &cx->img->sections[s];
    if (!d || d->offset + d->size > cx->out_size)
        return;
    for (uint64_t o = 0; o + 16 <= d->size; o += 16) {
        uint8_t *p = cx->out + d->offset + o;
        int64_t tag = (int64_t)rw_le64(p);
        if (tag == DT_NULL)
            break;
        if (tag == DT_FINI) {
            cx->ins->ofini = rw_le64(p + 8);
            rw_put64(p + 8, cx->ins->blob_addr + RT_B_FINI);
        }
    }
}

uint64_t rw_instr_blob_size(const rw_ctx *cx)
{
    return cx->ins ? cx->ins->blob_size : 0;
}

uint64_t rw_instr_filesz(const rw_ctx *cx)
{
    return cx->ins->filesz;
}

uint64_t rw_instr_memsz(const rw_ctx *cx)
{
    return cx->ins->memsz;
}

bool rw_instr_write(const rw_ctx *cx, int fd, uint64_t at)
{
    return rw_pwrite_all(fd, cx->ins->data, cx->ins->filesz, cx->ins->region + at);
}
