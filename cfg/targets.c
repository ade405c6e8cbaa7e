/*
 * cfg/targets.c: what each relocated field points at, read back from the
 * field itself.
 *
 * The addend of an emitted relocation against a section symbol is relative
 * to the input section (cfg/relocs.h), so S + A cannot be trusted; the value
 * the linker stored can.  A GPRELLOW half means nothing alone: its GPRELHIGH
 * partner is the ldah with the same symbol and addend that sets the lda's
 * base register, found nearby in the same procedure.
 */
#include <elf.h>

#include "cfg/internal.h"

static uint64_t rd(const image *img, uint64_t addr, size_t len, bool *ok)
{
    const uint8_t *b = image_bytes_at(img, addr, len);
    uint64_t v = 0;
    *ok = b != NULL;
    if (b)
        for (size_t i = len; i-- > 0;)
            v = v << 8 | b[i];
    return v;
}

static bool insn_at(const cfg_program *p, uint64_t addr, alpha_insn *in)
{
    uint32_t w;
    if (!cfg_word(p, addr, &w))
        return false;
    alpha_decode(w, in);
    return in->op != NULL;
}

#define PAIR_WINDOW 0x10000u

/* The GPRELHIGH partner of the GPRELLOW at index i, or SIZE_MAX. */
static size_t high_of(const cfg_program *p, size_t i, const alpha_insn *lo, const cfg_proc *f)
{
    const cfg_rel *r = &p->relocs.r[i];
    for (int dir = -1; dir <= 1; dir += 2) {
        for (size_t k = i; dir < 0 ? k-- > 0 : ++k < p->relocs.n;) {
            const cfg_rel *h = &p->relocs.r[k];
            if ((dir < 0 ? r->where - h->where : h->where - r->where) > PAIR_WINDOW)
                break;
            if (h->type != R_ALPHA_GPRELHIGH || h->sym != r->sym || h->addend != r->addend)
                continue;
            if (f && (h->where < f->start || h->where >= f->end))
                continue;
            alpha_insn hi;
            if (insn_at(p, h->where, &hi) && hi.ra == lo->rb)
                return k;
        }
    }
    return SIZE_MAX;
}

void cfg_resolve_targets(cfg_program *p)
{
    const image *img = p->img;
    for (size_t i = 0; i < p->relocs.n; i++)
        if (p->relocs.r[i].type == R_ALPHA_GPRELHIGH)
            p->relocs.r[i].target = 0;
    for (size_t i = 0; i < p->relocs.n; i++) {
        cfg_rel *r = &p->relocs.r[i];
        bool code = cfg_is_code(p, r->where), ok;
        const cfg_proc *f = code ? cfg_proc_at(p, r->where) : NULL;
        uint64_t gp = f ? f->gp : img->gp, v;
        alpha_insn in;
        switch (r->type) {
        case R_ALPHA_BRADDR: case R_ALPHA_BRSGP:
            if (insn_at(p, r->where, &in) && alpha_is_pcrel_branch(&in))
                r->target = alpha_branch_target(&in, r->where);
            break;
        case R_ALPHA_HINT:
            if (r->secsym && insn_at(p, r->where, &in))
                r->target = alpha_hint_target(&in, r->where);
            break;
        case R_ALPHA_GPREL16:
            if (code && insn_at(p, r->where, &in) && in.op->format == AF_MEM)
                r->target = gp + (uint64_t)(int64_t)(int16_t)in.disp;
            break;
        case R_ALPHA_LITERAL:
            if (code && insn_at(p, r->where, &in) && in.op->format == AF_MEM) {
                v = rd(img, gp + (uint64_t)(int64_t)(int16_t)in.disp, 8, &ok);
                r->target = ok ? v : 0;
            }
            break;
        case R_ALPHA_GPRELLOW: {
            r->target = 0;
            if (!code || !insn_at(p, r->where, &in) || in.op->format != AF_MEM)
                break;
            size_t k = high_of(p, i, &in, f);
            alpha_insn hi;
            if (k == SIZE_MAX || !insn_at(p, p->relocs.r[k].where, &hi))
                break;
            r->target = gp + (uint64_t)((int64_t)(int16_t)hi.disp * 65536 + (int16_t)in.disp);
            p->relocs.r[k].target = r->target;
            break;
        }
        case R_ALPHA_GPRELHIGH:
            break;      /* set by its GPRELLOW partner */
        case R_ALPHA_REFQUAD:
            if (!code) {
                v = rd(img, r->where, 8, &ok);
                if (ok)
                    r->target = v;
            }
            break;
        case R_ALPHA_GPREL32:
            if (!code) {
                v = rd(img, r->where, 4, &ok);
                if (ok)
                    r->target = img->gp + (uint64_t)(int64_t)(int32_t)v;
            }
            break;
        case R_ALPHA_SREL32:
            v = rd(img, r->where, 4, &ok);
            if (ok)
                r->target = r->where + (uint64_t)(int64_t)(int32_t)v;
            break;
        case R_ALPHA_SREL64:
            v = rd(img, r->where, 8, &ok);
            if (ok)
                r->target = r->where + v;
            break;
        default:
            break;
        }
    }
}
