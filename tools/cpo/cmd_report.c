/*
 * cpo report BEFORE AFTER -o DIR [--db DIR] [--epoch E] [--limit N]
 *
 * What changed between two builds of a program (report/, docs/reports.md):
 * DIR/report.txt and DIR/index.html, each written whole or not at all.
 * The text goes to stdout too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/outfile.h"
#include "report/report.h"
#include "tools/cpo/commands.h"

static const char USAGE[] =
    "usage: cpo report BEFORE AFTER -o DIR [--db DIR] [--epoch E] [--limit N]\n";

static bool write_one(const rpt *r, const char *dir, const char *name, bool html, size_t limit)
{
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    outfile o;
    FILE *f = outfile_open_stream(&o, path, 0644, err, sizeof err);
    if (!f) {
        fprintf(stderr, "cpo report: %s\n", err);
        return false;
    }
    if (html)
        rpt_html(r, f, limit);
    else
        rpt_text(r, f, limit);
    if (!outfile_commit(&o, err, sizeof err)) {
        fprintf(stderr, "cpo report: %s\n", err);
        return false;
    }
    return true;
}

int cmd_report(int argc, char **argv)
{
    const char *db = getenv("CPO_DB"), *epoch = NULL, *out = NULL, *files[2];
    size_t nfiles = 0, limit = 30;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--db") && i + 1 < argc)
            db = argv[++i];
        else if (!strcmp(argv[i], "--epoch") && i + 1 < argc)
            epoch = argv[++i];
        else if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
            if (!cpo_limit_arg("report", argv[++i], &limit))
                return 2;
        }
        else if (argv[i][0] != '-' && nfiles < 2)
            files[nfiles++] = argv[i];
        else {
            fputs(USAGE, stderr);
            return 2;
        }
    }
    if (nfiles != 2 || !out) {
        fputs(USAGE, stderr);
        return 2;
    }
    if (!db || !*db) {
        fprintf(stderr, "cpo report: no profile database: give --db DIR or set CPO_DB\n");
        return 2;
    }
    /* The report's two files must not replace the builds it compares or
     * land in the database (checked before the directory is made). */
    char txt[4096], html[4096], err[1024];
    snprintf(txt, sizeof txt, "%s/report.txt", out);
    snprintf(html, sizeof html, "%s/index.html", out);
    outfile_arg outs[] = { { "-o", txt }, { "-o", html } };
    outfile_arg ins[] = { { "BEFORE", files[0] }, { "AFTER", files[1] } };
    outfile_arg dir = { "the database", db };
    if (!outfile_apart(outs, 2, ins, 2, &dir, 1, err, sizeof err)) {
        fprintf(stderr, "cpo report: %s\n", err);
        return 2;
    }
    if (mkdir(out, 0755) && errno != EEXIST) {
        fprintf(stderr, "cpo report: %s: %s\n", out, strerror(errno));
        return 1;
    }
    rpt r;
    if (!rpt_build(db, epoch, files[0], files[1], &r, err, sizeof err)) {
        fprintf(stderr, "cpo report: %s\n", err);
        return 1;
    }
    rpt_text(&r, stdout, limit);
    bool ok = write_one(&r, out, "report.txt", false, limit) && write_one(&r, out, "index.html", true, limit);
    rpt_free(&r);
    return ok ? 0 : 1;
}
