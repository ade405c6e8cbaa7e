/* Unit tests for alpha/: the table, the codec, the printer, the helpers. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "alpha/ev5.h"
#include "alpha/insn.h"

static const char *dis(uint32_t w, uint64_t pc)
{
    static char buf[128];
    alpha_insn in;
    alpha_decode(w, &in);
    alpha_disasm(&in, pc, buf, sizeof buf, NULL, NULL);
    return buf;
}

/* Words and texts taken from alpha-linux-gnu-objdump output of gcc code. */
Test(alpha, disasm_matches_objdump_samples)
{
    static const struct { uint32_t w; const char *text; } cases[] = {
        { 0x27bb0002, "ldah\tgp,2(t12)" },
        { 0x23bd7b80, "lda\tgp,31616(gp)" },
        { 0x23deffc0, "lda\tsp,-64(sp)" },
        { 0xa77d8010, "ldq\tt12,-32752(gp)" },
        { 0x47f00409, "mov\ta0,s0" },
        { 0x4921f621, "zapnot\ts0,0xf,t0" },
        { 0x4d207011, "mull\ts0,0x3,a1" },
        { 0x409797a2, "cmpule\tt3,0xbc,t1" },
        { 0x40220441, "s4addq\tt0,t1,t0" },
        { 0x8d7e0030, "ldt\t$f11,48(sp)" },
        { 0x5beb17ca, "cvtqt\t$f11,$f10" },
        { 0x60000000, "trapb" },
        { 0x5bebd58c, "cvtst/s\t$f11,$f12" },
        { 0x594ab412, "addt/su\t$f10,$f10,$f18" },
        { 0x5d4a0412, "fmov\t$f10,$f18" },
        { 0x6bfa8001, "ret" },
        { 0x2ffe0000, "unop" },
        { 0x47ff041f, "nop" },
        { 0x47e03402, "mov\t0x1,t1" },
        { 0x00000083, "callsys" },
        { 0x0000009e, "rduniq" },
        { 0x00000099, "call_pal\t0x99" },
        { 0x203f0005, "lda\tt0,5" },
        { 0x6be10000, "jmp\t(t0)" },
        { 0x04000000, ".long 0x4000000" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        cr_expect_str_eq(dis(cases[i].w, 0x120000000), cases[i].text, "word %08x", cases[i].w);
}

Test(alpha, branch_and_hint_targets)
{
    cr_expect_str_eq(dis(0xe4400004, 0x1200004cc), "beq\tt1,1200004e0");
    cr_expect_str_eq(dis(0x6b5b4000, 0x1200004b4), "jsr\tra,(t12),1200004b8");
    cr_expect_str_eq(dis(0xc3e00001, 0x120000000), "br\t120000008");
    cr_expect_str_eq(dis(0xd35fffff, 0x120000010), "bsr\tra,120000010");
}

Test(alpha, encode_inverts_decode)
{
    /* A pseudo-random walk over all 2^32 words' shapes, plus edge words. */
    uint32_t x = 0x12345678;
    for (int k = 0; k < 200000; k++) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        alpha_insn in;
        alpha_decode(x, &in);
        cr_assert_eq(alpha_encode(&in), x, "word %08x", x);
    }
}

Test(alpha, every_row_round_trips)
{
    /* Build each row's plain encoding and check decode finds that row. */
    for (size_t i = 0; i < alpha_optable_len; i++) {
        const alpha_opdef *d = &alpha_optable[i];
        if (d->format == AF_PAL && d->func == 0xffffffff)
            continue;
        uint32_t w = (uint32_t)d->opcode << 26;
        switch (d->format) {
        case AF_PAL: w |= d->func; break;
        case AF_OPR: w |= (d->func << 5) | (31u << 21) | (1u << 16) | 2; break;
        case AF_FPOPR: w |= (d->func << 5) | (31u << 21) | (1u << 16) | 2; break;
        case AF_MFC: w |= d->func | (31u << 21) | (1u << 16); break;
        case AF_JMP: w |= d->func << 14; break;
        default: break;
        }
        alpha_insn in;
        alpha_decode(w, &in);
        cr_assert(in.op != NULL, "row %s (word %08x) not decoded", d->name, w);
        cr_expect_eq(in.op, d, "word %08x decodes to %s, not %s", w, in.op->name, d->name);
        cr_expect_eq(alpha_lookup(d->name), (int)i, "lookup %s", d->name);
    }
}

Test(alpha, fp_qualifiers)
{
    alpha_insn in;
    alpha_decode(0x5be0f5e1, &in);   /* cvttq/svi */
    cr_expect_str_eq(alpha_fp_suffix(&in), "/svi");
    alpha_decode(0x5be017e1, &in);   /* trap bits no CVTTQ form allows */
    cr_expect_null(in.op);
    alpha_decode(0x582234a3, &in);   /* cmpteq with /u: not a valid qualifier */
    cr_expect_null(in.op);
}

Test(alpha, register_sets)
{
    alpha_insn in;
    alpha_regset u, d;
    alpha_decode(0x40220441, &in);   /* s4addq t0,t1,t0 */
    alpha_regs(&in, &u, &d);
    cr_expect_eq(u, (1ull << 1) | (1ull << 2));
    cr_expect_eq(d, 1ull << 1);
    alpha_decode(0x8d7e0030, &in);   /* ldt $f11,48(sp) */
    alpha_regs(&in, &u, &d);
    cr_expect_eq(u, 1ull << REG_SP);
    cr_expect_eq(d, 1ull << ALPHA_FREG(11));
    alpha_decode(0x47ff041f, &in);   /* nop: R31 never appears */
    alpha_regs(&in, &u, &d);
    cr_expect_eq(u | d, 0);
    alpha_decode(0x44410483, &in);   /* cmoveq t1,t0,t2 reads its destination */
    alpha_regs(&in, &u, &d);
    cr_expect(u & (1ull << 3));
    alpha_decode(0x00000083, &in);   /* callsys: v0 and a0-a5 in, v0/a3 out */
    alpha_regs(&in, &u, &d);
    cr_expect(u & (1ull << REG_V0));
    cr_expect(d & (1ull << REG_A3));
}

Test(alpha, field_setters)
{
    uint32_t w = 0xe4400004;         /* beq t1,+4 words */
    cr_assert(alpha_set_branch_target(&w, 0x1000, 0x2000));
    alpha_insn in;
    alpha_decode(w, &in);
    cr_expect_eq(alpha_branch_target(&in, 0x1000), 0x2000);
    cr_expect_not(alpha_set_branch_target(&w, 0x1000, 0x1000 + (1ull << 23)), "out of range");
    cr_expect_not(alpha_set_branch_target(&w, 0x1000, 0x2002), "misaligned");
    cr_assert(alpha_invert_branch(&w));
    alpha_decode(w, &in);
    cr_expect_str_eq(in.op->name, "bne");
    cr_expect_eq(alpha_branch_target(&in, 0x1000), 0x2000);

    uint32_t j = 0x6b5b4000;         /* jsr ra,(t12) */
    bool exact;
    cr_assert(alpha_set_hint_target(&j, 0x1000, 0x1400, &exact));
    cr_expect(exact);
    alpha_decode(j, &in);
    cr_expect_eq(alpha_hint_target(&in, 0x1000), 0x1400);
    cr_assert(alpha_set_hint_target(&j, 0x1000, 0x1000 + (1 << 20), &exact));
    cr_expect_not(exact);
    uint32_t r = 0x6bfa8001;         /* ret: no hint to set */
    cr_expect_not(alpha_set_hint_target(&r, 0, 0x100, NULL));

    uint32_t m = 0xa77d8010;
    cr_assert(alpha_set_mem_disp(&m, -4));
    alpha_decode(m, &in);
    cr_expect_eq(in.disp, -4);
    cr_expect_not(alpha_set_mem_disp(&m, 40000));
}

Test(alpha, ev5_parameters)
{
    ev5_params p;
    char err[128];
    uint32_t v;
    ev5_defaults(&p);
    cr_expect_eq(p.dcache.size, 8192);
    cr_assert(ev5_set(&p, "dcache.size=16384", err, sizeof err), "%s", err);
    cr_expect_eq(p.dcache.size, 16384);
    cr_assert(ev5_get(&p, "lat.imulq", &v));
    cr_expect_eq(v, 12);
    cr_expect_not(ev5_set(&p, "no.such=1", err, sizeof err));
    cr_expect(strstr(err, "no.such") != NULL);
    cr_expect_not(ev5_set(&p, "lat.load=abc", err, sizeof err));
    cr_expect_not(ev5_set(&p, "lat.load", err, sizeof err));
    for (size_t i = 0; i < ev5_param_count; i++)
        cr_expect(!strncmp(ev5_param_table[i].source, "fact:", 5) ||
                  !strncmp(ev5_param_table[i].source, "assumption:", 11),
                  "%s has no source", ev5_param_table[i].name);
    alpha_insn in;
    alpha_decode(0x4d207011, &in);   /* mull */
    cr_expect_eq(ev5_latency(&p, &in), 8);
    cr_expect_eq(ev5_pipe_mask(in.op->pipe), EV5_E0);
}

/* docs/alpha.md lists every EV5 parameter with its source; keep it so. */
Test(alpha, ev5_parameters_documented)
{
    FILE *f = fopen("docs/alpha.md", "r");
    if (!f)
        cr_skip_test("run from the repository root to check docs/alpha.md");
    static char doc[1 << 16];
    size_t n = fread(doc, 1, sizeof doc - 1, f);
    fclose(f);
    doc[n] = 0;
    for (size_t i = 0; i < ev5_param_count; i++) {
        char key[96];
        snprintf(key, sizeof key, "`%s`", ev5_param_table[i].name);
        cr_expect(strstr(doc, key) != NULL, "docs/alpha.md does not list %s", key);
    }
}
