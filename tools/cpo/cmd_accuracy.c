/*
 * cpo accuracy --exact FILE --image IMAGE [selection] [--json]
 *
 * DCPI's Figures 8 and 9 for one image: how far the frequency estimates
 * from the selection's cycle samples are from axp's exact counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "estimator/freq.h"
#include "tools/cpo/commands.h"

#define USAGE "usage: cpo accuracy --exact FILE --image IMAGE [--db DIR] [--epoch E|--all-epochs] [--json]\n"

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

int cmd_accuracy(int argc, char **argv)
{
    est_selection sel = { 0 };
    est_error err;
    const char *exact = NULL, *imgpath = NULL;
    bool json = false;
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        int k = est_selection_arg(&sel, argc, argv, &i, &err);
        if (k < 0) {
            fprintf(stderr, "cpo: accuracy: %s\n%s", err.msg, USAGE);
            rc = 2;
        } else if (k) {
            continue;
        } else if (!strcmp(argv[i], "--exact") && i + 1 < argc) {
            exact = argv[++i];
        } else if (!strcmp(argv[i], "--image") && i + 1 < argc) {
            imgpath = argv[++i];
        } else if (!strcmp(argv[i], "--json")) {
            json = true;
        } else {
            fprintf(stderr, "cpo: accuracy: unexpected argument '%s'\n%s", argv[i], USAGE);
            rc = 2;
        }
    }
    if (!rc && (!exact || !imgpath)) {
        fprintf(stderr, "cpo: accuracy: --exact FILE and --image IMAGE are required\n%s", USAGE);
        rc = 2;
    }
    if ((rc = cpo_selection_finish("accuracy", &sel, rc)))
        return rc;
    char msg[1024];
    est_analysis *a = est_analyse(&sel, imgpath, msg, sizeof msg);
    est_selection_release(&sel);
    if (!a) {
        fprintf(stderr, "cpo: %s\n", msg);
        return 1;
    }
    profdb_error perr;
    profdb_exact *ex = profdb_exact_read(exact, &perr);
    if (!ex) {
        fprintf(stderr, "cpo: %s\n", perr.msg);
        est_analysis_free(a);
        return 1;
    }
    est_freq *truth = est_freq_from_exact(a->cfg, ex, msg, sizeof msg);
    profdb_exact_free(ex);
    if (!truth) {
        fprintf(stderr, "cpo: %s: %s\n", exact, msg);
        est_analysis_free(a);
        return 1;
    }
    est_accuracy acc;
    est_accuracy_of(a->freq, a->sched, truth, &acc);
    if (json) {
        printf("{\n  \"image\": \"%s\",\n  \"samples\": %.0f,\n  \"period\": %.1f,\n", imgpath, a->samples,
               a->period);
        part_json("blocks", &acc.blocks, false);
        part_json("edges", &acc.edges, true);
        printf("}\n");
    } else {
        printf("%s: %.0f cycle samples, mean period %.1f cycles\n\n", imgpath, a->samples, a->period);
        part_text("Block frequencies", "cycle samples", &acc.blocks);
        putchar('\n');
        part_text("Edge frequencies", "executions", &acc.edges);
    }
    est_freq_free(truth);
    est_analysis_free(a);
    return 0;
}
