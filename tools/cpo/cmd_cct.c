/*
 * cpo cct --from FILE [--metric M] [--depth N] [--min F] [--json | --folded]
 * cpo cct [--db DIR] [--epoch E|--all-epochs] [-e EVENT] [the same options]
 * cpo cct ... --against FILE2 [--against-metric M2] [--top N]
 *
 * A calling context tree (axp --cct, an instrumented binary's, or, without
 * --from, the one the selection's sampled stacks make): each
 * context with its calls and its metric inclusive and exclusive, contexts
 * below --depth or under --min of the total folded away; as JSON; or as
 * folded stacks ("a;b;c VALUE" per context), which flame-graph tools read.
 * With --against, the top contexts of a second tree (axp's exact one) with
 * their share of its metric beside their share of this tree's; when this
 * tree counts calls, the other's contexts of code it has no node for
 * (libraries, procedures not instrumented) folded into their callers first.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "estimator/stacks.h"
#include "paths/cct.h"
#include "paths/compare.h"
#include "tools/cpo/commands.h"

static const char usage_text[] =
    "usage: cpo cct [--from FILE | --db DIR [--epoch E|--all-epochs] [-e EVENT] [--image FILE]...] [--metric M]\n"
    "               [--depth N] [--min F] [--json | --folded]\n"
    "       cpo cct [--from FILE | --db DIR ...] [--metric M] --against FILE2 [--against-metric M2] [--top N]\n";

typedef struct cview {
    const cct *t;
    const uint64_t *incl;
    int m, mc;                   /* the metric shown, calls (or -1) */
    unsigned depth;
    double min;
} cview;

static void node_name(FILE *f, const cct *t, uint32_t i)
{
    const cct_node *n = &t->nodes[i];
    if (n->name[0])
        fputs(n->name, f);
    else
        fprintf(f, "0x%" PRIx64, n->proc);
}

static bool shown(const cview *v, uint32_t i)
{
    uint64_t total = v->incl[CCT_ROOT * v->t->nmetrics + v->m];
    return (double)v->incl[(size_t)i * v->t->nmetrics + v->m] >= v->min * (double)total;
}

static void text_node(const cview *v, uint32_t i, unsigned d)
{
    const cct *t = v->t;
    size_t nm = t->nmetrics;
    uint64_t total = v->incl[CCT_ROOT * nm + v->m];
    double pin = total ? 100.0 * (double)v->incl[i * nm + v->m] / (double)total : 0;
    double pex = total ? 100.0 * (double)cct_metrics(t, i)[v->m] / (double)total : 0;
    printf("%6.2f%% %6.2f%% %10" PRIu64 "  %*s", pin, pex, v->mc >= 0 ? cct_metrics(t, i)[v->mc] : 0,
           (int)(2 * d), "");
    node_name(stdout, t, i);
    if (t->nodes[i].image >= 0 && t->nodes[i].site)
        printf("  (from 0x%" PRIx64 ")", t->nodes[i].site);
    putchar('\n');
    size_t hidden = 0;
    for (uint32_t c = t->nodes[i].first_child; c != CCT_NONE; c = t->nodes[c].next_sibling) {
        if (d + 1 < v->depth && shown(v, c))
            text_node(v, c, d + 1);
        else
            hidden++;
    }
    if (hidden)
        printf("%*s  ... %zu more context%s\n", 29 + (int)(2 * d), "", hidden, hidden == 1 ? "" : "s");
}

static void json_node(const cview *v, uint32_t i, unsigned d)
{
    const cct *t = v->t;
    const cct_node *n = &t->nodes[i];
    printf("{\"name\": ");
    json_string(stdout, n->name);
    printf(", \"image\": ");
    if (n->image >= 0)
        json_string(stdout, t->images[n->image].path);
    else
        printf("null");
    printf(", \"address\": \"0x%" PRIx64 "\", \"site\": \"0x%" PRIx64 "\", \"exclusive\": {", n->proc, n->site);
    for (size_t q = 0; q < t->nmetrics; q++)
        printf("%s\"%s\": %" PRIu64, q ? ", " : "", t->metric[q], cct_metrics(t, i)[q]);
    printf("}, \"inclusive\": {");
    for (size_t q = 0; q < t->nmetrics; q++)
        printf("%s\"%s\": %" PRIu64, q ? ", " : "", t->metric[q], v->incl[i * t->nmetrics + q]);
    printf("}, \"children\": [");
    bool first = true;
    for (uint32_t c = n->first_child; c != CCT_NONE; c = t->nodes[c].next_sibling)
        if (d + 1 < v->depth && shown(v, c)) {
            printf(first ? "" : ", ");
            first = false;
            json_node(v, c, d + 1);
        }
    printf("]}");
}

/* Folded stacks: one line per context with its own (exclusive) metric,
 * the chain from the root's children down, ';' between names. */
static void folded(const cview *v)
{
    const cct *t = v->t;
    uint32_t *chain = malloc((t->nnodes ? t->nnodes : 1) * sizeof *chain);
    if (!chain)
        return;
    for (uint32_t i = 1; i < t->nnodes; i++) {
        uint64_t x = cct_metrics(t, i)[v->m];
        if (!x)
            continue;
        size_t n = 0;
        for (uint32_t a = i; a != CCT_ROOT && a != CCT_NONE; a = t->nodes[a].parent)
            chain[n++] = a;
        while (n--) {
            node_name(stdout, t, chain[n]);
            putchar(n ? ';' : ' ');
        }
        printf("%" PRIu64 "\n", x);
    }
    free(chain);
}

static void chain(FILE *f, const cct *t, uint32_t i)
{
    if (t->nodes[i].parent != CCT_ROOT && t->nodes[i].parent != CCT_NONE) {
        chain(f, t, t->nodes[i].parent);
        fputc(';', f);
    }
    node_name(f, t, i);
}

/* This tree (metric m) against another (metric m2), context by context. */
static int against(const cct *t, int m, const char *file, const char *metric2, size_t top)
{
    char err[512];
    cct *x0 = cct_read(file, err, sizeof err);
    if (!x0) {
        fprintf(stderr, "cpo: %s\n", err);
        return 1;
    }
    /* A tree that counts calls (an instrumented binary's, axp's) has a
     * node for every procedure it counts that ran: the other tree is
     * seen as it sees it, the contexts of code it does not count (a
     * dynamic program's libraries, procedures not instrumented), whose
     * cost it charges to their callers, folded into those.  A tree of
     * samples lacks what no sample hit, which it does not charge to the
     * callers: nothing is folded for it. */
    size_t folded = 0;
    cct *x = x0;
    if (cct_metric(t, "calls") >= 0) {
        x = cct_fold_to(t, x0, &folded);
        cct_free(x0);
    }
    if (!x) {
        fprintf(stderr, "cpo: out of memory\n");
        return 1;
    }
    int m2 = cct_metric(x, metric2);
    cct_pair *pr = malloc(top * sizeof *pr);
    if (m2 < 0 || !pr) {
        fprintf(stderr, m2 < 0 ? "cpo: %s has no metric '%s'\n" : "cpo: out of memory%s%s\n",
                m2 < 0 ? file : "", m2 < 0 ? metric2 : "");
        free(pr);
        cct_free(x);
        return m2 < 0 ? 2 : 1;
    }
    size_t n = cct_compare(t, m, x, m2, top, pr);
    double worst = 0;
    size_t within = 0, missing = 0;
    if (folded)
        printf("%zu contexts of %s fold into their callers: code this tree has no node for\n", folded, file);
    printf("%8s %8s %8s  context (the top %zu of %s by %s)\n", metric2, t->metric[m], "diff", top, file, metric2);
    for (size_t i = 0; i < n; i++) {
        double d = 100 * (pr[i].share_a - pr[i].share_b);
        printf("%7.2f%% %7.2f%% %+7.2f  ", 100 * pr[i].share_b, 100 * pr[i].share_a, d);
        chain(stdout, x, pr[i].b);
        printf("%s\n", pr[i].a == CCT_NONE ? "  (not in this tree)" : "");
        worst = d < 0 ? (-d > worst ? -d : worst) : (d > worst ? d : worst);
        within += d >= -2 && d <= 2;
        missing += pr[i].a == CCT_NONE;
    }
    printf("%zu contexts: %zu within 2 points, largest difference %.2f points, %zu not in this tree\n", n, within,
           worst, missing);
    free(pr);
    cct_free(x);
    return 0;
}

/* The tree of the selection's sampled stacks; NULL when there is none
 * (said why). */
static int cct_main(int argc, char **argv, est_selection *sel);

static cct *from_samples(est_selection *sel)
{
    est_stacks s;
    est_error err;
    if (!est_stacks_load_mapped(sel, cpo_origin_of, NULL, &s, &err)) {
        fprintf(stderr, "cpo: cct: %s\n", err.msg);
        return NULL;
    }
    cct *t = NULL;
    if (!s.st.n)
        fprintf(stderr, "cpo: cct: no stacks in %s (samples taken with axp run --stacks carry them)\n", sel->db);
    else if (!(t = est_stacks_cct(&s, &err)))
        fprintf(stderr, "cpo: cct: %s\n", err.msg);
    est_stacks_free(&s);
    return t;
}

static int cct_main(int argc, char **argv, est_selection *sel)
{
    static const struct option opts[] = {
        { "from", required_argument, 0, 'f' }, { "metric", required_argument, 0, 'm' },
        { "depth", required_argument, 0, 'd' }, { "min", required_argument, 0, 'n' },
        { "json", no_argument, 0, 'j' }, { "folded", no_argument, 0, 'F' },
        { "against", required_argument, 0, 'a' }, { "against-metric", required_argument, 0, 'A' },
        { "top", required_argument, 0, 't' }, { "image", required_argument, 0, 'i' }, { 0, 0, 0, 0 },
    };
    const char *from = NULL, *metric = NULL, *vs = NULL, *vs_metric = "cycles";
    const char *images[64];
    size_t top = 50;
    bool json = false, fold = false;
    cview v = { .depth = 64, .min = 0.001 };
    char *end;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:m:d:n:jFa:A:t:i:", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            if (sel->nimage_files == sizeof images / sizeof images[0]) {
                fprintf(stderr, "cpo: cct: too many --image options\n");
                return 2;
            }
            images[sel->nimage_files++] = optarg;
            sel->image_files = images;
            break;
        case 'a': vs = optarg; break;
        case 'A': vs_metric = optarg; break;
        case 't':
            top = strtoul(optarg, &end, 10);
            if (*end || !top) {
                fprintf(stderr, "cpo: --top: expected a positive number, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'f': from = optarg; break;
        case 'm': metric = optarg; break;
        case 'j': json = true; break;
        case 'F': fold = true; break;
        case 'd':
            v.depth = (unsigned)strtoul(optarg, &end, 10);
            if (*end || !v.depth) {
                fprintf(stderr, "cpo: --depth: expected a positive number, got '%s'\n", optarg);
                return 2;
            }
            break;
        case 'n':
            v.min = strtod(optarg, &end);
            if (*end || !(v.min >= 0 && v.min <= 1)) {
                fprintf(stderr, "cpo: --min: expected a fraction in [0, 1], got '%s'\n", optarg);
                return 2;
            }
            break;
        default: fputs(usage_text, stderr); return 2;
        }
    }
    if (optind != argc || (json && fold) || (vs && (json || fold)) ||
        (from && (sel->db || sel->epoch || sel->all_epochs || sel->nevents || sel->nimage_files))) {
        fputs(usage_text, stderr);
        return 2;
    }
    char err[512];
    cct *t;
    if (from) {
        if (!(t = cct_read(from, err, sizeof err)))
            fprintf(stderr, "cpo: %s\n", err);
    } else {
        if (cpo_selection_finish("cct", sel, 0))
            return 2;
        t = from_samples(sel);
    }
    if (!t)
        return 1;
    v.t = t;
    /* a tree from samples has one metric, samples; axp's, cycles first */
    if (!metric)
        metric = cct_metric(t, "cycles") >= 0 ? "cycles" : t->metric[t->nmetrics > 1 ? 1 : 0];
    if ((v.m = cct_metric(t, metric)) < 0) {
        fprintf(stderr, "cpo: %s has no metric '%s'\n", from ? from : "the tree of the samples", metric);
        cct_free(t);
        return 2;
    }
    v.mc = cct_metric(t, "calls");
    if (vs) {
        int rc = against(t, v.m, vs, vs_metric, top);
        cct_free(t);
        return rc;
    }
    uint64_t *incl = cct_inclusive(t);
    if (!incl) {
        fprintf(stderr, "cpo: out of memory\n");
        cct_free(t);
        return 1;
    }
    v.incl = incl;
    if (fold) {
        folded(&v);
    } else if (json) {
        json_node(&v, CCT_ROOT, 0);
        putchar('\n');
    } else {
        printf("%zu contexts, %zu recursive back edges; %s %" PRIu64 " in all\n", t->nnodes - 1, t->nback,
               t->metric[v.m], incl[CCT_ROOT * t->nmetrics + v.m]);
        printf("  incl.   excl.      calls  context\n");
        text_node(&v, CCT_ROOT, 0);
    }
    free(incl);
    cct_free(t);
    return 0;
}

int cmd_cct(int argc, char **argv)
{
    /* the selection's options first; what is left goes to getopt */
    est_selection sel = { 0 };
    est_error serr;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    if (!rest)
        return 1;
    rest[nrest++] = argv[0];
    for (int i = 1; i < argc; i++) {
        int k = cpo_selection_arg(&sel, argc, argv, &i, &serr);
        if (k < 0) {
            fprintf(stderr, "cpo: cct: %s\n%s", serr.msg, usage_text);
            cpo_selection_release(&sel);
            free(rest);
            return 2;
        }
        if (!k)
            rest[nrest++] = argv[i];
    }
    int rc = cct_main(nrest, rest, &sel);
    cpo_selection_release(&sel);
    free(rest);
    return rc;
}
