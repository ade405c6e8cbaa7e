/*
 * Unit tests of the exact-counts reader (profdb/exact.h), of exact
 * counts laid onto CFGs (estimator/freq.h), and of DCPI's Figure 4 on
 * samples made from them (estimator/summary.h).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alpha/sched.h"
#include "cfg/cfg.h"
#include "estimator/freq.h"
#include "estimator/freq_internal.h"
#include "estimator/summary.h"
#include "profdb/exact.h"
#include "tests/unit/scratch.h"

static profdb_exact *parse(const char *text, profdb_error *err)
{
    return profdb_exact_parse(text, strlen(text), "t.exact", err);
}

Test(exact, reads_every_record)
{
    const char *t =
        "# axp exact counts\n"
        "image 0 0a1b - \n"
        "image 1 - /lib/libc.so.6.1\n"
        "block 0 0x100 0x110 5\n"
        "entry 0 0x100 1\n"
        "edge 0 0x10c T 0 0x100 4\n"
        "edge 0 0x10c N 1 0x2000 1\n"
        "exit 0 0x104 X 1\n"
        "branch 0 0x10c 0x100 4 1\n"
        "jump 0 0x200 jmp 7 0:0x100=3 1:0x2000=4\n"
        "call 0 0x300 2\n"
        "block - 0x5000 0x5008 9\n";
    profdb_error err = { 0 };
    profdb_exact *ex = parse(t, &err);
    cr_assert(ex, "%s", err.msg);
    cr_assert_eq(ex->nimages, 2);
    const profdb_exact_image *im = &ex->images[0];
    cr_assert_eq(im->build_id_len, 2);
    cr_assert_eq(im->build_id[1], 0x1b);
    cr_assert_str_eq(ex->images[1].path, "/lib/libc.so.6.1");
    cr_assert_eq(im->nruns, 1);
    cr_assert_eq(im->runs[0].count, 5);
    cr_assert_eq(im->nedges, 2);
    cr_assert_eq(im->edges[1].to_image, 1);
    cr_assert_eq(im->edges[1].kind, 'N');
    cr_assert_eq(im->nexits, 1);
    cr_assert_eq(im->nbranches, 1);
    cr_assert_eq(im->branches[0].not_taken, 1);
    cr_assert_eq(im->njumps, 1);
    cr_assert_eq(im->jumps[0].ntargets, 2);
    cr_assert_eq(im->targets[im->jumps[0].first + 1].count, 4);
    cr_assert_eq(im->ncalls, 1);
    cr_assert_eq(profdb_exact_find(ex, (const uint8_t *)"\x0a\x1b", 2), im);
    cr_assert_null(profdb_exact_find(ex, (const uint8_t *)"\x0a\x1c", 2));
    profdb_exact_free(ex);
}

Test(exact, errors_name_the_line)
{
    static const struct { const char *text, *want; } cases[] = {
        { "image 0 - a\nblock 0 0x10 0x8 1\n", "t.exact:2: block: END" },
        { "image 1 - a\n", "t.exact:1: image: numbers" },
        { "image 0 - a\nedge 0 0x10 Q 0 0x20 1\n", "t.exact:2: edge: unknown kind" },
        { "image 0 - a\nblock 3 0x10 0x20 1\n", "t.exact:2: image number" },
        { "image 0 - a\n\nblock 0 0x10 0x20 x\n", "t.exact:3: bad count" },
        { "image 0 - a\nblock 0 10 0x20 1\n", "t.exact:2: bad address" },
        { "image 0 - a\nblock 0 0x10 0x20 99999999999999999999999\n", "t.exact:2: bad count" },
        { "image 0 - a\njump 0 0x10 jmp 1 0=0x20\n", "t.exact:2: jump: a target" },
        { "image 0 zz a\n", "t.exact:1: image: build-id" },
        { "frob 0 1\n", "t.exact:1: unknown record" },
        { "# nothing\n", "t.exact: no records" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        profdb_error err = { 0 };
        profdb_exact *ex = parse(cases[i].text, &err);
        cr_expect_null(ex, "case %zu parsed", i);
        cr_expect(!strncmp(err.msg, cases[i].want, strlen(cases[i].want)), "case %zu: '%s'", i, err.msg);
        profdb_exact_free(ex);
    }
}

Test(exact, missing_file_is_an_error)
{
    profdb_error err = { 0 };
    cr_assert_null(profdb_exact_read("/nonexistent/x.exact", &err));
    cr_assert(strstr(err.msg, "/nonexistent/x.exact"), "%s", err.msg);
}

/* A test program run under axp with --exact: its counts, image and CFG.
 * The counts file is in the test's scratch directory, named after the
 * program: a test may count two. */
typedef struct counted {
    char exact[512];
    profdb_exact *ex;
    image *img;
    cfg_program *cfg;
} counted;

static void count_program(const char *name, counted *c)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char prog[512], cmd[2048], err[256];
    snprintf(prog, sizeof prog, "%s/programs/%s", build, name);
    snprintf(c->exact, sizeof c->exact, "%s/%s.exact", scratch_dir, name);
    snprintf(cmd, sizeof cmd, "%s/bin/axp run --exact %s -- %s >/dev/null 2>&1 </dev/null", build, c->exact, prog);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    profdb_error perr = { 0 };
    c->ex = profdb_exact_read(c->exact, &perr);
    cr_assert(c->ex, "%s", perr.msg);
    image_error ierr;
    c->img = image_open(prog, &ierr);
    cr_assert(c->img);
    c->cfg = cfg_build(c->img, err, sizeof err);
    cr_assert(c->cfg, "%s", err);
}

static void uncount(counted *c)
{
    cfg_free(c->cfg);
    image_close(c->img);
    profdb_exact_free(c->ex);
}

TestSuite(freq, .init = scratch_make, .fini = scratch_remove);
TestSuite(summary, .init = scratch_make, .fini = scratch_remove);

/* Runs a test program under axp with --exact and lays its counts onto its
 * CFG: every block's count must equal what flows in and what flows out. */
static void check_flow(const char *name)
{
    counted cp;
    count_program(name, &cp);
    profdb_exact *ex = cp.ex;
    cfg_program *cfg = cp.cfg;
    char err[256];
    est_freq *f = est_freq_from_exact(cfg, ex, err, sizeof err);
    cr_assert(f, "%s", err);
    size_t checked = 0, hot = 0;
    for (size_t p = 0; p < cfg->nprocs; p++) {
        const cfg_proc *fn = &cfg->procs[p];
        const est_proc_freq *q = &f->procs[p];
        if (fn->flags & (CFG_PF_MISSING | CFG_PF_BADCODE))
            continue;
        for (size_t b = 0; b < fn->nblocks; b++) {
            const cfg_block *bl = &fn->blocks[b];
            double in = 0, out = 0;
            for (uint32_t k = 0; k < bl->nin; k++)
                in += q->edge[fn->in_edges[bl->first_in + k]];
            for (uint32_t k = 0; k < bl->nout; k++)
                out += q->edge[fn->out_edges[bl->first_out + k]];
            cr_expect_eq(in, q->block[b], "%s: %s block 0x%lx: in %.0f, count %.0f", name, fn->name,
                         (unsigned long)bl->start, in, q->block[b]);
            /* A call that never returns (exit) leaves one execution short. */
            cr_expect(out <= q->block[b] + 0.5 && out >= q->block[b] - 1.5,
                      "%s: %s block 0x%lx: out %.0f, count %.0f", name, fn->name,
                      (unsigned long)bl->start, out, q->block[b]);
            checked++;
            hot += q->block[b] > 0;
        }
    }
    cr_expect_gt(hot, 10, "%s: only %zu blocks ran", name, hot);
    cr_log_info("%s: %zu blocks checked, %zu ran", name, checked, hot);
    est_freq_free(f);
    uncount(&cp);
}

Test(freq, exact_counts_conserve_flow) { check_flow("copyloop-static"); }
Test(freq, exact_counts_conserve_flow_with_tables) { check_flow("indjump-static"); }
Test(freq, exact_counts_conserve_flow_recursion) { check_flow("recursion-static"); }
Test(freq, exact_counts_conserve_flow_funcptr) { check_flow("funcptr-static"); }

Test(freq, image_not_in_counts)
{
    profdb_error perr = { 0 };
    profdb_exact *ex = parse("image 0 ffff /x\nblock 0 0x10 0x20 1\n", &perr);
    cr_assert(ex);
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    char prog[512];
    snprintf(prog, sizeof prog, "%s/programs/copyloop-static", build);
    image_error ierr;
    image *img = image_open(prog, &ierr);
    cr_assert(img);
    char err[256];
    cfg_program *cfg = cfg_build(img, err, sizeof err);
    cr_assert(cfg);
    cr_assert_null(est_freq_from_exact(cfg, ex, err, sizeof err));
    cr_assert(strstr(err, "hold no image"), "%s", err);
    cfg_free(cfg);
    image_close(img);
    profdb_exact_free(ex);
}

static bool callsys_at(const uint32_t *words, uint32_t i)
{
    alpha_insn in;
    if (!i)
        return false;
    alpha_decode(words[i - 1], &in);
    return in.op && in.op->flow == FLOW_PAL && in.op->func == PAL_CALLSYS;
}

/* What a test made from exact counts holds at its end. */
static void release(est_freq *f, est_freq *f0, est_freq *truth, est_sched *sc, est_sched *sc2, counted *cp)
{
    est_freq_free(f);
    est_freq_free(f0);
    est_freq_free(truth);
    est_sched_free_all(sc);
    est_sched_free_all(sc2);
    uncount(cp);
}

/* Samples made from the truth: every issue point collects exactly F * M_i
 * samples at a period of 1 (what an ideal machine without dynamic stalls
 * would give).  Then the estimates must be the exact counts, and the flow
 * step must keep them.  With sys, the instruction after a system call
 * also collects the call's cost, syscall_cycles per execution, free of
 * the noise the other points get: the blocks holding one (run 20 times or
 * more) must then be within 5% together, whatever the noise.  Not each
 * alone: a fork returns twice, and a block's count can come from the flow
 * of its neighbours rather than from its own samples. */
static void check_ideal_sys(const char *name, double noise, double stall, bool sys)
{
    counted cp;
    count_program(name, &cp);
    profdb_exact *ex = cp.ex;
    cfg_program *cfg = cp.cfg;
    char err[256];
    est_freq *truth = est_freq_from_exact(cfg, ex, err, sizeof err);
    cr_assert(truth, "%s", err);
    /* First pass: the schedules (M_i) the estimator uses. */
    est_sample_col none = { 0 };
    est_sched *sc = NULL;
    est_freq *f0 = est_freq_from_samples(cfg, &none, 1, NULL, &sc, err, sizeof err);
    cr_assert(f0, "%s", err);
    size_t cap = 0, n = 0;
    for (size_t p = 0; p < cfg->nprocs; p++)
        for (size_t b = 0; b < cfg->procs[p].nblocks; b++)
            cap += sc->procs[p].blocks[b].n;
    uint64_t *addr = calloc(cap + 1, sizeof *addr);
    double *smp = calloc(cap + 1, sizeof *smp);
    cr_assert(addr && smp);
    ev5_params ev5;
    ev5_defaults(&ev5);
    uint8_t quiet[4096];
    size_t nsys = 0, sysp[64], sysb[64];
    for (size_t p = 0; p < cfg->nprocs; p++) {
        const cfg_proc *fn = &cfg->procs[p];
        for (size_t b = 0; b < fn->nblocks; b++) {
            const est_block_sched *bs = &sc->procs[p].blocks[b];
            uint32_t words[4096];
            cr_assert_leq(bs->n, 4096);
            for (uint32_t i = 0; i < bs->n; i++)
                if (!cfg_word(cfg, fn->blocks[b].start + 4 * i, &words[i]))
                    words[i] = 0;
            est_quiet(words, bs->n, fn->blocks[b].start, ev5.icache.line, bs->slots, quiet);
            for (uint32_t i = 0; i < bs->n; i++) {
                double s = truth->procs[p].block[b] * bs->slots[i].m;
                /* Deterministic disagreement between issue points. */
                s *= 1 + noise * sin((double)(fn->blocks[b].start + 4 * i) * 0.37);
                /* A machine where whatever can stall does. */
                if (!quiet[i])
                    s *= 1 + stall;
                if (sys && callsys_at(words, i) && truth->procs[p].block[b] >= 20) {
                    s = truth->procs[p].block[b] * (bs->slots[i].m + ev5.syscall_cycles);
                    if (nsys < 64) {
                        sysp[nsys] = p;
                        sysb[nsys++] = b;
                    }
                }
                if (s > 0) {
                    addr[n] = fn->blocks[b].start + 4 * i;
                    smp[n++] = s;
                }
            }
        }
    }
    /* Blocks overlap no other block, so addresses are already ascending
     * within a procedure; procedures are sorted by start. */
    est_sample_col col = { addr, smp, n };
    est_sched *sc2 = NULL;
    est_freq *f = est_freq_from_samples(cfg, &col, 1, NULL, &sc2, err, sizeof err);
    cr_assert(f, "%s", err);
    est_accuracy acc;
    est_accuracy_of(f, sc2, truth, &acc);
    cr_expect_gt(acc.blocks.weight, 0);
    if (stall > 0) {
        /* Classes with quiet points have them to go by (78% of the
         * weight within 5%; 7% when quiet points are not told apart);
         * classes without them are overestimated fourfold. */
        cr_expect_geq(acc.blocks.within[0], 0.7 * acc.blocks.weight,
                      "%s: blocks within 5%% when all but quiet points stall: %.1f%%", name,
                      100 * acc.blocks.within[0] / acc.blocks.weight);
    } else if (noise == 0)
    cr_expect_geq(acc.blocks.within[0], 0.99 * acc.blocks.weight, "%s: blocks within 5%%: %.1f%%", name,
                  100 * acc.blocks.within[0] / acc.blocks.weight);
    if (noise == 0 && stall == 0)
    cr_expect_geq(acc.edges.within[0], 0.97 * acc.edges.weight, "%s: edges within 5%%: %.1f%%", name,
                  100 * acc.edges.within[0] / acc.edges.weight);
    if (sys)
        cr_expect_gt(nsys, 0, "%s: no system call ran", name);
    double off = 0, all = 0;
    for (size_t k = 0; k < nsys; k++) {
        double t = truth->procs[sysp[k]].block[sysb[k]], e = f->procs[sysp[k]].block[sysb[k]];
        off += fabs(e - t);
        all += t;
    }
    cr_expect_leq(off, 0.05 * all, "%s: blocks with a system call %.1f%% off", name, 100 * off / (all ? all : 1));
    /* Whatever the estimates, the flow step leaves every block balanced. */
    for (size_t p = 0; p < cfg->nprocs; p++) {
        const cfg_proc *fn = &cfg->procs[p];
        if (fn->flags & CFG_PF_MISSING)
            continue;
        for (size_t b = 0; b < fn->nblocks; b++) {
            const cfg_block *bl = &fn->blocks[b];
            double in = 0, out = 0, v = f->procs[p].block[b];
            for (uint32_t k = 0; k < bl->nin; k++)
                in += f->procs[p].edge[fn->in_edges[bl->first_in + k]];
            for (uint32_t k = 0; k < bl->nout; k++)
                out += f->procs[p].edge[fn->out_edges[bl->first_out + k]];
            cr_expect(fabs(in - v) <= 1e-6 * (v + 1) && fabs(out - v) <= 1e-6 * (v + 1),
                      "%s: %s block 0x%lx: in %.3f out %.3f count %.3f", name, fn->name,
                      (unsigned long)bl->start, in, out, v);
        }
    }
    free(addr);
    free(smp);
    release(f, f0, truth, sc, sc2, &cp);
}

static void check_ideal(const char *name, double noise, double stall)
{
    check_ideal_sys(name, noise, stall, false);
}

Test(freq, ideal_samples_give_exact_counts) { check_ideal("indjump-static", 0, 0); }
Test(freq, ideal_samples_give_exact_counts_copyloop) { check_ideal("copyloop-static", 0, 0); }
/* Issue points that disagree by up to 40%: the classes' estimates no
 * longer conserve flow, and the flow step must make them. */
Test(freq, disagreeing_samples_still_conserve_flow) { check_ideal("recursion-static", 0.4, 0); }
/* Every issue point that is not quiet stalls three times its M on every
 * execution: quiet points must still give the counts. */
Test(freq, quiet_points_see_through_stalls) { check_ideal("indjump-static", 0, 3); }
/* The other points disagree by up to 30%: the kernel's time at the
 * instruction after each system call still gives its block's count. */
Test(freq, system_calls_measure_their_blocks) { check_ideal_sys("procself-static", 0.3, 0, true); }

/* Carrying a profile over to another build (est_freq_match): onto the
 * same build it is the identity; from the dynamic build of a test program
 * onto its static build, the program's own procedures (same source, other
 * addresses, calls through the PLT instead of direct) get their true
 * counts. */
Test(freq, match_onto_the_same_build_is_the_identity)
{
    counted c;
    count_program("indjump-static", &c);
    char err[256];
    est_freq *f = est_freq_from_exact(c.cfg, c.ex, err, sizeof err);
    cr_assert(f, "%s", err);
    est_match_stats st;
    est_freq *m = est_freq_match(c.cfg, f, &st, err, sizeof err);
    cr_assert(m, "%s", err);
    cr_expect(st.total > 0 && fabs(st.matched - st.total) < 0.5, "matched %.0f of %.0f", st.matched,
              st.total);
    for (size_t p = 0; p < c.cfg->nprocs; p++) {
        const cfg_proc *fn = &c.cfg->procs[p];
        if (fn->flags & CFG_PF_MISSING)
            continue;
        for (size_t b = 0; b < fn->nblocks; b++)
            /* exact counts lose one execution at a call that never
             * returns; the flow step may put it back */
            cr_expect(fabs(m->procs[p].block[b] - f->procs[p].block[b]) < 1.5,
                      "%s block 0x%lx: %.0f, was %.0f", fn->name, (unsigned long)fn->blocks[b].start,
                      m->procs[p].block[b], f->procs[p].block[b]);
    }
    est_freq_free(m);
    est_freq_free(f);
    uncount(&c);
}

Test(freq, match_across_builds)
{
    counted dyn, sta;
    count_program("indjump-dyn", &dyn);
    count_program("indjump-static", &sta);
    char err[256];
    est_freq *fd = est_freq_from_exact(dyn.cfg, dyn.ex, err, sizeof err);
    est_freq *fs = est_freq_from_exact(sta.cfg, sta.ex, err, sizeof err);
    cr_assert(fd && fs, "%s", err);
    est_match_stats st;
    est_freq *m = est_freq_match(sta.cfg, fd, &st, err, sizeof err);
    cr_assert(m, "%s", err);
    const cfg_proc *fn = cfg_proc_named(sta.cfg, "dispatch");
    cr_assert(fn);
    size_t p = (size_t)(fn - sta.cfg->procs), ran = 0;
    for (size_t b = 0; b < fn->nblocks; b++) {
        ran += fs->procs[p].block[b] > 0;
        cr_expect(fabs(m->procs[p].block[b] - fs->procs[p].block[b]) <= 0.01 * fs->procs[p].block[b] + 0.5,
                  "dispatch block 0x%lx: carried %.0f, true %.0f", (unsigned long)fn->blocks[b].start,
                  m->procs[p].block[b], fs->procs[p].block[b]);
    }
    cr_expect_geq(ran, 3);
    cr_log_info("matched %.1f%% of the dynamic build's executed instructions",
                100 * st.matched / st.total);
    est_freq_free(m);
    est_freq_free(fd);
    est_freq_free(fs);
    uncount(&dyn);
    uncount(&sta);
}

/* Figure 4 on samples made from exact counts (F x M_i per issue point, at a
 * period of 1): copyloop's copy tallies to its best case, nothing dynamic.
 * Then its hottest store collects 40 cycles more per execution, as a
 * store behind a missed load does: that much dynamic stall appears, within
 * the range of the store's candidates (write buffer, DTB, D-cache). */
static void summary_of_copy(double extra, est_summary *out, double *F, double *added)
{
    counted cp;
    count_program("copyloop-static", &cp);
    char err[256];
    est_freq *truth = est_freq_from_exact(cp.cfg, cp.ex, err, sizeof err);
    cr_assert(truth, "%s", err);
    est_sample_col none = { 0 };
    est_sched *sc = NULL;
    est_freq *f0 = est_freq_from_samples(cp.cfg, &none, 1, NULL, &sc, err, sizeof err);
    cr_assert(f0, "%s", err);
    cfg_proc *fn = cfg_proc_named(cp.cfg, "copy");
    cr_assert(fn);
    size_t p = (size_t)(fn - cp.cfg->procs), n = 0, store = SIZE_MAX;
    uint64_t addr[256];
    double smp[256];
    *F = 0;
    for (size_t b = 0; b < fn->nblocks; b++) {
        const est_block_sched *bs = &sc->procs[p].blocks[b];
        double c = truth->procs[p].block[b];
        for (uint32_t i = 0; i < bs->n && n < 256; i++) {
            uint32_t w = 0;
            alpha_insn in;
            cfg_word(cp.cfg, fn->blocks[b].start + 4 * i, &w);
            alpha_decode(w, &in);
            if (in.op && (in.op->flags & OPF_STORE) && c > *F) {
                *F = c;
                store = n;
            }
            addr[n] = fn->blocks[b].start + 4 * i;
            smp[n++] = c * bs->slots[i].m;
        }
    }
    cr_assert(store != SIZE_MAX && *F > 1000, "copy's loop did not run");
    smp[store] += extra * *F;
    *added = extra * *F;
    est_sample_col col = { addr, smp, n };
    est_sched *sc2 = NULL;
    est_freq *f = est_freq_from_samples(cp.cfg, &col, 1, NULL, &sc2, err, sizeof err);
    cr_assert(f, "%s", err);
    est_culprits *cu = est_culprits_find(cp.cfg, f, sc2, 1);
    cr_assert(cu);
    est_analysis a = { .img = cp.img, .cfg = cp.cfg, .freq = f, .sched = sc2, .period = 1 };
    est_summary_of(&a, cu, p, out);
    est_culprits_free(cu);
    release(f, f0, truth, sc, sc2, &cp);
}

Test(summary, ideal_samples_tally_to_the_schedule)
{
    est_summary s;
    double F, added;
    summary_of_copy(0, &s, &F, &added);
    double stat = 0;
    for (int r = 0; r < ASR_COUNT; r++)
        stat += s.stat[r];
    cr_expect_gt(s.cycles, 0);
    cr_expect_float_eq(s.execution + stat, s.best, 1e-6 * s.best);
    cr_expect_float_eq(s.best, s.cycles, 0.01 * s.cycles, "best %.0f, cycles %.0f", s.best, s.cycles);
    cr_expect_leq(s.dynamic, 0.01 * s.cycles, "dynamic %.0f of %.0f", s.dynamic, s.cycles);
    cr_expect_geq(s.gain, -0.01 * s.cycles, "gain %.0f of %.0f", s.gain, s.cycles);
    cr_expect_gt(s.stat[ASR_SLOTTING] + s.stat[ASR_LOAD_STORE], 0, "the copy's stores cannot pair");
}

Test(summary, a_stalled_store_is_dynamic_stall_within_its_range)
{
    est_summary s;
    double F, added;
    summary_of_copy(40, &s, &F, &added);
    cr_expect_float_eq(s.dynamic, added, 0.05 * added, "dynamic %.0f, added %.0f", s.dynamic, added);
    cr_expect_float_eq(s.dyn_max[EST_DYN_WRITE_BUFFER], added, 0.05 * added);
    cr_expect_leq(s.dyn_min[EST_DYN_WRITE_BUFFER], s.dyn_max[EST_DYN_WRITE_BUFFER]);
    cr_expect_float_eq(s.unexplained, 0, 1e-9);
    double stat = 0;
    for (int r = 0; r < ASR_COUNT; r++)
        stat += s.stat[r];
    cr_expect_float_eq(s.execution + stat + s.dynamic + s.gain + s.error, s.cycles, 1e-6 * s.cycles);
}
