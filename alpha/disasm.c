/*
 * alpha/disasm.c: instruction text in the syntax of GNU objdump.
 *
 * We print from our own table and match objdump's choices word for word
 * (its pseudo-ops, its operand order, hex literals, "zero" for R31) so the
 * two can be compared over whole programs; that comparison is what checks
 * the table.  Where objdump refuses a word because a field it expects to be
 * 31 is not (for example CVTTQ with Fa != F31), we print ".long" as it does,
 * even though the machine still executes such a word.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alpha/insn.h"

const char *const alpha_ireg_names[32] = {
    "v0", "t0", "t1", "t2", "t3", "t4", "t5", "t6",
    "t7", "s0", "s1", "s2", "s3", "s4", "s5", "fp",
    "a0", "a1", "a2", "a3", "a4", "a5", "t8", "t9",
    "t10", "t11", "ra", "t12", "at", "gp", "sp", "zero"
};

typedef struct {
    char *buf;
    size_t size, len;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = o->len < o->size ? o->size - o->len : 0;
    int n = vsnprintf(o->buf + (room ? o->len : 0), room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len += (size_t)n;
}

static const char *ireg(unsigned r) { return alpha_ireg_names[r & 31]; }

static void freg(out *o, unsigned r) { put(o, "$f%u", r & 31); }

/* An integer or FP register according to the field's role. */
static void reg(out *o, unsigned role, unsigned r)
{
    if (role == RR_FR || role == RR_FW || role == RR_FRW)
        freg(o, r);
    else
        put(o, "%s", ireg(r));
}

/* objdump prints literals and unsigned hints with "%#x": 0 stays "0". */
static void hex(out *o, unsigned v) { put(o, v ? "%#x" : "0", v); }

static void target(out *o, uint64_t addr, alpha_symbolizer sym, void *ctx)
{
    char name[256];
    put(o, "%llx", (unsigned long long)addr);
    if (sym && sym(ctx, addr, name, sizeof name))
        put(o, " <%s>", name);
}

static int invalid(out *o, uint32_t w)
{
    o->len = 0;
    put(o, ".long %#x", w);
    return (int)o->len;
}

/* Fields the table marks unused must hold 31, or objdump rejects the word. */
static bool unused_ok(const alpha_insn *i)
{
    const alpha_opdef *d = i->op;
    if (d->ra == RR_NONE && i->ra != 31)
        return false;
    if (d->format == AF_OPR || d->format == AF_FPOPR || d->format == AF_MFC) {
        if (d->rb == RR_NONE && i->rb != 31 && !i->islit)
            return false;
        if (d->format != AF_MFC && d->rc == RR_NONE && i->rc != 31)
            return false;
    }
    return true;
}

static void opr_b(out *o, const alpha_insn *i)
{
    if (i->islit)
        hex(o, i->lit);
    else
        put(o, "%s", ireg(i->rb));
}

static int dis_opr(out *o, const alpha_insn *i)
{
    const char *n = i->op->name;
    bool za = i->ra == 31;

    if (!strcmp(n, "bis")) {
        if (za && !i->islit && i->rb == 31 && i->rc == 31)
            return put(o, "nop"), 0;
        if (za && !i->islit && i->rb == 31)
            return put(o, "clr\t%s", ireg(i->rc)), 0;
        if (za)
            return put(o, "mov\t"), opr_b(o, i), put(o, ",%s", ireg(i->rc)), 0;
        if (!i->islit && i->ra == i->rb)
            return put(o, "mov\t%s,%s", ireg(i->ra), ireg(i->rc)), 0;
    }
    if (za) {
        static const char *const zero_forms[][2] = {
            { "addl", "sextl" }, { "subl", "negl" }, { "subq", "negq" },
            { "subl/v", "negl/v" }, { "subq/v", "negq/v" }, { "ornot", "not" },
        };
        for (size_t k = 0; k < sizeof zero_forms / sizeof zero_forms[0]; k++)
            if (!strcmp(n, zero_forms[k][0]))
                return put(o, "%s\t", zero_forms[k][1]), opr_b(o, i), put(o, ",%s", ireg(i->rc)), 0;
    }
    if (!strcmp(n, "implver")) {
        if (!i->islit || i->lit != 1)
            return -1;
        return put(o, "implver\t%s", ireg(i->rc)), 0;
    }
    if (!strcmp(n, "ftoit") || !strcmp(n, "ftois")) {
        put(o, "%s\t", n);
        freg(o, i->ra);
        return put(o, ",%s", ireg(i->rc)), 0;
    }
    /* objdump prefers these alias spellings to the Handbook's names. */
    if (!strcmp(n, "bis"))
        n = "or";
    else if (!strcmp(n, "bic"))
        n = "andnot";
    put(o, "%s\t", n);
    if (i->op->ra != RR_NONE)
        put(o, "%s,", ireg(i->ra));
    opr_b(o, i);
    put(o, ",%s", ireg(i->rc));
    return 0;
}

static int dis_fp(out *o, const alpha_insn *i)
{
    const alpha_opdef *d = i->op;
    const char *n = d->name, *q = alpha_fp_suffix(i);
    if (!q)
        return -1;
    if (!strcmp(n, "mt_fpcr") || !strcmp(n, "mf_fpcr")) {
        if (i->ra != i->rb || i->ra != i->rc)
            return -1;
        put(o, "%s\t", n);
        return freg(o, i->ra), 0;
    }
    if (!strcmp(n, "cpys") || !strcmp(n, "cpysn")) {
        bool pos = n[4] == 0;
        if (pos && i->ra == 31 && i->rb == 31 && i->rc == 31)
            return put(o, "fnop"), 0;
        if (pos && i->ra == 31 && i->rb == 31)
            return put(o, "fclr\t"), freg(o, i->rc), 0;
        if (pos && i->ra == 31)
            return put(o, "fabs\t"), freg(o, i->rb), put(o, ","), freg(o, i->rc), 0;
        if (i->ra == i->rb)
            return put(o, pos ? "fmov\t" : "fneg\t"), freg(o, i->ra), put(o, ","), freg(o, i->rc), 0;
    }
    /* SUBx with Fa = F31 is NEGx, for the qualifiers objdump knows. */
    if (i->ra == 31 && n[0] == 's' && n[1] == 'u' && n[2] == 'b' &&
        (!*q || !strcmp(q, "/su") || !strcmp(q, "/sui") || !strcmp(q, "/s")) &&
        !(d->opcode == 0x15 && !strcmp(q, "/su")) && !(d->opcode == 0x15 && !strcmp(q, "/sui")) &&
        !(d->opcode == 0x16 && !strcmp(q, "/s"))) {
        put(o, "neg%c%s\t", n[3], q);
        return freg(o, i->rb), put(o, ","), freg(o, i->rc), 0;
    }
    put(o, "%s%s\t", n, q);
    if (d->ra == RR_IR) {              /* ITOFx: integer source */
        put(o, "%s,", ireg(i->ra));
        return freg(o, i->rc), 0;
    }
    if (d->ra != RR_NONE)
        freg(o, i->ra), put(o, ",");
    freg(o, i->rb);
    put(o, ",");
    freg(o, i->rc);
    return 0;
}

int alpha_disasm(const alpha_insn *i, uint64_t pc, char *buf, size_t size,
                 alpha_symbolizer sym, void *ctx)
{
    out o = { buf, size, 0 };
    if (size)
        buf[0] = 0;
    const alpha_opdef *d = i->op;
    if (!d || !unused_ok(i))
        return invalid(&o, i->word);

    switch (d->format) {
    case AF_PAL:
        if (d->func == 0xffffffff)
            put(&o, "call_pal\t%#x", i->func);
        else
            put(&o, "%s", d->name);
        break;
    case AF_RESERVED:
        put(&o, "%s\t", d->name);
        hex(&o, i->func);
        break;
    case AF_MEM:
        if (d->opcode == 0x0b && i->ra == 31) {
            put(&o, "unop");
            break;
        }
        put(&o, "%s\t", d->name);
        reg(&o, d->ra, i->ra);
        if ((d->flags & OPF_ADDR) && i->rb == 31)
            put(&o, ",%d", i->disp);
        else
            put(&o, ",%d(%s)", i->disp, ireg(i->rb));
        break;
    case AF_MFC:
        if (d->flags & OPF_NOARG)
            put(&o, "%s", d->name);
        else if (d->flags & OPF_PREFETCH)
            put(&o, "%s\t(%s)", d->name, ireg(i->rb));
        else if (!strcmp(d->name, "rpcc") && i->rb != 31)
            put(&o, "%s\t%s,%s", d->name, ireg(i->ra), ireg(i->rb));
        else
            put(&o, "%s\t%s", d->name, ireg(i->ra));
        break;
    case AF_JMP: {
        unsigned hint = (unsigned)i->disp & 0x3fff;
        if (d->flow == FLOW_RETURN || d->flow == FLOW_COROUTINE) {
            if (d->flow == FLOW_RETURN && i->ra == 31 && i->rb == REG_RA && hint == 1) {
                put(&o, "ret");
                break;
            }
            put(&o, "%s\t%s,(%s),", d->flow == FLOW_RETURN ? "ret" : "jcr",
                ireg(i->ra), ireg(i->rb));
            hex(&o, hint);
            break;
        }
        if (d->flow == FLOW_JUMP && i->ra == 31 && hint == 0) {
            put(&o, "jmp\t(%s)", ireg(i->rb));
            break;
        }
        put(&o, "%s\t%s,(%s),", d->name, ireg(i->ra), ireg(i->rb));
        target(&o, alpha_hint_target(i, pc), sym, ctx);
        break;
    }
    case AF_BRA:
        if (d->flow == FLOW_BRANCH && i->ra == 31) {
            put(&o, "br\t");
        } else {
            put(&o, "%s\t", d->name);
            reg(&o, d->ra, i->ra);
            put(&o, ",");
        }
        target(&o, alpha_branch_target(i, pc), sym, ctx);
        break;
    case AF_OPR:
        if (dis_opr(&o, i) < 0)
            return invalid(&o, i->word);
        break;
    case AF_FPOPR:
        if (dis_fp(&o, i) < 0)
            return invalid(&o, i->word);
        break;
    }
    return (int)o.len;
}
