/*
 * cpo calc --image IMAGE --all --json [selection]
 * cpo calc PROC --image IMAGE [selection]
 * cpo calc PROC --summary [--truth FILE] --image IMAGE [selection]
 *   any of them with --original ORIG: IMAGE is a rewritten copy of ORIG,
 *   analysed on its own CFG and shown carried back onto ORIG's
 *
 * DCPI's analysis of an image from its cycle samples: per block the
 * estimated executions with their confidence, per edge the executions, per
 * instruction the samples, executions, CPI, the static stall the
 * scheduler names and the dynamic stall with its possible culprits
 * (docs/estimator.md).  In text, as DCPI's Figure 2, each stall is also
 * drawn as bubbles before the instruction that waited, a line per half
 * cycle per execution labelled with its causes, under the source lines.
 * `--summary` is Figure 4: where the procedure's cycles went, by cause
 * (estimator/summary.h); with axp's --truth of the same run, beside each
 * dynamic cause's range what it really cost, which DCPI could not show.  Where the selection has ProfileMe samples of the
 * image, frequencies are counted from them (estimator/profileme.h), and
 * `--profileme` adds each instruction's ProfileMe view (cpo profileme).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alpha/insn.h"
#include "alpha/sched.h"
#include "common/json.h"
#include "estimator/culprits.h"
#include "estimator/freq.h"
#include "estimator/profileme.h"
#include "estimator/summary.h"
#include "profdb/truth.h"
#include "rewriter/carry.h"
#include "tools/cpo/commands.h"

#define USAGE "usage: cpo calc --image IMAGE --all --json [--original ORIG] [--db DIR] [--epoch E|--all-epochs]\n" \
              "       cpo calc PROC --image IMAGE [--original ORIG] [--db DIR] [--epoch E|--all-epochs]\n" \
              "                [--profileme | --summary [--truth FILE]]\n"

/* The --stats cause a static stall of the scheduler is counted under, or
 * NULL (slotting and fetch-block waits are not stalls there). */
static const char *static_cause(const alpha_sched_slot *sl)
{
    if (!sl->stall)
        return NULL;
    switch (sl->reason) {
    case ASR_DEPENDENCY: return "dependency";
    case ASR_MULTIPLIER: return "multiplier";
    case ASR_DIVIDER: return "divider";
    default: return NULL;
    }
}

/* Bubble labels: the static reasons in lower case as DCPI drew them, the
 * dynamic causes beside them; a bubble with several possible causes
 * carries every letter. */
static const char dyn_letter[EST_DYN_COUNT] = {
    [EST_DYN_ICACHE] = 'i', [EST_DYN_ITB] = 'I', [EST_DYN_DCACHE] = 'd', [EST_DYN_DTB] = 'D',
    [EST_DYN_WRITE_BUFFER] = 'w', [EST_DYN_BRANCH_MISPREDICT] = 'p', [EST_DYN_JUMP_MISPREDICT] = 'j',
    [EST_DYN_TAKEN_BRANCH] = 't', [EST_DYN_SYSCALL] = 'k', [EST_DYN_MULTIPLIER] = 'm', [EST_DYN_DIVIDER] = 'f',
};
#define LEGEND "bubbles, a line per half cycle per execution: s slotting; a, b, c waiting on Ra, Rb, Rc;\n" \
               "m multiplier busy; f divider busy; i I-cache, I ITB, d D-cache, D DTB, w write buffer,\n" \
               "p branch mispredict, j jump mispredict, t taken branch, k system call; ? unexplained\n"
/* A long stall (a miss to memory is over a hundred lines) is cut short:
 * its last line says how many it stands for. */
#define BUBBLES_SHOWN 6

static void bubbles(const char *label, double half_cycles)
{
    long n = lround(half_cycles);
    for (long k = 0; k < n && (k < BUBBLES_SHOWN - 1 || n == BUBBLES_SHOWN); k++)
        printf("%14s%s\n", "", label);
    if (n > BUBBLES_SHOWN)
        printf("%14s%s  ... %ld lines in all\n", "", label, n);
}

/* The static bubbles of an instruction: a slotting hazard costs the half
 * cycle it would have shared with the one before; a stall, its cycles. */
static void static_bubbles(const alpha_sched_slot *sl)
{
    char label[4] = "";
    double half = 2.0 * sl->stall;
    switch (sl->reason) {
    case ASR_SLOTTING:
    case ASR_LOAD_STORE:
        strcpy(label, "s");
        half += 1;
        break;
    case ASR_DEPENDENCY: {
        size_t n = 0;
        if (sl->operand & ASF_RA)
            label[n++] = 'a';
        if (sl->operand & ASF_RB)
            label[n++] = 'b';
        if (sl->operand & ASF_RC)
            label[n++] = 'c';
        label[n] = 0;
        break;
    }
    case ASR_MULTIPLIER: strcpy(label, "m"); break;
    case ASR_DIVIDER: strcpy(label, "f"); break;
    default: return;
    }
    if (label[0])
        bubbles(label, half);
}

static void dynamic_bubbles(const est_culprit *c, double per_exec)
{
    char label[EST_DYN_COUNT + 1];
    size_t n = 0;
    for (int k = 0; k < EST_DYN_COUNT; k++)
        if (c->causes & (1u << k))
            label[n++] = dyn_letter[k];
    if (!n)
        label[n++] = '?';
    label[n] = 0;
    bubbles(label, 2 * per_exec);
}

static double cpi(double samples, double period, double count)
{
    return count > 0 ? samples * period / count : 0;
}

static const est_culprit *culprit_of(const est_culprits *c, size_t p, size_t b, uint32_t i)
{
    return c && c->blocks[p] && b < c->nblocks[p] && c->blocks[p][b] ? &c->blocks[p][b][i] : NULL;
}

static void proc_json(const est_analysis *a, const est_culprits *cu, size_t p, bool *first)
{
    const cfg_proc *f = &a->cfg->procs[p];
    const est_proc_freq *q = &a->freq->procs[p];
    const est_proc_sched *ps = &a->sched->procs[p];
    printf("%s\n    {\"name\": ", *first ? "" : ",");
    *first = false;
    json_string(stdout, f->name ? f->name : "");
    printf(", \"address\": \"0x%" PRIx64 "\", \"samples\": %.0f,\n     \"blocks\": [", f->start, q->samples);
    for (size_t b = 0; b < f->nblocks; b++) {
        const est_block_sched *bs = &ps->blocks[b];
        double s = 0;
        for (uint32_t i = 0; i < bs->n; i++)
            s += bs->samples[i];
        printf("%s\n      {\"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64 "\", \"count\": %.1f, "
               "\"confidence\": \"%s\", \"samples\": %.0f, \"cpi\": %.3f}",
               b ? "," : "", f->blocks[b].start, f->blocks[b].end, q->block[b],
               est_conf_name(q->block_conf[b]), s, bs->n ? cpi(s, a->period, q->block[b] * bs->n) : 0);
    }
    printf("],\n     \"edges\": [");
    bool firste = true;
    for (size_t e = 0; e < f->nedges; e++) {
        const cfg_edge *ed = &f->edges[e];
        if (ed->from >= f->nblocks || ed->to >= f->nblocks)
            continue;
        printf("%s\n      {\"from\": \"0x%" PRIx64 "\", \"to\": \"0x%" PRIx64 "\", \"count\": %.1f}",
               firste ? "" : ",", f->blocks[ed->from].start, f->blocks[ed->to].start, q->edge[e]);
        firste = false;
    }
    printf("],\n     \"instructions\": [");
    bool firsti = true;
    for (size_t b = 0; b < f->nblocks; b++) {
        const est_block_sched *bs = &ps->blocks[b];
        for (uint32_t i = 0; i < bs->n; i++) {
            const char *cause = static_cause(&bs->slots[i]);
            const est_culprit *c = culprit_of(cu, p, b, i);
            printf("%s\n      {\"address\": \"0x%" PRIx64 "\", \"samples\": %.0f, \"count\": %.1f, "
                   "\"cpi\": %.3f, \"dynamic_stall\": %.0f, \"culprits\": [%s%s%s",
                   firsti ? "" : ",", f->blocks[b].start + 4 * i, bs->samples[i], q->block[b],
                   cpi(bs->samples[i], a->period, q->block[b]), c ? c->stall : 0, cause ? "\"" : "",
                   cause ? cause : "", cause ? "\"" : "");
            bool any = cause != NULL;
            for (int k = 0; c && c->stall > 0 && k < EST_DYN_COUNT; k++)
                if (c->causes & (1u << k)) {
                    printf("%s\"%s\"", any ? ", " : "", est_dyn_names[k]);
                    any = true;
                }
            printf("]}");
            firsti = false;
        }
    }
    printf("]}");
}

static void all_json(const est_analysis *a, const est_culprits *cu, const char *path)
{
    char hex[129] = "";
    if (a->img->build_id_len)
        image_build_id_hex(a->img, hex, sizeof hex);
    printf("{\"image\": ");
    json_string(stdout, path);
    printf(", \"build_id\": \"%s\", \"period\": {\"cycles\": %.1f}, \"samples\": {\"cycles\": %.0f, "
           "\"profileme\": %.0f},\n \"procedures\": [", hex, a->period, a->samples, a->freq->pm_samples);
    bool first = true;
    for (size_t p = 0; p < a->cfg->nprocs; p++)
        proc_json(a, cu, p, &first);
    printf("]}\n");
}

/* One procedure in text: per block the estimate and CPI, per instruction
 * its source line, bubbles, samples, M_i, CPI and stalls. */
static int proc_text(const est_analysis *a, const est_culprits *cu, const char *name, const profdb_pm *pm,
                     size_t npm)
{
    cfg_proc *f = cfg_proc_named(a->cfg, name);
    if (!f) {
        fprintf(stderr, "cpo: calc: %s has no procedure named '%s'\n", a->img->path, name);
        return 1;
    }
    size_t p = (size_t)(f - a->cfg->procs);
    const est_proc_freq *q = &a->freq->procs[p];
    const est_proc_sched *ps = &a->sched->procs[p];
    printf("%s (0x%" PRIx64 "): %.0f cycle samples, mean period %.1f cycles\n", f->name, f->start,
           q->samples, a->period);
    if (a->freq->pm_samples > 0)
        printf("executions counted from %.0f ProfileMe samples of the image\n", a->freq->pm_samples);
    printf(LEGEND);
    if (pm) {
        printf("ProfileMe columns after each instruction:");
        cpo_pm_header();
        printf("\n");
    }
    cpo_source src = { 0 };
    bool any_line = false;
    for (size_t b = 0; b < f->nblocks; b++) {
        const est_block_sched *bs = &ps->blocks[b];
        double s = 0, m = 0;
        for (uint32_t i = 0; i < bs->n; i++) {
            s += bs->samples[i];
            m += bs->slots[i].m;
        }
        if (s == 0 && q->block[b] < 0.5)
            continue;
        printf("\nblock 0x%" PRIx64 ": executions %.0f (%s confidence), best-case CPI %.2f, actual CPI %.2f\n",
               f->blocks[b].start, q->block[b], est_conf_name(q->block_conf[b]), bs->n ? m / bs->n : 0,
               bs->n ? cpi(s, a->period, q->block[b] * bs->n) : 0);
        for (uint32_t i = 0; i < bs->n; i++) {
            uint64_t pc = f->blocks[b].start + 4 * i;
            uint32_t w = 0;
            char text[96] = "?";
            alpha_insn in;
            if (cfg_word(a->cfg, pc, &w)) {
                alpha_decode(w, &in);
                alpha_disasm(&in, pc, text, sizeof text, NULL, NULL);
            }
            const alpha_sched_slot *sl = &bs->slots[i];
            const est_culprit *c = culprit_of(cu, p, b, i);
            any_line |= cpo_source_heading(&src, a->img, pc);
            if (q->block[b] > 0) {
                static_bubbles(sl);
                if (c && c->stall > 0)
                    dynamic_bubbles(c, c->stall / q->block[b]);
            }
            printf("  %" PRIx64 "  %-32s %8.0f  M=%u  CPI %6.2f", pc, text, bs->samples[i], sl->m,
                   cpi(bs->samples[i], a->period, q->block[b]));
            if (pm)
                cpo_pm_columns(est_pm_at(pm, npm, pc));
            if (sl->stall)
                printf("  static %s stall %u", alpha_sched_reason_names[sl->reason], sl->stall);
            if (sl->stall && sl->culprit >= 0)
                printf(" on %" PRIx64, f->blocks[b].start + 4 * (uint64_t)sl->culprit);
            if (c && c->stall > 0 && q->block[b] > 0) {
                char causes[160];
                printf("  dynamic stall %.1f: %s", c->stall / q->block[b],
                       c->causes ? est_causes_text(c->causes, causes, sizeof causes) : "unexplained");
                if (c->load)
                    printf(" on %" PRIx64, c->load);
            }
            putchar('\n');
        }
    }
    if (!any_line)
        printf("\n(no source lines: %s has no line information for %s)\n", a->img->path, f->name);
    cpo_source_free(&src);
    return 0;
}

static void summary_row(const char *what, double part, double total)
{
    printf("  %-22s %7.1f%%\n", what, total > 0 ? 100 * part / total : 0);
}

/* DCPI's Figure 4 for one procedure: the dynamic causes as ranges, the
 * static stalls by reason, execution, and what the analysis leaves over. */
/* The truth's stall cycles of each dynamic cause over [lo, hi), and its
 * head-of-queue cycles there. */
static double truth_stalls(const profdb_truth *t, uint64_t lo, uint64_t hi, double by[EST_DYN_COUNT])
{
    double head = 0;
    int col[EST_DYN_COUNT];
    for (int k = 0; k < EST_DYN_COUNT; k++) {
        col[k] = profdb_truth_cause(t, est_dyn_names[k]);
        by[k] = 0;
    }
    for (size_t r = 0; r < t->n; r++) {
        if (t->pc[r] < lo || t->pc[r] >= hi)
            continue;
        head += t->head[r];
        for (int k = 0; k < EST_DYN_COUNT; k++)
            if (col[k] >= 0)
                by[k] += t->stall[r * t->ncauses + (size_t)col[k]];
    }
    return head;
}

static int proc_summary(const est_analysis *a, const est_culprits *cu, const char *name, const profdb_truth *t)
{
    cfg_proc *f = cfg_proc_named(a->cfg, name);
    if (!f) {
        fprintf(stderr, "cpo: calc: %s has no procedure named '%s'\n", a->img->path, name);
        return 1;
    }
    est_summary s;
    est_summary_of(a, cu, (size_t)(f - a->cfg->procs), &s);
    printf("%s (0x%" PRIx64 "): %.0f cycle samples (%.1f%% of the image's) x %.1f = %.0f cycles\n", f->name,
           f->start, s.samples, a->samples > 0 ? 100 * s.samples / a->samples : 0, a->period, s.cycles);
    if (s.samples <= 0) {
        printf("no cycle samples in %s: nothing to tally\n", f->name);
        return 0;
    }
    double n = s.instructions;
    printf("best case %.0f cycles / %.0f instructions = %.2f CPI\n", s.best, n, n > 0 ? s.best / n : 0);
    printf("actual    %.0f cycles / %.0f instructions = %.2f CPI\n\n", s.cycles, n, n > 0 ? s.cycles / n : 0);
    double T = s.cycles, by[EST_DYN_COUNT], head = t ? truth_stalls(t, f->start, f->end, by) : 0;
    printf("  %-22s %8s %8s%s\n", "dynamic stall", "at least", "at most", t ? "     true" : "");
    for (int k = 0; k < EST_DYN_COUNT; k++) {
        printf("  %-22s %7.1f%% %7.1f%%", est_dyn_names[k], 100 * s.dyn_min[k] / T, 100 * s.dyn_max[k] / T);
        if (t)
            printf(" %7.1f%%", head > 0 ? 100 * by[k] / head : 0);
        putchar('\n');
    }
    summary_row("unexplained stall", s.unexplained, T);
    summary_row("unexplained gain", s.gain, T);
    summary_row("subtotal dynamic", s.dynamic + s.gain, T);
    printf("\n  static stall\n");
    double stat = 0;
    for (int r = 0; r < ASR_COUNT; r++)
        stat += s.stat[r];
    summary_row("slotting", s.stat[ASR_SLOTTING] + s.stat[ASR_LOAD_STORE], T);
    summary_row("Ra dependency", s.operand[0], T);
    summary_row("Rb dependency", s.operand[1], T);
    summary_row("Rc dependency", s.operand[2], T);
    summary_row("multiplier busy", s.stat[ASR_MULTIPLIER], T);
    summary_row("divider busy", s.stat[ASR_DIVIDER], T);
    summary_row("subtotal static", stat, T);
    printf("\n");
    summary_row("total stall", s.dynamic + s.gain + stat, T);
    summary_row("execution", s.execution, T);
    summary_row("net sampling error", s.error, T);
    summary_row("total tallied", s.dynamic + s.gain + stat + s.execution + s.error, T);
    if (t)
        printf("\n(true: the share of the %.0f cycles axp's truth has at the head of the queue here;\n"
               "its multiplier and divider stall includes what the schedule predicts, above)\n", head);
    return 0;
}

/* The copy's samples at its own addresses, from its schedules. */
static bool copy_samples(const est_analysis *a, uint64_t **addr, double **smp, size_t *n)
{
    size_t k = 0, cap = 0;
    for (size_t p = 0; p < a->cfg->nprocs && p < a->sched->nprocs; p++)
        for (size_t b = 0; b < a->sched->procs[p].nblocks; b++)
            cap += a->sched->procs[p].blocks[b].n;
    *addr = malloc((cap ? cap : 1) * sizeof **addr);
    *smp = malloc((cap ? cap : 1) * sizeof **smp);
    if (!*addr || !*smp)
        return false;
    for (size_t p = 0; p < a->cfg->nprocs && p < a->sched->nprocs; p++)
        for (size_t b = 0; b < a->sched->procs[p].nblocks; b++) {
            const est_block_sched *bs = &a->sched->procs[p].blocks[b];
            for (uint32_t i = 0; bs->samples && i < bs->n; i++)
                if (bs->samples[i] > 0) {
                    (*addr)[k] = a->cfg->procs[p].blocks[b].start + 4ull * i;
                    (*smp)[k++] = bs->samples[i];
                }
        }
    *n = k;
    return true;
}

/* A rewritten copy's analysis carried back onto its original ORIG
 * (rewriter/carry.h): the copy's estimates through its address map, its
 * samples at the original's addresses.  Event samples stay with the
 * copy.  NULL with msg on failure. */
static est_analysis *carried(const est_analysis *a, const char *orig_path, char *msg, size_t len)
{
    addrmap m = { 0 };
    char err[512];
    if (!addrmap_read(a->img, &m, err, sizeof err)) {
        snprintf(msg, len, "calc: --original: %s is no rewritten image: %s", a->img->path, err);
        return NULL;
    }
    est_analysis *b = calloc(1, sizeof *b);
    image_error ierr;
    uint64_t *addr = NULL;
    double *smp = NULL;
    size_t n = 0;
    est_sample_col col = { 0 };
    rw_est_map fm = { 0 };
    est_addr_map am;
    if (!b) {
        snprintf(msg, len, "out of memory");
    } else if (!(b->img = image_open(orig_path, &ierr))) {
        snprintf(msg, len, "%s", ierr.msg);
    } else if (b->img->build_id_len != m.build_id_len || memcmp(b->img->build_id, m.build_id, m.build_id_len)) {
        snprintf(msg, len, "calc: %s was not rewritten from %s (its address map names another build-id)",
                 a->img->path, orig_path);
    } else if (!(b->cfg = cfg_build(b->img, msg, len))) {
        /* msg says why */
    } else if (!rw_est_map_init(&fm, &m, &am) || !copy_samples(a, &addr, &smp, &n) ||
               !est_samples_to_orig(&am, addr, smp, n, &col)) {
        snprintf(msg, len, "out of memory");
    } else if ((b->freq = est_freq_carry_samples(b->cfg, a->freq, &am, &col, a->period, &b->sched, msg, len))) {
        b->period = a->period;
        b->samples = a->samples;
    }
    rw_est_map_free(&fm);
    free(addr);
    free(smp);
    free((void *)col.addr);
    free((void *)col.samples);
    addrmap_free(&m);
    if (b && !b->freq) {
        est_analysis_free(b);
        return NULL;
    }
    return b;
}

int cmd_calc(int argc, char **argv)
{
    est_selection sel = { 0 };
    est_error err;
    const char *imgpath = NULL, *proc = NULL, *truth_path = NULL, *orig_path = NULL;
    bool all = false, json = false, with_pm = false, summary = false;
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        int k = cpo_selection_arg(&sel, argc, argv, &i, &err);
        if (k < 0) {
            fprintf(stderr, "cpo: calc: %s\n%s", err.msg, USAGE);
            rc = 2;
        } else if (k) {
            continue;
        } else if (!strcmp(argv[i], "--image") && i + 1 < argc) {
            imgpath = argv[++i];
        } else if (!strcmp(argv[i], "--all")) {
            all = true;
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--profileme")) {
            with_pm = true;
        } else if (!strcmp(argv[i], "--summary")) {
            summary = true;
        } else if (!strcmp(argv[i], "--truth") && i + 1 < argc) {
            truth_path = argv[++i];
        } else if (!strcmp(argv[i], "--original") && i + 1 < argc) {
            orig_path = argv[++i];
        } else if (argv[i][0] != '-' && !proc) {
            proc = argv[i];
        } else {
            fprintf(stderr, "cpo: calc: unexpected argument '%s'\n%s", argv[i], USAGE);
            rc = 2;
        }
    }
    if (!rc && !imgpath) {
        fprintf(stderr, "cpo: calc: --image IMAGE is required\n%s", USAGE);
        rc = 2;
    } else if (!rc && all != json) {
        fprintf(stderr, "cpo: calc: --all goes with --json (and --json with --all)\n%s", USAGE);
        rc = 2;
    } else if (!rc && all == !!proc) {
        fprintf(stderr, "cpo: calc: name one procedure, or --all --json\n%s", USAGE);
        rc = 2;
    } else if (!rc && summary && (all || with_pm)) {
        fprintf(stderr, "cpo: calc: --summary goes with one procedure, without --profileme\n%s", USAGE);
        rc = 2;
    } else if (!rc && orig_path && with_pm) {
        fprintf(stderr, "cpo: calc: --original does not go with --profileme\n%s", USAGE);
        rc = 2;
    } else if (!rc && truth_path && !summary) {
        fprintf(stderr, "cpo: calc: --truth goes with --summary\n%s", USAGE);
        rc = 2;
    }
    if ((rc = cpo_selection_finish("calc", &sel, rc)))
        return rc;
    profdb_truth *truth = NULL;
    if (truth_path) {
        profdb_error perr;
        if (!(truth = profdb_truth_read(truth_path, &perr))) {
            fprintf(stderr, "cpo: calc: %s\n", perr.msg);
            cpo_selection_release(&sel);
            return 1;
        }
    }
    char msg[1024];
    est_analysis *a = est_analyse(&sel, imgpath, msg, sizeof msg);
    if (a && orig_path) {
        est_analysis *b = carried(a, orig_path, msg, sizeof msg);
        est_analysis_free(a);
        a = b;
    }
    profdb_pm *pm = NULL;
    size_t npm = 0;
    char key[PROFDB_KEY_MAX];
    if (a && with_pm &&
        !est_pm_load(&sel, profdb_key(a->img->build_id, a->img->build_id_len, a->img->path, key), &pm, &npm, msg,
                     sizeof msg)) {
        est_analysis_free(a);
        a = NULL;
    }
    cpo_selection_release(&sel);
    if (!a) {
        fprintf(stderr, "cpo: %s\n", msg);
        profdb_truth_free(truth);
        return 1;
    }
    est_culprits *cu = est_culprits_of(a);
    if (!cu)
        fprintf(stderr, "cpo: calc: out of memory finding culprits; shown without them\n");
    if (all)
        all_json(a, cu, orig_path ? orig_path : imgpath);
    else if (summary)
        rc = proc_summary(a, cu, proc, truth);
    else
        rc = proc_text(a, cu, proc, with_pm ? pm : NULL, npm);
    free(pm);
    profdb_truth_free(truth);
    est_culprits_free(cu);
    est_analysis_free(a);
    return rc;
}
