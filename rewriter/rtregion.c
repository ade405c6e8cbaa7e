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

#define SS_SLOTS (1u << 19)      /* shadow stack: activations */
#define PAGE 8192u
#define ARENA (32ull << 20)      /* the calling context tree's nodes */

static void put64(uint8_t *d, size_t off, uint64_t v)
{
    rw_put64(d + off, v);
}

/* The region's contents but the addresses: the bytes the file holds, and
 * its size in memory (the shadow stack between its guard pages, then the
 * counters, are zero pages).  The counters' offsets become final. */
bool rw_instr_build_region(rw_ctx *cx)
{
    rw_instr *in = cx->ins;
    const cfg_program *prog = cx->prog;
    char *txt = NULL, *lines = NULL;
    size_t txtlen = 0, lineslen = 0;
    FILE *t = open_memstream(&txt, &txtlen), *l = open_memstream(&lines, &lineslen);
    if (!t || !l) {
        if (t)
            fclose(t);
        if (l)
            fclose(l);
        return rw_fail(cx, "out of memory");
    }
    char hex[129], *real = realpath(cx->img->path, NULL);
    const char *ipath = real ? real : cx->img->path;
    image_build_id_hex(cx->img, hex, sizeof hex);
    fprintf(t, "cpo-paths 1\nmetrics cycles\nimage %s ", hex[0] ? hex : "-");
    escape_write(t, ipath);
    fputc('\n', t);
    size_t headlen = (size_t)ftell(t);
    fputs("outside 0\nend\n", t);
    size_t envname = (size_t)ftell(t);
    fputs("CPO_PROFILE_OUT=", t);
    size_t msg = (size_t)ftell(t);
    fputs("cpo: a thread the program was not instrumented for (no pthread_create), more "
          "than 256 threads, or no memory for a thread's shadow stack: the profile is not "
          "kept (docs/instrument.md)\n", t);
    size_t errmsg = (size_t)ftell(t);
    fputs("cpo: cannot create the path profile (or its name is over 975 bytes): ", t);
    size_t lostmsg = (size_t)ftell(t);
    fputs("cpo: path runs not counted, their procedure's hashed table full: ", t);
    size_t chead = (size_t)ftell(t);
    fprintf(t, "cpo-cct 1\nmetrics calls cycles\nimage 0 %s ", hex[0] ? hex : "-");
    escape_write(t, ipath);
    fputc('\n', t);
    size_t ctail = (size_t)ftell(t);
    fputs("end\n", t);
    size_t cutmsg = (size_t)ftell(t);
    fputs("cpo: the calling context tree outgrew its arena: calls in new contexts were "
          "charged to their callers (docs/instrument.md)\n", t);
    size_t msgend = (size_t)ftell(t);
    free(real);
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
    size_t strs = pool + 8 * in->npool;
    size_t lns = strs + txtlen;
    size_t fsz = (lns + lineslen + PAGE - 1) & ~(size_t)(PAGE - 1);
    uint8_t *d = ok ? calloc(1, fsz) : NULL;
    if (!d) {
        free(txt);
        free(lines);
        free(lineoff);
        free(nameoff);
        return rw_fail(cx, "out of memory");
    }
    uint64_t slot = rw_slot_size(in);
    uint64_t guard1 = fsz, stack = guard1 + PAGE, guard2 = stack + slot * SS_SLOTS;
    uint64_t counters = guard2 + PAGE;
    uint64_t arena = (counters + in->counters + 63) & ~(uint64_t)63;
    in->ss_first = stack + slot * RT_SLACK;
    in->arena = in->cct ? arena : 0;
    put64(d, RT_MODE, (in->nopaths ? 0 : RT_M_PATHS) | (in->cct ? RT_M_CCT : 0));
    put64(d, RT_ARENA, arena);
    put64(d, RT_AFREE, arena);
    put64(d, RT_AEND, in->cct ? arena + ARENA : arena);
    put64(d, RT_CHEAD, strs + chead);
    put64(d, RT_CHEADLEN, ctail - chead);
    put64(d, RT_CTAIL, strs + ctail);
    put64(d, RT_CTAILLEN, cutmsg - ctail);
    put64(d, RT_CUTMSG, strs + cutmsg);
    put64(d, RT_CUTLEN, msgend - cutmsg);
    in->guard1 = guard1;
    in->guard2 = guard2;
    put64(d, RT_NPROCS, in->nip);
    put64(d, RT_TTAB, ttab);
    put64(d, RT_TCAP, in->threads);
    put64(d, RT_PROCS, procs);
    put64(d, RT_HEAD, strs);
    put64(d, RT_HEADLEN, headlen);
    put64(d, RT_ENVNAME, strs + envname);
    put64(d, RT_ENVLEN, msg - envname);
    put64(d, RT_MSG, strs + msg);
    put64(d, RT_MSGLEN, errmsg - msg);
    put64(d, RT_ERRMSG, strs + errmsg);
    put64(d, RT_ERRLEN, lostmsg - errmsg);
    put64(d, RT_LOSTMSG, strs + lostmsg);
    put64(d, RT_LOSTLEN, chead - lostmsg);
    put64(d, RT_COUNTERS, counters);
    put64(d, RT_COUNTLEN, in->counters);
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
    for (size_t k = 0; k < in->npool; k++)
        put64(d, pool + 8 * k, in->pool[k]);
    in->pool_off = pool;
    memcpy(d + strs, txt, txtlen);
    memcpy(d + lns, lines, lineslen);
    free(txt);
    free(lines);
    free(lineoff);
    free(nameoff);
    in->data = d;
    in->filesz = fsz;
    in->memsz = in->cct ? arena + ARENA : counters + in->counters;
    return true;
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
