/*
 * rewriter/: the plan reader and writer, the address map, call-frame rows,
 * and whole rewrites of programs from build/programs (skipped when missing),
 * checked with rw_verify, which must also catch a sabotaged output.
 */
#include <criterion/criterion.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alpha/insn.h"
#include "rewriter/addrmap.h"
#include "rewriter/cfi.h"
#include "optimizer/plan.h"
#include "rewriter/rewrite.h"
#include "rewriter/verify.h"

/* ---- plans ------------------------------------------------------------------ */

static const char good_plan[] =
    "# a plan\n"
    "cpo-layout 1\n"
    "build-id 0123abcd\n"
    "cold-align 64\n"
    "cold-offset 48\n"
    "pin 0x120000700\n"
    "proc 0x120000490 align 32\n"
    "block 0x120000490\n"
    "block 0x1200004c0 align 16   # hot loop\n"
    "split\n"
    "block 0x120000500\n"
    "\n"
    "proc 0x120000600 gap 96\n"
    "proc 0x120000680 gap 64 align 16\n"
    "split\n"
    "block 0x120000680\n"
    "invert 0x1200004bc\n"
    "hint 0x120000518 0x120000600\n";

Test(plan, parse_good)
{
    plan pl;
    char err[256];
    cr_assert(plan_parse(good_plan, strlen(good_plan), "p", &pl, err, sizeof err), "%s", err);
    cr_assert_str_eq(pl.build_id, "0123abcd");
    cr_assert_eq(pl.cold_align, 64);
    cr_assert_eq(pl.cold_offset, 48);
    cr_assert_eq(pl.nprocs, 3);
    cr_assert_eq(pl.procs[0].addr, 0x120000490);
    cr_assert_eq(pl.procs[0].align, 32);
    cr_assert_eq(pl.procs[0].nblocks, 3);
    cr_assert_eq(pl.procs[0].split, 2);
    cr_assert_eq(plan_cold_start(&pl.procs[0]), 2);
    cr_assert_eq(pl.procs[0].blocks[1].align, 16);
    cr_assert_eq(pl.procs[0].blocks[1].line, 9);
    cr_assert_eq(pl.procs[1].nblocks, 0);
    cr_assert_eq(pl.procs[0].gap, 0);
    cr_assert_eq(pl.procs[1].gap, 96);
    cr_assert_eq(pl.procs[2].gap, 64);
    cr_assert_eq(pl.procs[2].align, 16);
    cr_assert_eq(plan_cold_start(&pl.procs[1]), 0);
    cr_assert_eq(pl.procs[2].split, 0, "a split before the entry: wholly cold");
    cr_assert_eq(plan_cold_start(&pl.procs[2]), 0);
    cr_assert_eq(pl.ninverts, 1);
    cr_assert_eq(pl.inverts[0].addr, 0x1200004bc);
    cr_assert_eq(pl.nhints, 1);
    cr_assert_eq(pl.hints[0].target, 0x120000600);
    cr_assert_eq(pl.npins, 1);
    plan_free(&pl);
}

Test(plan, write_then_read_is_the_same)
{
    plan a, b;
    char err[256];
    cr_assert(plan_parse(good_plan, strlen(good_plan), "p", &a, err, sizeof err), "%s", err);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(plan_write(f, &a));
    fclose(f);
    cr_assert(plan_parse(buf, len, "w", &b, err, sizeof err), "%s\n%s", err, buf);
    cr_assert_eq(a.nprocs, b.nprocs);
    for (size_t i = 0; i < a.nprocs; i++) {
        cr_assert_eq(a.procs[i].addr, b.procs[i].addr);
        cr_assert_eq(a.procs[i].align, b.procs[i].align);
        cr_assert_eq(a.procs[i].nblocks, b.procs[i].nblocks);
        cr_assert_eq(plan_cold_start(&a.procs[i]), plan_cold_start(&b.procs[i]));
        cr_assert_eq(a.procs[i].split, b.procs[i].split);
        for (size_t k = 0; k < a.procs[i].nblocks; k++) {
            cr_assert_eq(a.procs[i].blocks[k].addr, b.procs[i].blocks[k].addr);
            cr_assert_eq(a.procs[i].blocks[k].align, b.procs[i].blocks[k].align);
        }
    }
    cr_assert_eq(a.ninverts, b.ninverts);
    cr_assert_eq(a.nhints, b.nhints);
    cr_assert_eq(a.npins, b.npins);
    cr_assert_eq(a.cold_align, b.cold_align);
    cr_assert_eq(a.cold_offset, b.cold_offset);
    cr_assert_str_eq(a.build_id, b.build_id);
    free(buf);
    plan_free(&a);
    plan_free(&b);
}

/* Each bad plan and the "FILE:LINE:" its error must start with. */
static const struct { const char *text, *where, *what; } bad_plans[] = {
    { "", "p:1:", "empty" },
    { "proc 0x10\n", "p:1:", "cpo-layout" },
    { "cpo-layout 2\n", "p:1:", "version" },
    { "cpo-layout 1\nfrobnicate\n", "p:2:", "unknown directive" },
    { "cpo-layout 1\nblock 0x10\n", "p:2:", "outside a proc" },
    { "cpo-layout 1\nproc 16\n", "p:2:", "not an address" },
    { "cpo-layout 1\nproc 0x12\n", "p:2:", "multiple of 4" },
    { "cpo-layout 1\nproc 0x10 align 12\n", "p:2:", "4, 8, 16 or 32" },
    { "cpo-layout 1\nproc 0x10 align\n", "p:2:", "align N" },
    { "cpo-layout 1\nproc 0x10 gap 6\n", "p:2:", "multiple of 4" },
    { "cpo-layout 1\nproc 0x10 gap 65540\n", "p:2:", "up to 65536" },
    { "cpo-layout 1\nproc 0x10 gap 4 gap 8\n", "p:2:", "'gap N'" },
    { "cpo-layout 1\nproc 0x10\nblock 0x10 gap 4\n", "p:3:", "align N" },
    { "cpo-layout 1\nproc 0x10\nproc 0x10\n", "p:3:", "already listed" },
    { "cpo-layout 1\nproc 0x10\nblock 0x10\nblock 0x10\n", "p:4:", "already listed" },
    { "cpo-layout 1\nsplit\n", "p:2:", "outside a proc" },
    { "cpo-layout 1\nproc 0x10\nblock 0x10\nsplit\nsplit\n", "p:5:", "at most one split" },
    { "cpo-layout 1\ninvert\n", "p:2:", "one address" },
    { "cpo-layout 1\ninvert 0x10\ninvert 0x10\n", "p:3:", "already given" },
    { "cpo-layout 1\nhint 0x10\n", "p:2:", "target" },
    { "cpo-layout 1\ncold-align 3\n", "p:2:", "power of two" },
    { "cpo-layout 1\ncold-offset 6\n", "p:2:", "multiple of 4" },
    { "cpo-layout 1\ncold-offset 16\ncold-align 16\n", "p:2:", "not below cold-align" },
    { "cpo-layout 1\nbuild-id XYZ\n", "p:2:", "hex" },
    { "cpo-layout 1\nproc 0x10\nbuild-id 00\n", "p:3:", "before the procedures" },
    { "cpo-layout 1\nproc 0x1234567890abcdef0\n", "p:2:", "not an address" },
};

Test(plan, errors_name_the_line)
{
    for (size_t i = 0; i < sizeof bad_plans / sizeof bad_plans[0]; i++) {
        plan pl;
        char err[256] = "";
        cr_assert(!plan_parse(bad_plans[i].text, strlen(bad_plans[i].text), "p", &pl, err, sizeof err),
                  "plan %zu accepted", i);
        cr_assert(!strncmp(err, bad_plans[i].where, strlen(bad_plans[i].where)),
                  "plan %zu: '%s' does not start with %s", i, err, bad_plans[i].where);
        cr_assert(strstr(err, bad_plans[i].what), "plan %zu: '%s' lacks '%s'", i, err, bad_plans[i].what);
        cr_assert_eq(pl.nprocs, 0);
        plan_free(&pl);
    }
}

Test(plan, nul_and_long_lines)
{
    plan pl;
    char err[256];
    char t[] = "cpo-layout 1\nproc 0x10\0\n";
    cr_assert(!plan_parse(t, sizeof t - 1, "p", &pl, err, sizeof err));
    cr_assert(strstr(err, "p:2:"), "%s", err);
    char *long_line = malloc(2000);
    memset(long_line, ' ', 2000);
    memcpy(long_line, "cpo-layout 1\n", 13);
    cr_assert(!plan_parse(long_line, 2000, "p", &pl, err, sizeof err));
    cr_assert(strstr(err, "p:2:"), "%s", err);
    free(long_line);
}

/* ---- address map ---------------------------------------------------------- */

Test(addrmap, encode_decode_lookup)
{
    addrmap m = { 0 };
    m.build_id_len = 3;
    memcpy(m.build_id, "\x01\x02\x03", 3);
    cr_assert(addrmap_add(&m, 0x1000, 0x500, 8, AM_CODE));
    cr_assert(addrmap_add(&m, 0x1008, 0x508, 8, AM_CODE));     /* merges */
    cr_assert(addrmap_add(&m, 0x1010, 0x50c, 4, AM_BRANCH));
    cr_assert(addrmap_add(&m, 0x1014, 0x600, 12, AM_PAD));
    cr_assert_eq(m.n, 3);
    size_t n;
    uint8_t *b = addrmap_encode(&m, &n);
    cr_assert_not_null(b);
    addrmap d;
    char err[128];
    cr_assert(addrmap_decode(b, n, &d, err, sizeof err), "%s", err);
    cr_assert_eq(d.n, 3);
    cr_assert_eq(d.build_id_len, 3);
    int k;
    cr_assert_eq(addrmap_lookup(&d, 0x100c, &k), 0x50c);
    cr_assert_eq(k, AM_CODE);
    cr_assert_eq(addrmap_lookup(&d, 0x1010, &k), 0x50c);
    cr_assert_eq(k, AM_BRANCH);
    cr_assert_eq(addrmap_lookup(&d, 0x101c, &k), 0x600);
    cr_assert_eq(k, AM_PAD);
    cr_assert_eq(addrmap_lookup(&d, 0x2000, &k), 0x2000);
    cr_assert_eq(k, -1);
    cr_assert_eq(addrmap_forward(&d, 0x504), 0x1004);
    cr_assert_eq(addrmap_forward(&d, 0x600), 0);
    addrmap_free(&d);
    /* Damage: truncated, and entries out of order. */
    cr_assert(!addrmap_decode(b, n - 1, &d, err, sizeof err));
    uint8_t *c = malloc(n);
    memcpy(c, b, n);
    memcpy(c + 16 + 8 + 24, c + 16 + 8, 8);   /* entry 1 starts where entry 0 does */
    cr_assert(!addrmap_decode(c, n, &d, err, sizeof err));
    cr_assert(strstr(err, "out of order"), "%s", err);
    free(c);
    free(b);
    addrmap_free(&m);
}

/* ---- call-frame rows -------------------------------------------------------- */

Test(cfi, run_emit_run)
{
    cfi_cie_info ci = { 4, -8, 0x1b };
    cfi_row init;
    memset(&init, 0, sizeof init);
    init.cfa_reg = 30;
    /* advance 2; def_cfa_offset 96; advance 3; offset r9 at cfa-88, r26 at
     * cfa-96; remember; advance 5; restore r9; def_cfa_offset 0; advance 1;
     * restore_state */
    const uint8_t prog[] = { 0x42, 0x0e, 96, 0x43, 0x89, 11, 0x9a, 12, 0x0a, 0x45, 0xc9, 0x0e, 0,
                             0x41, 0x0b };
    cfi_rows rows = { 0 };
    cfi_row cur = init;
    char err[128];
    cr_assert(cfi_run(prog, sizeof prog, &ci, &init, 0x1000, 0, &cur, &rows, err, sizeof err), "%s", err);
    cr_assert_eq(rows.n, 5);
    cr_assert_eq(cfi_at(&rows, 0x1000)->cfa_off, 0);
    cr_assert_eq(cfi_at(&rows, 0x1008)->cfa_off, 96);
    cr_assert_eq(cfi_at(&rows, 0x1014)->r[9].kind, CFI_OFFSET);
    cr_assert_eq(cfi_at(&rows, 0x1014)->r[9].val, -88);
    cr_assert_eq(cfi_at(&rows, 0x1028)->r[9].kind, CFI_UNSPEC);
    cr_assert_eq(cfi_at(&rows, 0x1028)->cfa_off, 0);
    cr_assert_eq(cfi_at(&rows, 0x102c)->r[9].val, -88);   /* restored state */
    cr_assert_eq(cfi_at(&rows, 0x102c)->cfa_off, 96);
    /* Write the rows again and run the result: same rows. */
    cfi_out o = { 0 };
    cfi_row prev = init;
    uint64_t loc = 0x1000;
    for (size_t i = 0; i < rows.n; i++) {
        cr_assert(cfi_emit_advance(&o, &ci, rows.row[i].loc - loc));
        loc = rows.row[i].loc;
        cr_assert(cfi_emit_delta(&o, &ci, &init, &prev, &rows.row[i]));
        prev = rows.row[i];
    }
    cfi_rows again = { 0 };
    cur = init;
    cr_assert(cfi_run(o.b, o.n, &ci, &init, 0x1000, 0, &cur, &again, err, sizeof err), "%s", err);
    cr_assert_eq(again.n, rows.n);
    for (size_t i = 0; i < rows.n; i++) {
        cr_assert_eq(again.row[i].loc, rows.row[i].loc);
        cr_assert(cfi_same(&again.row[i], &rows.row[i]), "row %zu", i);
    }
    const uint8_t expr[] = { 0x0f, 1, 0x50 };
    cr_assert(!cfi_run(expr, sizeof expr, &ci, &init, 0, 0, &cur, NULL, err, sizeof err));
    cr_assert(strstr(err, "unsupported"), "%s", err);
    free(o.b);
    free(rows.row);
    free(again.row);
}

/* ---- whole rewrites ------------------------------------------------------------ */

static const char *program_path(const char *name, char *buf, size_t n)
{
    const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
    snprintf(buf, n, "%s/programs/%s", build, name);
    if (access(buf, R_OK))
        cr_skip_test("%s missing: run `make programs`", buf);
    return buf;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*n);
    cr_assert_eq(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

/* Rewrite `name` with pl into a temporary file; returns its path. */
static char *rewrite(const char *name, plan *pl, bool check, rw_stats *st)
{
    char in[512];
    program_path(name, in, sizeof in);
    image_error ie;
    image *img = image_open(in, &ie);
    cr_assert_not_null(img, "%s", ie.msg);
    char err[512];
    cfg_program *p = cfg_build(img, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    if (!pl->nprocs && !pl->name[0])
        cr_assert(plan_identity(p, pl));
    char *out = strdup("/tmp/cpo-rw-test-XXXXXX");
    int fd = mkstemp(out);
    cr_assert_geq(fd, 0);
    close(fd);
    size_t n0, n1;
    uint8_t *before = slurp(in, &n0);
    rw_options o = { .check = check };
    cr_assert(rw_rewrite(img, p, pl, &o, out, st, err, sizeof err), "%s", err);
    uint8_t *after = slurp(in, &n1);
    cr_assert(n0 == n1 && !memcmp(before, after, n0), "the input image changed");
    free(before);
    free(after);
    cfg_free(p);
    image_close(img);
    return out;
}

/* A test program's image and CFG (cfg_free, image_close). */
static cfg_program *program_cfg(const char *name, image **img)
{
    char in[512], err[512];
    program_path(name, in, sizeof in);
    image_error ie;
    *img = image_open(in, &ie);
    cr_assert_not_null(*img, "%s", ie.msg);
    cfg_program *p = cfg_build(*img, err, sizeof err);
    cr_assert_not_null(p, "%s", err);
    return p;
}

static rw_verify_stats verify_clean(const char *name, const char *out)
{
    char in[512];
    program_path(name, in, sizeof in);
    image_error ie;
    image *orig = image_open(in, &ie), *neu = image_open(out, &ie);
    cr_assert_not_null(orig);
    cr_assert_not_null(neu, "%s", ie.msg);
    rw_verify_stats st;
    char err[256];
    cr_assert(rw_verify(orig, neu, stderr, &st, err, sizeof err), "%s", err);
    cr_assert_eq(rw_verify_failures(&st), 0, "%s: %zu mismatches", out, rw_verify_failures(&st));
    cr_assert_gt(st.code, 100);
    cr_assert_gt(st.rows, 0);
    /* A build of its own; the map names the original. */
    addrmap m;
    cr_assert(addrmap_read(neu, &m, err, sizeof err), "%s", err);
    cr_assert_eq(neu->build_id_len, orig->build_id_len);
    cr_assert(memcmp(neu->build_id, orig->build_id, orig->build_id_len), "build-id unchanged");
    cr_assert_eq(m.build_id_len, orig->build_id_len);
    cr_assert(!memcmp(m.build_id, orig->build_id, orig->build_id_len));
    /* Every new code address maps back to code of the original. */
    const image_section *t = image_section_by_name(neu, ".cpo.text");
    cr_assert_not_null(t);
    for (uint64_t a = t->addr; a < t->addr + t->size; a += 4) {
        int k;
        uint64_t o = addrmap_lookup(&m, a, &k);
        cr_assert_neq(k, -1, "0x%llx unmapped", (unsigned long long)a);
        const image_section *s = image_section_at(orig, o);
        cr_assert(s && (s->flags & SHF_EXECINSTR), "0x%llx -> 0x%llx, not code",
                  (unsigned long long)a, (unsigned long long)o);
    }
    addrmap_free(&m);
    image_close(orig);
    image_close(neu);
    return st;
}

Test(rewrite, identity_moves_everything)
{
    plan pl;
    plan_init(&pl);
    pl.name = "";
    rw_stats st;
    char *out = rewrite("bytecode-dyn", &pl, true, &st);
    cr_assert_eq(st.moved, st.procs);
    cr_assert_eq(st.branches_removed, 0);
    verify_clean("bytecode-dyn", out);
    /* Check mode: the old entry point is a trap now. */
    image_error ie;
    image *neu = image_open(out, &ie);
    const image_section *t = image_section_by_name(neu, ".text");
    cr_assert_eq(t->data[0] | t->data[1] << 8, 0x0081);
    image_close(neu);
    unlink(out);
    free(out);
    plan_free(&pl);
}

Test(rewrite, random_plans_verify)
{
    const char *names[] = { "funcptr-dyn", "bytecode-static", "setjmp-static", "signals-dyn" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            char in[512];
            program_path(names[i], in, sizeof in);
            image_error ie;
            image *img = image_open(in, &ie);
            char err[256];
            cfg_program *p = cfg_build(img, err, sizeof err);
            plan pl;
            cr_assert(plan_random(p, seed, &pl));
            cfg_free(p);
            image_close(img);
            rw_stats st;
            char *out = rewrite(names[i], &pl, seed & 1, &st);
            cr_assert_eq(st.moved, st.procs, "%s: %zu of %zu moved", names[i], st.moved, st.procs);
            rw_verify_stats vs = verify_clean(names[i], out);
            if (strstr(names[i], "static"))     /* glibc's cleanups: LSDAs rewritten */
                cr_assert_gt(vs.sites, 0);
            unlink(out);
            free(out);
            plan_free(&pl);
        }
}

Test(rewrite, verify_catches_a_stale_branch)
{
    plan pl;
    plan_init(&pl);
    pl.name = "";
    rw_stats st;
    char *out = rewrite("intloop-dyn", &pl, false, &st);
    size_t n;
    uint8_t *b = slurp(out, &n);
    image_error ie;
    image *neu = image_open(out, &ie);
    const image_section *t = image_section_by_name(neu, ".cpo.text");
    /* Find a conditional branch and bump its displacement. */
    size_t off = 0;
    for (uint64_t o = 0; o + 4 <= t->size && !off; o += 4) {
        uint32_t w = t->data[o] | t->data[o + 1] << 8 | t->data[o + 2] << 16 | (uint32_t)t->data[o + 3] << 24;
        if ((w >> 26) >= 0x39)
            off = (size_t)(t->offset + o);
    }
    cr_assert_neq(off, 0);
    image_close(neu);
    b[off] += 1;
    FILE *f = fopen(out, "wb");
    fwrite(b, 1, n, f);
    fclose(f);
    free(b);
    char in[512];
    image *orig = image_open(program_path("intloop-dyn", in, sizeof in), &ie);
    neu = image_open(out, &ie);
    rw_verify_stats vs;
    char err[256];
    cr_assert(rw_verify(orig, neu, NULL, &vs, err, sizeof err), "%s", err);
    cr_assert_eq(vs.bad_targets, 1);
    image_close(orig);
    image_close(neu);
    unlink(out);
    free(out);
    plan_free(&pl);
}

Test(rewrite, plan_errors_name_the_line)
{
    char in[512];
    program_path("alu-dyn", in, sizeof in);
    image_error ie;
    image *img = image_open(in, &ie);
    char err[512];
    cfg_program *p = cfg_build(img, err, sizeof err);
    const cfg_proc *m = cfg_proc_named(p, "main");
    cr_assert_not_null(m);
    char text[1024];
    const char *cases[][2] = {
        { "cpo-layout 1\nproc 0x%llx\n", NULL },
        { "cpo-layout 1\n\nproc 0x%llx\n", "plan:3: 0x" },
        { "cpo-layout 1\nproc 0x%llx\nblock 0x%llx\n", "plan:3: " },
        { "cpo-layout 1\ninvert 0x%llx\n", "plan:2: invert" },
        { "cpo-layout 1\nbuild-id 00\n", "build-id" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* Case 0 is valid; the others point at a wrong address. */
        unsigned long long a = i == 1 ? m->start + 4 : m->start, b = m->start + 4;
        snprintf(text, sizeof text, cases[i][0], a, b);
        plan pl;
        cr_assert(plan_parse(text, strlen(text), "plan", &pl, err, sizeof err), "%s", err);
        rw_stats st;
        rw_options o = { 0 };
        bool ok = rw_rewrite(img, p, &pl, &o, "/tmp/cpo-rw-test-never", &st, err, sizeof err);
        if (!cases[i][1]) {
            cr_assert(ok, "%s", err);
            unlink("/tmp/cpo-rw-test-never");
        } else {
            cr_assert(!ok, "case %zu accepted", i);
            cr_assert(strstr(err, cases[i][1]), "case %zu: '%s' lacks '%s'", i, err, cases[i][1]);
        }
        plan_free(&pl);
    }
    /* Writing over the input is refused. */
    plan pl;
    cr_assert(plan_identity(p, &pl));
    rw_stats st;
    rw_options o = { 0 };
    cr_assert(!rw_rewrite(img, p, &pl, &o, in, &st, err, sizeof err));
    cr_assert(strstr(err, "input"), "%s", err);
    plan_free(&pl);
    cfg_free(p);
    image_close(img);
}

Test(rewrite, invert_and_hint_from_the_plan)
{
    image *img;
    cfg_program *p = program_cfg("indjump-dyn", &img);
    image_error ie;
    char err[512];
    /* A conditional branch ending a block, and a jsr, anywhere. */
    uint64_t br = 0, jsr = 0, target = 0;
    for (size_t i = 0; i < p->nprocs && (!br || !jsr); i++) {
        const cfg_proc *f = &p->procs[i];
        for (size_t b = 0; b < f->nblocks; b++) {
            uint32_t w;
            alpha_insn in2;
            cfg_word(p, f->blocks[b].end - 4, &w);
            alpha_decode(w, &in2);
            if (!br && alpha_flow_of(&in2) == FLOW_CBRANCH)
                br = f->blocks[b].end - 4;
        }
        for (size_t c = 0; c < f->ncalls && !jsr; c++) {
            uint32_t w;
            cfg_word(p, f->calls[c].site, &w);
            if ((w >> 26) == 0x1a)
                jsr = f->calls[c].site;
        }
    }
    cr_assert(br && jsr);
    target = cfg_proc_named(p, "main")->start;
    plan pl;
    plan_init(&pl);
    pl.name = "t";
    cr_assert(plan_add_invert(&pl, br));
    cr_assert(plan_add_hint(&pl, jsr, target));
    rw_stats st;
    char *out = rewrite("indjump-dyn", &pl, true, &st);
    cr_assert_geq(st.branches_inverted, 1);
    verify_clean("indjump-dyn", out);
    image *neu = image_open(out, &ie);
    addrmap m;
    cr_assert(addrmap_read(neu, &m, err, sizeof err));
    uint64_t nbr = addrmap_forward(&m, br), njsr = addrmap_forward(&m, jsr), nt = addrmap_forward(&m, target);
    cr_assert(nbr && njsr && nt);
    const uint8_t *ob = image_bytes_at(img, br, 4), *nb = image_bytes_at(neu, nbr, 4);
    cr_assert_eq((ob[3] ^ nb[3]) >> 2, 0x04, "condition not inverted");
    const uint8_t *nj = image_bytes_at(neu, njsr, 4);
    alpha_insn ji;
    alpha_decode((uint32_t)nj[0] | nj[1] << 8 | nj[2] << 16 | (uint32_t)nj[3] << 24, &ji);
    cr_assert_eq(alpha_hint_target(&ji, njsr) & 0xffff, nt & 0xffff, "hint does not predict main");
    addrmap_free(&m);
    image_close(neu);
    unlink(out);
    free(out);
    plan_free(&pl);
    cfg_free(p);
    image_close(img);
}

/* cold-align and cold-offset place the cold area's first block at that
 * offset past a multiple of the alignment, and the cold part gets a symbol
 * of its own. */
Test(rewrite, cold_area_at_its_offset)
{
    image *img;
    cfg_program *p = program_cfg("intloop-dyn", &img);
    image_error ie;
    char err[512];
    const cfg_proc *f = NULL;      /* one whose entry block may end the hot part */
    for (size_t i = 0; i < p->nprocs && !f; i++)
        if (p->procs[i].nblocks >= 2 && !(p->procs[i].flags & CFG_PF_MISSING) &&
            p->procs[i].name && p->procs[i].name[0] != '_' &&
            !(p->procs[i].blocks[0].flags & CFG_BF_LINKS))
            f = &p->procs[i];
    cr_assert_not_null(f);
    for (uint32_t off = 0; off < 8192; off += 0x1a40) {
        plan pl;
        plan_init(&pl);
        pl.name = "t";
        pl.cold_align = 8192;
        pl.cold_offset = off;
        plan_proc *pp = plan_add_proc(&pl, f->start, 0);
        cr_assert(pp && plan_add_block(pp, f->blocks[0].start, 0));
        plan_set_split(pp);
        rw_stats st;
        char *out = rewrite("intloop-dyn", &pl, false, &st);
        verify_clean("intloop-dyn", out);
        image *neu = image_open(out, &ie);
        addrmap m;
        cr_assert(addrmap_read(neu, &m, err, sizeof err));
        uint64_t cold = addrmap_forward(&m, f->blocks[1].start);
        cr_assert_eq(cold % 8192, off, "cold area at 0x%llx, not at offset %u (%s, %zu moved)",
                     (unsigned long long)cold, off, f->name, st.moved);
        /* Profiles of the new image name the cold part after its procedure. */
        char want[256];
        snprintf(want, sizeof want, "%s.cold", f->name);
        const image_symbol *cs = image_function_at(neu, cold);
        cr_assert(cs && !strcmp(cs->name, want) && cs->value == cold && cs->size > 0,
                  "the cold part's symbol: %s", cs ? cs->name : "none");
        addrmap_free(&m);
        image_close(neu);
        unlink(out);
        free(out);
        plan_free(&pl);
    }
    cfg_free(p);
    image_close(img);
}

/* A gap puts exactly that many bytes of nops before a procedure's hot part:
 * the procedure after it moves by the gap, and the new image verifies. */
Test(rewrite, gap_before_a_procedure)
{
    image *img;
    cfg_program *p = program_cfg("intloop-dyn", &img);
    image_error ie;
    char err[512];
    const cfg_proc *f[2] = { NULL, NULL };
    for (size_t i = 0, n = 0; i < p->nprocs && n < 2; i++)
        if (p->procs[i].nblocks && !(p->procs[i].flags & CFG_PF_MISSING) && p->procs[i].name &&
            p->procs[i].name[0] != '_')
            f[n++] = &p->procs[i];
    cr_assert(f[0] && f[1]);
    uint64_t at[2];
    for (uint32_t k = 0; k < 2; k++) {
        plan pl;
        plan_init(&pl);
        pl.name = "t";
        cr_assert(plan_add_proc(&pl, f[0]->start, 32));
        plan_proc *pp = plan_add_proc(&pl, f[1]->start, 32);
        cr_assert(pp);
        pp->gap = k * 4160;
        rw_stats st;
        char *out = rewrite("intloop-dyn", &pl, false, &st);
        rw_verify_stats vs = verify_clean("intloop-dyn", out);
        cr_assert_geq(vs.pads, k * 4160 / 4);
        image *neu = image_open(out, &ie);
        addrmap m;
        cr_assert(addrmap_read(neu, &m, err, sizeof err));
        at[k] = addrmap_forward(&m, f[1]->start);
        addrmap_free(&m);
        image_close(neu);
        unlink(out);
        free(out);
        plan_free(&pl);
    }
    cr_assert_eq(at[1] - at[0], 4160, "%s moved by %lld bytes, not by its gap", f[1]->name,
                 (long long)(at[1] - at[0]));
    cfg_free(p);
    image_close(img);
}

/* Damaged images: whatever image_open and cfg_build accept, the rewriter
 * must either rewrite or refuse with a message, never crash. */
Test(rewrite, survives_damaged_images)
{
    char in[512];
    program_path("funcptr-dyn", in, sizeof in);
    size_t n;
    uint8_t *orig = slurp(in, &n), *b = malloc(n);
    uint64_t s = 4242;
    char out[] = "/tmp/cpo-rw-damaged-XXXXXX";
    int fd = mkstemp(out);
    cr_assert_geq(fd, 0);
    close(fd);
    size_t tried = 0;
    for (int round = 0; round < 150; round++) {
        memcpy(b, orig, n);
        int flips = 1 + (int)((s = s * 6364136223846793005ull + 1) >> 60);
        for (int k = 0; k < flips; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)((s >> 33) % (n < 65536 ? n : 65536));
            b[at] ^= (uint8_t)(1u << ((s >> 20) & 7));
        }
        image_error ie;
        image *img = image_open_mem(b, n, "damaged", &ie);
        if (!img)
            continue;
        char err[512];
        cfg_program *p = cfg_build(img, err, sizeof err);
        if (p) {
            plan pl;
            if (plan_random(p, (uint64_t)round, &pl)) {
                rw_stats st;
                rw_options o = { .check = true };
                if (!rw_rewrite(img, p, &pl, &o, out, &st, err, sizeof err))
                    cr_assert_neq(err[0], 0, "refused without a message");
                tried++;
                plan_free(&pl);
            }
            cfg_free(p);
        }
        image_close(img);
    }
    cr_assert_gt(tried, 10);
    unlink(out);
    free(orig);
    free(b);
}

Test(rewrite, plan_check_without_writing)
{
    char in[512];
    program_path("alu-dyn", in, sizeof in);
    image_error ie;
    image *img = image_open(in, &ie);
    char err[512];
    cfg_program *p = cfg_build(img, err, sizeof err);
    plan pl;
    cr_assert(plan_random(p, 9, &pl));
    cr_assert(rw_plan_check(img, p, &pl, err, sizeof err), "%s", err);
    plan_free(&pl);
    const char bad[] = "cpo-layout 1\nproc 0x120000004\n";
    cr_assert(plan_parse(bad, sizeof bad - 1, "bad", &pl, err, sizeof err));
    cr_assert(!rw_plan_check(img, p, &pl, err, sizeof err));
    cr_assert(strstr(err, "bad:2:"), "%s", err);
    plan_free(&pl);
    cfg_free(p);
    image_close(img);
}
