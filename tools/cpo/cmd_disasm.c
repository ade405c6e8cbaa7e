/*
 * cpo disasm IMAGE [--proc NAME] [--verify]
 *
 * One line per instruction of every executable section (or of one
 * procedure): "<address>: <word> <mnemonic> <operands> [<symbol+off>]",
 * with procedure headers as objdump prints them.  --verify also checks that
 * re-encoding every decoded word gives the word back, and says how many did.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/le.h"
#include "alpha/insn.h"
#include "image/image.h"
#include "tools/cpo/commands.h"

#ifndef SHF_EXECINSTR
#define SHF_EXECINSTR 0x4
#endif

static bool symbolize(void *ctx, uint64_t addr, char *buf, size_t size)
{
    return image_symbolize(ctx, addr, buf, size);
}

typedef struct {
    size_t words, unknown, roundtrip_bad;
    bool verify;
} dstats;

static void disasm_range(const image *img, const uint8_t *bytes, uint64_t start,
                         uint64_t end, dstats *st)
{
    char text[320];
    for (uint64_t pc = start; pc + 4 <= end; pc += 4) {
        const uint8_t *p = bytes + (pc - start);
        uint32_t w = le_get32(p);
        const image_symbol *f = image_function_at(img, pc);
        if (f && f->value == pc)
            printf("\n%016llx <%s>:\n", (unsigned long long)pc, f->name);
        alpha_insn in;
        alpha_decode(w, &in);
        st->words++;
        st->unknown += in.op == NULL;
        if (st->verify && alpha_encode(&in) != w) {
            st->roundtrip_bad++;
            fprintf(stderr, "cpo: %llx: encode(decode(%08x)) = %08x\n",
                    (unsigned long long)pc, w, alpha_encode(&in));
        }
        alpha_disasm(&in, pc, text, sizeof text, symbolize, (void *)img);
        printf("%llx: %08x %s\n", (unsigned long long)pc, w, text);
    }
}

int cmd_disasm(int argc, char **argv)
{
    static const struct option opts[] = {
        { "proc", required_argument, 0, 'p' },
        { "verify", no_argument, 0, 'v' },
        { 0, 0, 0, 0 },
    };
    const char *proc = NULL;
    dstats st = { 0 };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "p:v", opts, NULL)) != -1) {
        switch (c) {
        case 'p': proc = optarg; break;
        case 'v': st.verify = true; break;
        default:
            fprintf(stderr, "usage: cpo disasm IMAGE [--proc NAME] [--verify]\n");
            return 2;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "usage: cpo disasm IMAGE [--proc NAME] [--verify]\n");
        return 2;
    }
    image_error err;
    image *img = image_open(argv[optind], &err);
    if (!img) {
        fprintf(stderr, "cpo: %s\n", err.msg);
        return 1;
    }
    int rc = 0;
    if (proc) {
        const image_symbol *s = image_symbol_by_name(img, proc);
        const uint8_t *bytes = s ? image_bytes_at(img, s->value, s->size) : NULL;
        if (!s || s->type != 2 /* STT_FUNC */) {
            fprintf(stderr, "cpo: %s: no procedure named '%s'\n", img->path, proc);
            rc = 1;
        } else if (!bytes || s->size == 0) {
            fprintf(stderr, "cpo: %s: procedure '%s' has no code in the file\n", img->path, proc);
            rc = 1;
        } else {
            disasm_range(img, bytes, s->value, s->value + s->size, &st);
        }
    } else {
        for (size_t i = 0; i < img->nsections; i++) {
            const image_section *sec = &img->sections[i];
            if (!(sec->flags & SHF_EXECINSTR) || !sec->data || !sec->size)
                continue;
            printf("\nDisassembly of section %s:\n", sec->name);
            disasm_range(img, sec->data, sec->addr, sec->addr + sec->size, &st);
        }
    }
    if (rc == 0 && st.verify) {
        fprintf(stderr, "cpo: %zu words, %zu not instructions, %zu failed to re-encode\n",
                st.words, st.unknown, st.roundtrip_bad);
        if (st.roundtrip_bad)
            rc = 1;
    }
    image_close(img);
    return rc;
}
