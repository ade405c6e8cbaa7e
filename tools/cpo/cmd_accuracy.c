/*
 * cpo accuracy --exact FILE... --image IMAGE [--truth FILE] [selection] [--json]
 *
 * DCPI's Figures 8 and 9 for one image: how far the frequency estimates
 * from the selection's cycle samples are from axp's exact counts (of
 * every run the selection sampled: several --exact files are summed); with
 * --truth (axp's per-instruction stall causes of the same run), how often
 * the stall culprits name the true cause (estimator/culprits.h).  With
 * --profileme, also the frequencies counted from the selection's ProfileMe
 * samples (estimator/profileme.h), and both estimates' block errors
 * weighted by true executions, side by side.  With --pm-paths (axp's
 * --profileme-truth of the same run), how often path reconstruction
 * (estimator/profileme.h) finds the true paths behind the samples of
 * instructions with at least --pm-min samples (default 100).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/culprits.h"
#include "estimator/freq.h"
#include "estimator/profileme.h"
#include "profdb/pm_truth.h"
#include "profdb/truth.h"
#include "tools/cpo/commands.h"

#define USAGE "usage: cpo accuracy --exact FILE... --image IMAGE [--truth FILE] [--db DIR] [--epoch E|--all-epochs]\n" \
              "                    [--json] [--worst N] [--profileme] [--pm-paths FILE [--pm-min N]]\n"

static void part_text(const char *what, const char *weighted, const est_accuracy_part *p)
{
    double w = p->weight > 0 ? p->weight : 1;
    printf("%s (weighted by %s, total %.0f)\n", what, weighted, p->weight);
    printf("  within  5%%: %5.1f%%   10%%: %5.1f%%   15%%: %5.1f%%\n", 100 * p->within[0] / w,
           100 * p->within[1] / w, 100 * p->within[2] / w);
    printf("  error      share\n");
    for (int k = 0; k < EST_ACC_BINS; k++) {
        char label[32];
        if (k == 0)
            snprintf(label, sizeof label, "< -45%%");
        else if (k == EST_ACC_BINS - 1)
            snprintf(label, sizeof label, ">= +50%%");
        else
            snprintf(label, sizeof label, "%+d%%", -50 + 5 * k);
        double share = 100 * p->hist[k] / w;
        int bar = (int)(share / 2 + 0.5);
        printf("  %-9s %5.1f%% ", label, share);
        for (int i = 0; i < bar; i++)
            putchar('#');
        putchar('\n');
    }
    static const char *const cn[] = { "low", "medium", "high" };
    for (int c = 2; c >= 0; c--)
        if (p->conf_weight[c] > 0)
            printf("  confidence %-6s %5.1f%% of the weight, %5.1f%% of it within 5%%\n", cn[c],
                   100 * p->conf_weight[c] / w, 100 * p->conf_within5[c] / p->conf_weight[c]);
}

static void part_json(const char *name, const est_accuracy_part *p, bool last)
{
    double w = p->weight > 0 ? p->weight : 1;
    printf("  \"%s\": {\"weight\": %.0f, \"within5\": %.4f, \"within10\": %.4f, \"within15\": %.4f, \"hist\": [",
           name, p->weight, p->within[0] / w, p->within[1] / w, p->within[2] / w);
    for (int k = 0; k < EST_ACC_BINS; k++)
        printf("%s%.4f", k ? ", " : "", p->hist[k] / w);
    printf("]}%s\n", last ? "" : ",");
}

/* The blocks whose estimates were furthest off, weighted by samples. */
typedef struct worst { double score, est, truth, samples; size_t p, b; } worst;
static int by_score(const void *a, const void *b)
{
    double x = ((const worst *)a)->score, y = ((const worst *)b)->score;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void worst_blocks(const est_analysis *a, const est_freq *truth, size_t limit)
{
    size_t n = 0, cap = 0;
    worst *w = NULL;
    for (size_t p = 0; p < a->cfg->nprocs; p++) {
        const cfg_proc *f = &a->cfg->procs[p];
        for (size_t b = 0; b < f->nblocks; b++) {
            const est_block_sched *bs = &a->sched->procs[p].blocks[b];
            double s = 0, e = a->freq->procs[p].block[b], t = truth->procs[p].block[b];
            for (uint32_t i = 0; i < bs->n; i++)
                s += bs->samples[i];
            if (s <= 0)
                continue;
            if (n == cap) {
                worst *nw = realloc(w, (cap = cap ? 2 * cap : 256) * sizeof *nw);
                if (!nw)
                    break;
                w = nw;
            }
            double err = t > 0 ? (e - t) / t : (e > 0.5 ? 1 : 0);
            w[n++] = (worst){ s * (err < 0 ? -err : err), e, t, s, p, b };
        }
    }
    if (n)
        qsort(w, n, sizeof *w, by_score);
    printf("\nBlocks furthest off (error times samples)\n");
    printf("  %-28s %-12s %10s %10s %7s %8s %-6s %s\n", "procedure", "block", "estimate", "exact",
           "error", "samples", "conf", "from");
    static const char *const from[] = { "flow", "samples", "propagation", "counts" };
    for (size_t i = 0; i < n && i < limit; i++) {
        const cfg_proc *f = &a->cfg->procs[w[i].p];
        const est_proc_freq *q = &a->freq->procs[w[i].p];
        printf("  %-28.28s 0x%-10lx %10.0f %10.0f %+6.1f%% %8.0f %-6s %s\n", f->name ? f->name : "?",
               (unsigned long)f->blocks[w[i].b].start, w[i].est, w[i].truth,
               w[i].truth > 0 ? 100 * (w[i].est - w[i].truth) / w[i].truth : 0, w[i].samples,
               est_conf_name(q->block_conf[w[i].b]), from[q->block_from[w[i].b] & 3]);
    }
    free(w);
}

/* The two-way branches whose hotter side the estimate gets wrong, by how
 * many more times that side ran (est_accuracy_branches). */
typedef struct wrong_branch { double score; size_t p, b; uint32_t hot, other; } wrong_branch;
static int by_branch_score(const void *a, const void *b)
{
    double x = ((const wrong_branch *)a)->score, y = ((const wrong_branch *)b)->score;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void worst_branches(const est_analysis *a, const est_freq *truth, size_t limit)
{
    size_t n = 0, cap = 0;
    wrong_branch *w = NULL;
    for (size_t p = 0; p < a->cfg->nprocs; p++) {
        const cfg_proc *f = &a->cfg->procs[p];
        const est_proc_freq *e = &a->freq->procs[p], *t = &truth->procs[p];
        for (size_t b = 0; b < f->nblocks; b++) {
            uint32_t x, y;
            if (!est_two_way(f, b, t, &x, &y) || e->edge[x] > e->edge[y])
                continue;
            if (n == cap) {
                wrong_branch *nw = realloc(w, (cap = cap ? 2 * cap : 256) * sizeof *nw);
                if (!nw)
                    break;
                w = nw;
            }
            w[n++] = (wrong_branch){ t->edge[x] - t->edge[y], p, b, x, y };
        }
    }
    if (n)
        qsort(w, n, sizeof *w, by_branch_score);
    printf("\nBranches whose hotter side the estimate gets wrong (by true executions beyond the other side's)\n");
    printf("  %-28s %-12s %-12s %12s %12s %12s %12s\n", "procedure", "block", "hotter to", "exact",
           "estimate", "other exact", "estimate");
    for (size_t i = 0; i < n && i < limit; i++) {
        const cfg_proc *f = &a->cfg->procs[w[i].p];
        const est_proc_freq *e = &a->freq->procs[w[i].p], *t = &truth->procs[w[i].p];
        printf("  %-28.28s 0x%-10lx 0x%-10lx %12.0f %12.0f %12.0f %12.0f\n", f->name ? f->name : "?",
               (unsigned long)f->blocks[w[i].b].start, (unsigned long)f->blocks[f->edges[w[i].hot].to].start,
               t->edge[w[i].hot], e->edge[w[i].hot], t->edge[w[i].other], e->edge[w[i].other]);
    }
    free(w);
}

/* The exact counts of files[0..n) summed, on a's CFG; NULL with a message
 * on stderr. */
static est_freq *exact_sum(const est_analysis *a, const char *const *files, size_t n)
{
    char msg[1024];
    est_freq *sum = NULL;
    for (size_t i = 0; i < n; i++) {
        profdb_error perr;
        profdb_exact *ex = profdb_exact_read(files[i], &perr);
        if (!ex) {
            fprintf(stderr, "cpo: %s\n", perr.msg);
            est_freq_free(sum);
            return NULL;
        }
        /* A file declaring the image with no run of it would read as
         * counts of zero; one not declaring it gets est_freq's message. */
        const image *img = a->cfg->img;
        if (!profdb_exact_counts(ex, img->build_id, img->build_id_len, img->path, &perr) &&
            perr.code != PROFDB_ENOENT) {
            fprintf(stderr, "cpo: %s\n", perr.msg);
            profdb_exact_free(ex);
            est_freq_free(sum);
            return NULL;
        }
        est_freq *f = est_freq_from_exact(a->cfg, ex, msg, sizeof msg);
        profdb_exact_free(ex);
        if (!f) {
            fprintf(stderr, "cpo: %s: %s\n", files[i], msg);
            est_freq_free(sum);
            return NULL;
        }
        if (sum) {
            est_freq_add(sum, f);
            est_freq_free(f);
        } else {
            sum = f;
        }
    }
    return sum;
}

/* The culprits against the truth: false when the truth cannot be read. */
static bool culprits(const est_analysis *a, const char *path, const est_freq *exact,
                     est_culprit_accuracy *ca)
{
    profdb_error perr;
    profdb_truth *t = profdb_truth_read(path, &perr);
    if (!t) {
        fprintf(stderr, "cpo: %s\n", perr.msg);
        return false;
    }
    est_culprits *c = est_culprits_of(a);
    if (c)
        est_culprits_accuracy(a->cfg, c, a->sched, t, exact, ca);
    else
        fprintf(stderr, "cpo: out of memory finding culprits\n");
    est_culprits_free(c);
    profdb_truth_free(t);
    return c != NULL;
}

static void culprits_text(const est_culprit_accuracy *ca)
{
    double s = ca->stall > 0 ? ca->stall : 1;
    printf("\nStall culprits against the truth (%.0f dynamic stall cycles)\n", ca->stall);
    printf("  true cause among the culprits: %5.1f%% of the cycles; %.2f culprits per stalled cycle\n",
           100 * ca->covered / s, ca->culprits / s);
    printf("  unexplained stall: %.2f%% of the samples\n",
           ca->samples > 0 ? 100 * ca->unexplained / ca->samples : 0);
    for (int k = 0; k < EST_DYN_COUNT; k++)
        if (ca->by_cause[k] > 0)
            printf("  %-18s %5.1f%% of the stall, %5.1f%% of it named\n", est_dyn_names[k],
                   100 * ca->by_cause[k] / s, 100 * ca->covered_by_cause[k] / ca->by_cause[k]);
}

/* The counted frequencies from ProfileMe samples against the truth, and
 * both estimates weighted by the same true executions.  false: nothing
 * to compare (said why). */
static bool profileme(const est_selection *sel, const est_analysis *a, const est_freq *truth, bool json)
{
    char key[PROFDB_KEY_MAX], msg[1024] = "";
    profdb_key(a->img->build_id, a->img->build_id_len, a->img->path, key);
    profdb_pm *e;
    size_t n;
    if (!est_pm_load(sel, key, &e, &n, msg, sizeof msg) || !n) {
        fprintf(stderr, "cpo: accuracy: %s\n", msg[0] ? msg : "no ProfileMe samples of the image");
        return false;
    }
    double **w = NULL, **x = est_pm_exec_weights(truth), samples = 0;
    est_freq *f = est_freq_from_pm(a->cfg, e, n, &w, msg, sizeof msg);
    free(e);
    if (!f || !x) {
        fprintf(stderr, "cpo: accuracy: %s\n", f ? "out of memory" : msg);
        est_freq_free(f);
        est_pm_samples_free(x, a->cfg->nprocs);
        return false;
    }
    for (size_t p = 0; p < a->cfg->nprocs; p++)
        samples += f->procs[p].samples;
    est_accuracy pm, pmx, cyx;
    est_accuracy_by(f, w, truth, &pm);
    est_accuracy_by(f, x, truth, &pmx);
    est_accuracy_by(a->freq, x, truth, &cyx);
    if (json) {
        printf("  \"profileme\": {\"samples\": %.0f,\n", samples);
        part_json("blocks", &pm.blocks, false);
        part_json("edges", &pm.edges, false);
        part_json("blocks_by_executions", &pmx.blocks, true);
        printf("  },\n");
        part_json("cycle_blocks_by_executions", &cyx.blocks, true);
    } else {
        printf("\nProfileMe: %.0f samples of the image, frequencies counted\n\n", samples);
        part_text("Block frequencies from ProfileMe", "ProfileMe samples", &pm.blocks);
        putchar('\n');
        part_text("Edge frequencies from ProfileMe", "executions", &pm.edges);
        putchar('\n');
        part_text("Block frequencies from ProfileMe", "instructions executed", &pmx.blocks);
        putchar('\n');
        part_text("Block frequencies from cycle samples", "instructions executed", &cyx.blocks);
    }
    est_pm_samples_free(w, a->cfg->nprocs);
    est_pm_samples_free(x, a->cfg->nprocs);
    est_freq_free(f);
    return true;
}

/* Path reconstruction against --profileme-truth (estimator/pm_paths_acc.c). */
static bool pm_paths(const est_selection *sel, const est_analysis *a, const char *path, double min, bool json)
{
    char msg[1024] = "", key[PROFDB_KEY_MAX];
    profdb_key(a->img->build_id, a->img->build_id_len, a->img->path, key);
    profdb_error perr;
    profdb_pm_truth *t = profdb_pm_truth_read(path, &perr);
    if (!t) {
        fprintf(stderr, "cpo: accuracy: %s\n", perr.msg);
        return false;
    }
    profdb_pm *e = NULL;
    size_t n = 0;
    est_freq *f = NULL;
    est_pm_path_accuracy r;
    bool ok = est_pm_load(sel, key, &e, &n, msg, sizeof msg) && n &&
              (f = est_freq_from_pm(a->cfg, e, n, NULL, msg, sizeof msg)) &&
              est_pm_path_accuracy_of(a->cfg, f, e, n, t, min, &r);
    if (!ok)
        fprintf(stderr, "cpo: accuracy: %s\n", msg[0] ? msg : !n ? "no ProfileMe samples of the image" : "out of memory");
    est_freq_free(f);
    free(e);
    profdb_pm_truth_free(t);
    if (!ok)
        return false;
    double k = r.samples - r.unknown, d = k > 0 ? k : 1;
    if (json) {
        printf("  \"pm_paths\": {\"min_samples\": %.0f, \"instructions\": %.0f, \"samples\": %.0f, \"unknown\": %.0f, "
               "\"known\": %.0f, \"top\": %.4f, \"in_set\": %.4f, \"own_top\": %.4f, \"consistent\": %.4f, "
               "\"ambiguous\": %.4f, \"true_score\": %.4f, \"top_score\": %.4f, \"distance\": %.4f, "
               "\"ends\": {\"history\": %.4f, \"entry\": %.4f, \"call\": %.4f, \"length\": %.4f}},\n",
               min, r.instructions, r.samples, r.unknown, k, r.top / d, r.in_set / d, r.own_top / d,
               r.consistent / d, r.ambiguous / d, r.true_score / d, r.top_score / d, r.distance / d,
               r.ends[0] / d, r.ends[1] / d, r.ends[2] / d, r.ends[3] / d);
        return true;
    }
    printf("\nPath reconstruction against the true paths: %.0f instructions with at least %.0f samples,\n"
           "%.0f samples (%.0f whose true path the truth does not reach back for)\n", r.instructions, min,
           r.samples, r.unknown);
    printf("  true path is the top-scored           %5.1f%%\n", 100 * r.top / d);
    printf("  true path is among the reconstructed  %5.1f%%\n", 100 * r.in_set / d);
    printf("  true path is its history's top        %5.1f%%\n", 100 * r.own_top / d);
    printf("  true path agrees with its history     %5.1f%%\n", 100 * r.consistent / d);
    printf("  history allows several paths          %5.1f%%\n", 100 * r.ambiguous / d);
    printf("  mean score of the true path %.3f, of the top path %.3f; scores to true shares: %.3f\n",
           r.true_score / d, r.top_score / d, r.distance / d);
    printf("  true paths end: history %.1f%%, entry %.1f%%, call %.1f%%, length %.1f%%\n", 100 * r.ends[0] / d,
           100 * r.ends[1] / d, 100 * r.ends[2] / d, 100 * r.ends[3] / d);
    return true;
}

int cmd_accuracy(int argc, char **argv)
{
    est_selection sel = { 0 };
    est_error err;
    const char *exact[64], *imgpath = NULL, *truthpath = NULL, *pmtruth = NULL;
    double pm_min = 100;
    bool json = false, pm = false;
    long nworst = 0;
    size_t nexact = 0;
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        int k = cpo_selection_arg(&sel, argc, argv, &i, &err);
        if (k < 0) {
            fprintf(stderr, "cpo: accuracy: %s\n%s", err.msg, USAGE);
            rc = 2;
        } else if (k) {
            continue;
        } else if (!strcmp(argv[i], "--exact") && i + 1 < argc) {
            if (nexact == sizeof exact / sizeof exact[0]) {
                fprintf(stderr, "cpo: accuracy: at most %zu --exact files\n", nexact);
                rc = 2;
            } else {
                exact[nexact++] = argv[++i];
            }
        } else if (!strcmp(argv[i], "--truth") && i + 1 < argc) {
            truthpath = argv[++i];
        } else if (!strcmp(argv[i], "--image") && i + 1 < argc) {
            imgpath = argv[++i];
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--pm-paths") && i + 1 < argc) {
            pmtruth = argv[++i];
        } else if (!strcmp(argv[i], "--pm-min") && i + 1 < argc) {
            char *end;
            pm_min = strtod(argv[++i], &end);
            if (*end || !(pm_min >= 1) || pm_min > 1e15) {
                fprintf(stderr, "cpo: accuracy: --pm-min '%s' is not a count of at least 1\n%s", argv[i], USAGE);
                rc = 2;
            }
        } else if (!strcmp(argv[i], "--profileme")) {
            pm = true;
        } else if (!strcmp(argv[i], "--worst") && i + 1 < argc) {
            char *end;
            nworst = strtol(argv[++i], &end, 10);
            if (*end || nworst < 0) {
                fprintf(stderr, "cpo: accuracy: --worst '%s' is not a count\n%s", argv[i], USAGE);
                rc = 2;
            }
        } else {
            fprintf(stderr, "cpo: accuracy: unexpected argument '%s'\n%s", argv[i], USAGE);
            rc = 2;
        }
    }
    if (!rc && (!nexact || !imgpath)) {
        fprintf(stderr, "cpo: accuracy: --exact FILE and --image IMAGE are required\n%s", USAGE);
        rc = 2;
    }
    if ((rc = cpo_selection_finish("accuracy", &sel, rc)))
        return rc;
    char msg[1024];
    sel.cycles_only = true;     /* the estimate from cycle samples, beside the counted one */
    est_analysis *a = est_analyse(&sel, imgpath, msg, sizeof msg);
    if (!a) {
        fprintf(stderr, "cpo: %s\n", msg);
        cpo_selection_release(&sel);
        return 1;
    }
    est_freq *truth = exact_sum(a, exact, nexact);
    if (!truth) {
        est_analysis_free(a);
        cpo_selection_release(&sel);
        return 1;
    }
    est_accuracy acc;
    est_accuracy_of(a->freq, a->sched, truth, &acc);
    est_culprit_accuracy ca;
    if (truthpath && !culprits(a, truthpath, truth, &ca)) {
        est_freq_free(truth);
        est_analysis_free(a);
        cpo_selection_release(&sel);
        return 1;
    }
    if (json) {
        printf("{\n  \"image\": \"%s\",\n  \"samples\": %.0f,\n  \"period\": %.1f,\n", imgpath, a->samples,
               a->period);
        if (pmtruth && !pm_paths(&sel, a, pmtruth, pm_min, true))
            rc = 1;
        part_json("blocks", &acc.blocks, false);
        part_json("edges", &acc.edges, false);
        printf("  \"branches\": {\"count\": %" PRIu64 ", \"wrong\": %" PRIu64 ", \"weight\": %.0f, "
               "\"named\": %.4f}%s\n", acc.branches.count, acc.branches.wrong, acc.branches.weight,
               acc.branches.weight > 0 ? acc.branches.named / acc.branches.weight : 0,
               !truthpath && !pm ? "" : ",");
        if (truthpath)
            printf("  \"culprits\": {\"stall\": %.0f, \"covered\": %.4f, \"per_stall\": %.3f, "
                   "\"unexplained\": %.4f}%s\n", ca.stall, ca.stall > 0 ? ca.covered / ca.stall : 0,
                   ca.stall > 0 ? ca.culprits / ca.stall : 0,
                   ca.samples > 0 ? ca.unexplained / ca.samples : 0, pm ? "," : "");
        if (pm && !profileme(&sel, a, truth, true))
            rc = 1;
        printf("}\n");
    } else {
        printf("%s: %.0f cycle samples, mean period %.1f cycles\n\n", imgpath, a->samples, a->period);
        part_text("Block frequencies", "cycle samples", &acc.blocks);
        putchar('\n');
        part_text("Edge frequencies", "executions", &acc.edges);
        const est_accuracy_branches *br = &acc.branches;
        printf("\nTwo-way branches whose hotter side the estimate names\n"
               "  %.1f%% of the weight (true executions of the hotter side beyond the other's), "
               "%" PRIu64 " of %" PRIu64 " branches wrong\n",
               br->weight > 0 ? 100 * br->named / br->weight : 0, br->wrong, br->count);
        if (truthpath)
            culprits_text(&ca);
        if (nworst) {
            worst_blocks(a, truth, (size_t)nworst);
            worst_branches(a, truth, (size_t)nworst);
        }
        if (pm && !profileme(&sel, a, truth, false))
            rc = 1;
        if (pmtruth && !pm_paths(&sel, a, pmtruth, pm_min, false))
            rc = 1;
    }
    est_freq_free(truth);
    est_analysis_free(a);
    cpo_selection_release(&sel);
    return rc;
}
