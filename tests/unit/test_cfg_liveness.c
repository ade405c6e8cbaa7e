/*
 * cfg/liveness.c on whole programs: every register an instruction reads is
 * live before it, the calling convention frees temporaries at a RET
 * through ra, and glibc's division routines (called through t9, keeping
 * the caller's temporaries) free nothing.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg/cfg.h"
#include "cfg/liveness.h"

static image *open_program(const char *name)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char path[512];
    snprintf(path, sizeof path, "%s/programs/%s", build, name);
    image_error err;
    image *img = image_open(path, &err);
    if (!img) {
        if (err.code == IMG_EIO)
            cr_skip_test("%s missing: run `make programs`", path);
        cr_assert_fail("%s", err.msg);
    }
    return img;
}

#define TEMPS 0x3c001feull       /* t0-t7 (r1-r8), t8-t11 (r22-r25) */

Test(cfg_liveness, uses_are_live_and_returns_free_temporaries)
{
    image *img = open_program("alu-static");
    char err[256];
    cfg_program *p = cfg_build(img, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    size_t procs = 0, rets = 0, divs = 0;
    for (size_t i = 0; i < p->nprocs; i++) {
        const cfg_proc *f = &p->procs[i];
        cfg_live lv;
        if (!cfg_live_build(p, f, &lv, err, sizeof err)) {
            cr_assert(f->flags & CFG_PF_MISSING, "%s", err);
            continue;
        }
        procs++;
        bool millicode = !strncmp(f->name, "__divq", 6) || !strncmp(f->name, "__remq", 6);
        for (uint32_t b = 0; b < f->nblocks; b++)
            for (uint64_t a = f->blocks[b].start; a < f->blocks[b].end; a += 4) {
                uint32_t w = 0;
                alpha_insn in;
                alpha_regset u, d, live = cfg_live_before(p, f, &lv, b, a);
                cfg_word(p, a, &w);
                alpha_decode(w, &in);
                cfg_live_effect(&in, &u, &d);
                cr_assert_eq(u & ~live, 0, "%s 0x%llx reads a register not live", f->name,
                             (unsigned long long)a);
                if (alpha_flow_of(&in) != FLOW_RETURN)
                    continue;
                if (in.rb == REG_RA) {
                    rets++;
                    cr_assert_eq(live & TEMPS, 0, "%s: temporaries live at the RET 0x%llx",
                                 f->name, (unsigned long long)a);
                } else if (millicode) {
                    divs++;
                    cr_assert_eq(live, CFG_LIVE_ALL, "%s 0x%llx", f->name, (unsigned long long)a);
                }
            }
        cfg_live_free(&lv);
    }
    cr_assert_gt(procs, 100);
    cr_assert_gt(rets, 100);
    cr_assert_gt(divs, 0, "no RET of a division routine seen");
    cfg_free(p);
    image_close(img);
}
