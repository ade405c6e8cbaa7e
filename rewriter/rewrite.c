/*
 * rewriter/rewrite.c: from a plan to new code and patched references.
 *
 * The rewriter never edits what it does not understand: every field it
 * changes is found either by decoding an instruction (branch displacements,
 * jump hints) or by a relocation (GP displacements, GP-relative addresses,
 * GOT slots, code pointers in data, jump-table entries).  A procedure whose
 * code or references it cannot account for stays where it is.  Deciding that
 * can depend on the layout (a branch that no longer reaches), so layout,
 * emission and patching run in rounds until no new procedure is pinned.
 */
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/outfile.h"
#include "rewriter/internal.h"

static const char *const reason_names[RW_NREASONS] = {
    [RW_MOVED] = "moved",
    [RW_PIN_PLAN] = "pinned by the plan",
    [RW_PIN_INDIRECT] = "indirect jump with unknown targets",
    [RW_PIN_BADCODE] = "words that are not instructions",
    [RW_PIN_COROUTINE] = "jsr_coroutine",
    [RW_PIN_LSDA] = "exception tables (LSDA) tied to its addresses",
    [RW_PIN_CFI] = "call-frame information we cannot regenerate",
    [RW_PIN_RANGE] = "a branch to or from it would not reach",
    [RW_PIN_GPREL16] = "address taken with a 16-bit GP offset",
    [RW_PIN_RELOC] = "referred to by a relocation we cannot update",
    [RW_PIN_GPDISP] = "GP displacement out of range",
};

const char *rw_reason_name(unsigned r)
{
    return r < RW_NREASONS ? reason_names[r] : "?";
}

bool rw_fail(rw_ctx *cx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cx->err, cx->errlen, fmt, ap);
    va_end(ap);
    return false;
}

void rw_pin(rw_ctx *cx, const cfg_proc *f, rw_reason why, const char *fmt, ...)
{
    rw_proc *p = &cx->procs[f - cx->prog->procs];
    if (p->reason != RW_MOVED)
        return;
    p->reason = (uint8_t)why;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->detail, sizeof p->detail, fmt, ap);
    va_end(ap);
    cx->repin = true;
}

void rw_rigid(rw_ctx *cx, const cfg_proc *f, rw_reason why, const char *fmt, ...)
{
    rw_proc *p = &cx->procs[f - cx->prog->procs];
    if (p->reason != RW_MOVED || p->rigid)
        return;
    p->rigid = (uint8_t)why;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->detail, sizeof p->detail, fmt, ap);
    va_end(ap);
}

static inline uint64_t *map_slot(const rw_ctx *cx, uint64_t a)
{
    return a >= cx->code_lo && a < cx->code_hi && !(a & 3) ? &cx->map[(a - cx->code_lo) / 4] : NULL;
}

bool rw_moved(const rw_ctx *cx, uint64_t old)
{
    uint64_t *s = map_slot(cx, old);
    return s && *s;
}

uint64_t rw_map(const rw_ctx *cx, uint64_t old)
{
    uint64_t *s = map_slot(cx, old);
    return s && *s ? *s : old;
}

uint8_t *rw_out_at(rw_ctx *cx, uint64_t addr, size_t len)
{
    if (addr >= cx->text_addr && addr + len <= cx->text_addr + cx->text_size)
        return cx->text + (addr - cx->text_addr);
    const image_section *s = image_section_at(cx->img, addr);
    if (!s || s->type == SHT_NOBITS || addr + len > s->addr + s->size ||
        s->offset + s->size > cx->out_size)
        return NULL;
    return cx->out + s->offset + (addr - s->addr);
}

const cfg_proc *rw_proc_of(const rw_ctx *cx, uint64_t addr)
{
    return cfg_proc_at(cx->prog, addr);
}

bool rw_is_moved(const rw_ctx *cx, const cfg_proc *f)
{
    return cx->procs[f - cx->prog->procs].reason == RW_MOVED;
}

static void analyse(rw_ctx *cx)
{
    for (size_t i = 0; i < cx->prog->nprocs; i++) {
        const cfg_proc *f = &cx->prog->procs[i];
        cx->procs[i].align = rw_default_align(f->start);
        if (f->flags & CFG_PF_BADCODE)
            rw_pin(cx, f, RW_PIN_BADCODE, "%s", f->why);
        else if (f->flags & CFG_PF_COROUTINE)
            rw_pin(cx, f, RW_PIN_COROUTINE, "%s", f->why);
        else if (f->flags & CFG_PF_MISSING)
            rw_rigid(cx, f, RW_PIN_INDIRECT, "%s", f->why);
    }
    /* Data relocations inside a procedure mean data in its code, which
     * would move with it and whose users we do not know. */
    const cfg_relocs *rs = &cx->prog->relocs;
    for (size_t i = 0; i < rs->n; i++) {
        uint32_t t = rs->r[i].type;
        if (t != R_ALPHA_REFQUAD && t != R_ALPHA_REFLONG && t != R_ALPHA_GPREL32 &&
            t != R_ALPHA_SREL32 && t != R_ALPHA_SREL64)
            continue;
        const cfg_proc *f = rw_proc_of(cx, rs->r[i].where);
        if (f)
            rw_pin(cx, f, RW_PIN_BADCODE, "%s data at 0x%llx", image_reloc_name(t),
                   (unsigned long long)rs->r[i].where);
    }
}

static void ctx_free(rw_ctx *cx)
{
    rw_eh_free(cx);
    free(cx->procs);
    free(cx->items);
    free(cx->inverts);
    free(cx->map);
    free(cx->text);
    free(cx->eh);
    free(cx->ehhdr);
    free(cx->gxt);
    free(cx->out);
    rw_instr_free(cx);
    addrmap_free(&cx->am);
}

/* What makes an image impossible to rewrite, whatever the plan. */
static bool image_rewritable(const image *img, char *err, size_t errlen)
{
    image_error ie;
    if (img->type != ET_EXEC) {
        snprintf(err, errlen, "%s: not an executable (ET_EXEC): shared objects and PIE are not supported",
                 img->path);
        return false;
    }
    if (!image_require_relocs(img, &ie)) {
        snprintf(err, errlen, "%s", ie.msg);
        return false;
    }
    if (image_section_by_name(img, ADDRMAP_SECTION)) {
        snprintf(err, errlen, "%s: already rewritten (it has %s): rewrite the original image",
                 img->path, ADDRMAP_SECTION);
        return false;
    }
    if (!img->has_gp) {
        snprintf(err, errlen, "%s: no GP value found", img->path);
        return false;
    }
    if (image_gp_count(img) > 1) {
        snprintf(err, errlen, "%s: the linker made %zu GOTs (several GP values): not supported",
                 img->path, image_gp_count(img));
        return false;
    }
    return true;
}

bool rw_can_rewrite(const image *img, const char *outpath, char *err, size_t errlen)
{
    if (!image_rewritable(img, err, errlen))
        return false;
    if (outfile_is(outpath, img->path)) {
        snprintf(err, errlen, "%s: output is the input image; write to a new file", outpath);
        return false;
    }
    if (!outfile_check(outpath, err, errlen))
        return false;
    char *dir = strdup(outpath);
    if (!dir) {
        snprintf(err, errlen, "out of memory");
        return false;
    }
    char *slash = strrchr(dir, '/');
    const char *d = slash ? (slash == dir ? "/" : (*slash = 0, dir)) : ".";
    bool ok = access(d, W_OK | X_OK) == 0;
    if (!ok)
        snprintf(err, errlen, "%s: cannot create a file in %s: %s", outpath, d, strerror(errno));
    free(dir);
    return ok;
}

/* Everything that does not depend on the layout: the image can be
 * rewritten at all, the plan fits its CFG, which procedures cannot move
 * freely.  The caller frees cx either way. */
static bool ctx_init(rw_ctx *cx)
{
    const image *img = cx->img;
    if (!image_rewritable(img, cx->err, cx->errlen))
        return false;
    cx->procs = calloc(cx->prog->nprocs ? cx->prog->nprocs : 1, sizeof *cx->procs);
    cx->inverts = malloc((cx->pl->ninverts ? cx->pl->ninverts : 1) * sizeof *cx->inverts);
    cx->code_lo = UINT64_MAX;
    for (size_t i = 0; i < cx->prog->ncode; i++) {
        if (cx->prog->code[i]->addr < cx->code_lo)
            cx->code_lo = cx->prog->code[i]->addr;
        if (cx->prog->code[i]->addr + cx->prog->code[i]->size > cx->code_hi)
            cx->code_hi = cx->prog->code[i]->addr + cx->prog->code[i]->size;
    }
    cx->code_lo &= ~(uint64_t)3;
    cx->code_hi = (cx->code_hi + 3) & ~(uint64_t)3;
    cx->map = calloc((cx->code_hi - cx->code_lo) / 4 + 1, sizeof *cx->map);
    if (!cx->procs || !cx->inverts || !cx->map)
        return rw_fail(cx, "out of memory");
    cx->old_eh = image_section_by_name(img, ".eh_frame");
    cx->old_ehhdr = image_section_by_name(img, ".eh_frame_hdr");
    analyse(cx);
    return rw_check_plan(cx) && rw_eh_analyse(cx);
}

bool rw_plan_check(const image *img, const cfg_program *prog, const plan *pl,
                   char *err, size_t errlen)
{
    rw_stats st;
    rw_options opt = { 0 };
    rw_ctx c = { .img = img, .prog = prog, .pl = pl, .opt = &opt, .st = &st,
                 .err = err, .errlen = errlen };
    bool ok = ctx_init(&c);
    ctx_free(&c);
    return ok;
}

bool rw_rewrite(const image *img, const cfg_program *prog, const plan *pl,
                const rw_options *opt, const char *outpath, rw_stats *st,
                char *err, size_t errlen)
{
    rw_ctx c = { .img = img, .prog = prog, .pl = pl, .opt = opt, .st = st,
                 .err = err, .errlen = errlen };
    rw_ctx *cx = &c;
    memset(st, 0, sizeof *st);
    bool ok = ctx_init(cx) && rw_elf_plan(cx);
    if (ok && opt->instrument) {
        ok = rw_instr_plan(cx);
        if (ok)
            cx->ins->blob_addr = cx->text_addr;
    }
    size_t rounds = 0;
    while (ok) {
        rounds++;
        cx->repin = false;
        free(cx->out);
        cx->out_size = img->file_size;
        cx->out = malloc(cx->out_size ? cx->out_size : 1);
        if (!cx->out) {
            ok = rw_fail(cx, "out of memory");
            break;
        }
        memcpy(cx->out, img->file, img->file_size);
        ok = rw_layout(cx) && rw_emit(cx) && rw_patch_pinned(cx) && rw_patch_relocs(cx);
        if (!ok || !cx->repin)
            break;
        if (rounds > prog->nprocs + 1) {
            ok = rw_fail(cx, "internal error: pinning does not converge");
            break;
        }
    }
    ok = ok && rw_eh_build(cx) && rw_patch_dynamic(cx);
    if (ok && cx->ins)
        rw_instr_fini(cx);
    ok = ok &&
         rw_patch_symbols(cx, (uint16_t)img->nsections) && rw_build_addrmap(cx) &&
         rw_new_build_id(cx);
    if (ok) {
        if (rw_moved(cx, img->entry)) {
            Elf64_Ehdr eh;
            memcpy(&eh, cx->out, sizeof eh);
            eh.e_entry = rw_map(cx, img->entry);
            memcpy(cx->out, &eh, sizeof eh);
        }
        if (cx->ins) {
            Elf64_Ehdr eh;
            memcpy(&eh, cx->out, sizeof eh);
            eh.e_entry = cx->text_addr;     /* the runtime's start-up code */
            memcpy(cx->out, &eh, sizeof eh);
        }
        if (opt->check)
            rw_trap_old_code(cx);
        ok = rw_elf_write(cx, outpath);
    }
    if (ok) {
        st->procs = prog->nprocs;
        st->rounds = rounds;
        for (size_t i = 0; i < prog->nprocs; i++) {
            const rw_proc *p = &cx->procs[i];
            const cfg_proc *f = &prog->procs[i];
            if (p->reason == RW_MOVED) {
                st->moved++;
                if (p->rigid) {
                    st->rigid[p->rigid]++;
                    if (opt->log)
                        fprintf(opt->log, "moved whole: %s 0x%llx: %s (%s)\n", f->name,
                                (unsigned long long)f->start, rw_reason_name(p->rigid), p->detail);
                }
                st->old_text += f->end - f->start;
                st->blocks_moved += f->nblocks;
            } else {
                st->pinned[p->reason]++;
                if (opt->log)
                    fprintf(opt->log, "left in place: %s 0x%llx: %s (%s)\n", f->name,
                            (unsigned long long)f->start, rw_reason_name(p->reason), p->detail);
            }
        }
        for (size_t i = 0; i < cx->nitems; i++) {
            st->branches_added += cx->items[i].addbr;
            st->branches_removed += cx->items[i].drop;
            st->branches_inverted += cx->items[i].invert;
        }
        st->new_text = cx->text_size;
        if (cx->ins)
            rw_instr_stats(cx, st);
        st->seg_addr = cx->seg_addr;
    }
    ctx_free(cx);
    return ok;
}

uint64_t rw_code_offset(const image *img)
{
    /* elfout.c: the program headers, then code */
    return (rw_phnum(img) * sizeof(Elf64_Phdr) + 31) & ~(uint64_t)31;
}
