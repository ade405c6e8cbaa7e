/*
 * estimator/stacks_cct.c: the calling context tree of a selection's
 * stacks (seed 004's tree, paths/cct.h, from samples).
 *
 * A stack is a chain of call sites, leaf first; walked from its outermost
 * frame, each frame's procedure is entered from the call instruction of
 * the frame outside it, exactly the (site, procedure) steps axp's exact
 * tree takes at run time, so the two trees line up context by context
 * (cpo cct --against) and fold recursion the same way.  Procedures are
 * those of the CFG (cfg_proc_at), as the exact tree names them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "common/hex.h"
#include "estimator/stacks.h"

typedef struct img_cfg {
    image *img;
    cfg_program *cfg;
    int ci;                     /* the tree's image index */
} img_cfg;

/* The stack images' files and CFGs; what cannot be read names its frames
 * by their own offsets. */
static bool open_images(const est_stacks *s, cct *t, img_cfg *ic)
{
    for (size_t i = 0; i < s->st.nimages; i++) {
        const profdb_stack_image *si = &s->st.img[i];
        image_error ie;
        char err[256], bid[2 * IMAGE_MAX_BUILD_ID + 1] = "";
        ic[i].ci = CCT_NOIMAGE;
        if (!strcmp(si->key, "unknown"))
            continue;
        if (s->file[i] && (ic[i].img = image_open(s->file[i], &ie)) != NULL) {
            ic[i].cfg = cfg_build(ic[i].img, err, sizeof err);
            hex_bytes(ic[i].img->build_id, ic[i].img->build_id_len, bid, sizeof bid);
        }
        if ((ic[i].ci = cct_image_add(t, si->path, bid)) < 0)
            return false;
    }
    return true;
}

static uint32_t step(cct *t, const img_cfg *ic, uint32_t from, uint64_t site, const profdb_frame *f)
{
    const img_cfg *c = &ic[f->image];
    const cfg_proc *p = c->cfg ? cfg_proc_at(c->cfg, f->offset) : NULL;
    return cct_call(t, from, site, c->ci, p ? p->start : f->offset, p ? p->name : "");
}

cct *est_stacks_cct(const est_stacks *s, est_error *err)
{
    static const char *const metric[] = { "samples" };
    cct *t = cct_new(metric, 1);
    img_cfg *ic = calloc(s->st.nimages + 1, sizeof *ic);
    bool ok = t && ic && open_images(s, t, ic);
    for (size_t k = 0; ok && k < s->st.n; k++) {
        const profdb_stack *st = &s->st.s[k];
        uint32_t node = CCT_ROOT;
        if (st->end) {          /* a walk cut short hangs under its reason */
            char why[64];
            snprintf(why, sizeof why, "[truncated:%s]", est_stack_end_name(st->end));
            node = cct_call(t, CCT_ROOT, 0, CCT_NOIMAGE, st->end, why);
        }
        for (uint32_t j = st->n; ok && j-- > 0;) {
            uint64_t site = j + 1 < st->n ? st->f[j + 1].offset : 0;
            node = node == CCT_NONE ? CCT_NONE : step(t, ic, node, site, &st->f[j]);
            ok = node != CCT_NONE;
        }
        if (ok)
            cct_metrics(t, node)[0] += st->count;
    }
    for (size_t i = 0; ic && i < s->st.nimages; i++) {
        cfg_free(ic[i].cfg);
        image_close(ic[i].img);
    }
    free(ic);
    if (!ok) {
        snprintf(err->msg, sizeof err->msg, "out of memory building the calling context tree");
        cct_free(t);
        return NULL;
    }
    return t;
}
