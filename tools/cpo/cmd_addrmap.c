/*
 * cpo addrmap IMAGE [ADDR...]
 * cpo addrmap IMAGE --verify ORIGINAL
 * cpo addrmap IMAGE --original FILE
 *
 * For each ADDR of a rewritten image, the original address it came from:
 * "NEW ORIG KIND" with KIND one of code, branch (added by the rewriter),
 * pad (alignment), same (not moved).  Without ADDR, the whole map.
 * --verify checks the rewritten image against the image it came from
 * (rewriter/verify.c) and exits 1 on any mismatch.  --original writes the
 * image it came from, recovered from its undo record (rewriter/undo.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/outfile.h"
#include "rewriter/addrmap.h"
#include "rewriter/undo.h"
#include "rewriter/verify.h"
#include "tools/cpo/commands.h"

static const char *const kinds[] = { "code", "branch", "pad", "instr" };

static int verify(const char *newpath, const char *origpath)
{
    image_error ierr;
    image *neu = image_open(newpath, &ierr), *orig = NULL;
    if (neu)
        orig = image_open(origpath, &ierr);
    if (!neu || !orig) {
        fprintf(stderr, "cpo: %s\n", ierr.msg);
        image_close(neu);
        return 1;
    }
    rw_verify_stats st;
    char err[256];
    bool ok = rw_verify(orig, neu, stderr, &st, err, sizeof err);
    if (!ok) {
        fprintf(stderr, "cpo: %s\n", err);
    } else {
        printf("%s: %zu procedures moved; %zu words: %zu code, %zu added branches, %zu padding\n",
               newpath, st.procs_moved, st.words, st.code, st.added, st.pads);
        printf("checked %zu branches, %zu GP pairs, %zu code pointers, %zu unwind rows, "
               "%zu exception call sites\n", st.branches, st.gp_pairs, st.pointers, st.rows, st.sites);
        printf("mismatches: %zu unmapped, %zu words, %zu branch targets, %zu pointers, %zu unwind rows, "
               "%zu call sites\n", st.unmapped, st.bad_words, st.bad_targets, st.bad_pointers,
               st.bad_rows, st.bad_sites);
        ok = rw_verify_failures(&st) == 0;
    }
    image_close(neu);
    image_close(orig);
    return ok ? 0 : 1;
}

static int original(const char *path, const char *out)
{
    if (outfile_is(out, path)) {
        fprintf(stderr, "cpo: %s: the output is the rewritten image itself; write to a new file\n", out);
        return 2;
    }
    image_error ierr;
    image *img = image_open(path, &ierr);
    if (!img) {
        fprintf(stderr, "cpo: %s\n", ierr.msg);
        return 1;
    }
    char err[512];
    uint8_t *buf = NULL;
    size_t size = 0;
    outfile of;
    bool ok = image_section_by_name(img, ADDRMAP_SECTION) != NULL;
    if (!ok)
        snprintf(err, sizeof err, "%s: not a rewritten image (it has no %s): nothing to recover", path,
                 ADDRMAP_SECTION);
    ok = ok && undo_recover(img, &buf, &size, err, sizeof err) &&
              outfile_open(&of, out, 0755, err, sizeof err);
    FILE *f = ok ? outfile_stream(&of) : NULL;
    if (ok && (!f || fwrite(buf, 1, size, f) != size)) {
        snprintf(err, sizeof err, "%s: cannot write", out);
        outfile_abort(&of);
        ok = false;
    } else if (ok) {
        ok = outfile_commit(&of, err, sizeof err);
    }
    if (ok)
        printf("%s: its original, %zu bytes, written to %s\n", path, size, out);
    else
        fprintf(stderr, "cpo: %s\n", err);
    free(buf);
    image_close(img);
    return ok ? 0 : 1;
}

int cmd_addrmap(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: cpo addrmap IMAGE [ADDR...] | cpo addrmap IMAGE --verify ORIGINAL |\n"
                        "       cpo addrmap IMAGE --original FILE\n");
        return 2;
    }
    image_error ierr;
    if (argc == 4 && !strcmp(argv[2], "--verify"))
        return verify(argv[1], argv[3]);
    if (argc == 4 && !strcmp(argv[2], "--original"))
        return original(argv[1], argv[3]);
    image *img = image_open(argv[1], &ierr);
    if (!img) {
        fprintf(stderr, "cpo: %s\n", ierr.msg);
        return 1;
    }
    addrmap m;
    char err[256];
    if (!addrmap_read(img, &m, err, sizeof err)) {
        fprintf(stderr, "cpo: %s\n", err);
        image_close(img);
        return 1;
    }
    int rc = 0;
    if (argc == 2) {
        for (size_t i = 0; i < m.n; i++)
            printf("0x%" PRIx64 "-0x%" PRIx64 " 0x%" PRIx64 " %s\n", m.e[i].new_addr,
                   m.e[i].new_addr + m.e[i].len, m.e[i].orig, kinds[m.e[i].kind]);
    }
    for (int i = 2; i < argc; i++) {
        char *end;
        uint64_t a = strtoull(argv[i], &end, 0);
        if (!*argv[i] || *end) {
            fprintf(stderr, "cpo: '%s' is not an address\n", argv[i]);
            rc = 2;
            continue;
        }
        int kind;
        uint64_t o = addrmap_lookup(&m, a, &kind);
        printf("0x%" PRIx64 " 0x%" PRIx64 " %s\n", a, o, kind < 0 ? "same" : kinds[kind]);
    }
    addrmap_free(&m);
    image_close(img);
    return rc;
}
