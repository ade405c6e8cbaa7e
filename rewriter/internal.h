/*
 * rewriter/internal.h: the state the rewriter's files share.
 *
 * rewrite.c drives: layout.c checks the plan and lays out the blocks,
 * emit.c writes the new code, patch.c fixes what refers to code elsewhere,
 * ehframe.c regenerates the unwind tables, elfout.c writes the file.  All addresses are virtual; `out` is the
 * output file being built (a copy of the input, patched, then extended).
 */
#ifndef REWRITER_INTERNAL_H
#define REWRITER_INTERNAL_H

#include "common/le.h"
#include "alpha/insn.h"
#include "rewriter/addrmap.h"
#include "rewriter/instrument.h"
#include "rewriter/rewrite.h"

#define ALPHA_NOP_WORD  0x47ff041fu   /* bis $31,$31,$31 */
#define ALPHA_BR_WORD   0xc3e00000u   /* br $31,.+4 */
/* call_pal bugchk: traps in user mode (SIGTRAP); what check mode writes
 * over moved code so a stale reference faults at once. */
#define ALPHA_TRAP_WORD 0x00000081u

typedef struct rw_item {        /* one block, as emitted */
    uint32_t proc, block;
    uint32_t align;             /* requested alignment (0 = none) */
    uint32_t gap;               /* bytes to leave before it (a plan's gap) */
    bool cold;
    bool rigid;                 /* its procedure moves whole */
    bool invert;                /* emit the final branch inverted */
    bool drop;                  /* drop the final BR */
    bool addbr;                 /* append `br brto` */
    uint64_t brto;              /* original address the added br goes to */
    uint32_t pad;               /* bytes of padding before the block */
    uint32_t size;              /* bytes emitted after the padding */
    uint32_t ins;               /* of which inserted code (instrument.c) */
    uint64_t addr;              /* new address of the first instruction */
} rw_item;

typedef struct rw_proc {
    uint8_t reason;             /* rw_reason: RW_MOVED, or why pinned */
    uint8_t rigid;              /* moved whole: why (0 = free to reorder) */
    char detail[120];
    const plan_proc *pp;        /* its plan entry, or NULL */
    uint32_t align;
    uint64_t hot_start, hot_end, cold_start, cold_end;  /* new ranges */
    uint32_t hot_first, hot_n, cold_first, cold_n;      /* its items */
} rw_proc;

typedef struct rw_ctx {
    const image *img;
    const cfg_program *prog;
    const plan *pl;
    const rw_options *opt;
    rw_stats *st;
    char *err;
    size_t errlen;

    rw_proc *procs;             /* parallel to prog->procs */
    rw_item *items;
    size_t nitems;
    uint64_t *inverts;          /* sorted plan inverts */
    size_t ninverts;
    bool repin;                 /* a pin was added this round */

    uint64_t code_lo, code_hi;  /* span of the code sections */
    uint64_t *map;              /* (a - code_lo) / 4 -> new address, 0 */

    uint64_t base;              /* vaddr - offset of the first PT_LOAD */
    uint64_t seg_addr, seg_off; /* the new segment */
    size_t phnum;               /* program headers in the output */
    uint64_t text_addr;
    size_t text_size;
    uint8_t *text;

    uint8_t *eh;                /* the new .eh_frame */
    size_t eh_size;
    uint64_t eh_addr;
    uint8_t *ehhdr;             /* the new .eh_frame_hdr */
    size_t ehhdr_size;
    uint64_t ehhdr_addr;
    const image_section *old_eh, *old_ehhdr;
    struct eh_frame *ehs;       /* the parsed old .eh_frame (ehframe.c) */
    struct lsda *lsdas;         /* its FDEs' LSDAs we can rewrite, by FDE */
    uint8_t *gxt;               /* the new call-site tables */
    size_t gxt_size;
    uint64_t gxt_addr;

    uint8_t *out;               /* the output file */
    size_t out_size;

    addrmap am;
    struct rw_instr *ins;       /* instrumentation, or NULL */
} rw_ctx;

/* rewrite.c */
bool rw_fail(rw_ctx *cx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rw_pin(rw_ctx *cx, const cfg_proc *f, rw_reason why, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Move f only as a whole (its internal distances must not change). */
void rw_rigid(rw_ctx *cx, const cfg_proc *f, rw_reason why, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
uint64_t rw_map(const rw_ctx *cx, uint64_t old);    /* new address, or old */
bool rw_moved(const rw_ctx *cx, uint64_t old);
/* Pointer to the output bytes that hold [addr, addr+len), or NULL. */
uint8_t *rw_out_at(rw_ctx *cx, uint64_t addr, size_t len);

const cfg_proc *rw_proc_of(const rw_ctx *cx, uint64_t addr);
bool rw_is_moved(const rw_ctx *cx, const cfg_proc *f);

/* layout.c */
uint32_t rw_default_align(uint64_t start);
bool rw_check_plan(rw_ctx *cx);     /* the plan against the CFG */
bool rw_layout(rw_ctx *cx);         /* items, addresses, the old-to-new map */
uint32_t rw_block_ins_bytes(const rw_ctx *cx, const cfg_block *b);

/* emit.c */
bool rw_emit(rw_ctx *cx);           /* cx->text */
bool rw_patch_pinned(rw_ctx *cx);

/* patch.c */
bool rw_patch_relocs(rw_ctx *cx);
bool rw_patch_symbols(rw_ctx *cx, uint16_t text_shndx);
bool rw_patch_dynamic(rw_ctx *cx);
bool rw_build_addrmap(rw_ctx *cx);
void rw_trap_old_code(rw_ctx *cx);
bool rw_new_build_id(rw_ctx *cx);   /* a build-id of its own */

/* ehframe.c */
bool rw_eh_analyse(rw_ctx *cx);     /* pins what cannot be regenerated */
size_t rw_phnum(const image *img);  /* program headers in the output */
/* Offset in the original .eh_frame below which its unwinder finds no FDE:
 * a static image registers its table from crtbeginT's __EH_FRAME_BEGIN__. */
uint64_t rw_eh_first_visible(const image *img);
bool rw_eh_build(rw_ctx *cx);       /* after layout: cx->eh, cx->ehhdr */
void rw_eh_free(rw_ctx *cx);

/* elfout.c */
bool rw_elf_plan(rw_ctx *cx);       /* choose the new segment's place */
bool rw_elf_write(rw_ctx *cx, const char *path);
bool rw_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);

/* instrument.c */
struct rw_snip;
bool rw_instr_plan(rw_ctx *cx);     /* before the layout: what goes where */
void rw_instr_free(rw_ctx *cx);
const struct rw_snip *rw_snips_at(const rw_ctx *cx, uint64_t at, size_t *n);
uint32_t rw_snip_bytes(const struct rw_snip *s);
/* How far below the program's the stack pointer is before the snippet's
 * word at byte off runs (a spill), for its unwind row. */
int rw_snip_bias(const struct rw_snip *s, uint32_t off);
bool rw_snip_is_head(const struct rw_snip *s);
bool rw_snip_is_after(const struct rw_snip *s);
/* A stub's target (instrument.c, table_snips), 0 for any other snippet. */
uint64_t rw_snip_stub(const struct rw_snip *s);
/* A jump-table entry's new value when it now goes to a stub, else 0. */
uint64_t rw_table_stub(const rw_ctx *cx, uint64_t where, uint64_t to);
uint32_t rw_head_bytes(const rw_ctx *cx, uint64_t at);
/* Where the instruction at old itself went (after code inserted before it). */
uint64_t rw_insn_addr(const rw_ctx *cx, uint64_t old);
/* What the base register of the GPDISP pair at old holds when it runs. */
uint64_t rw_gpdisp_base(const rw_ctx *cx, uint64_t old);
bool rw_instr_emit(rw_ctx *cx, const struct rw_snip *sn, uint64_t pc, uint8_t *p);
void rw_instr_place(rw_ctx *cx, uint64_t addr);     /* the region's address */
void rw_instr_blob(rw_ctx *cx, uint8_t *p);         /* the runtime, filled in */
uint64_t rw_instr_blob_size(const rw_ctx *cx);      /* 0 when not instrumenting */
uint64_t rw_instr_filesz(const rw_ctx *cx);
uint64_t rw_instr_memsz(const rw_ctx *cx);
bool rw_instr_write(const rw_ctx *cx, int fd, uint64_t at);   /* the region's bytes */
void rw_instr_stats(const rw_ctx *cx, rw_stats *st);
void rw_instr_fini(rw_ctx *cx);     /* DT_FINI to the runtime's finaliser */
/* The words of ops run with scratch registers reg at pc, into w (NULL:
 * only counted): for tests of the inserted code. */
uint32_t rw_instr_ops_words(const rw_instr *in, const rw_op *ops, size_t nops, const uint8_t reg[3],
                            uint64_t pc, uint32_t *w);
/* snippet.c: a snippet's words at pc into w (NULL: only their number);
 * cond is the branch word a split tests. */
uint32_t rw_snip_words(const rw_instr *in, const rw_snip *sn, uint32_t cond, uint64_t pc, uint32_t *w);
/* rtregion.c: the region's contents, at the end of the plan. */
bool rw_instr_build_region(rw_ctx *cx);
enum { RW_OP_PUSH, RW_OP_ADD, RW_OP_END, RW_OP_BACK, RW_OP_HOOK, RW_OP_THREAD, RW_OP_CHILD, RW_OP_SITE };

/* Little-endian fields of the image (common/le.h). */
#define rw_le32 le_get32
#define rw_le64 le_get64
#define rw_put32 le_put32
#define rw_put64 le_put64

#endif
