/*
 * rewriter/runtime/rt.h: the data region the instrumented image carries,
 * shared by the runtime (compiled for Alpha into a blob) and the rewriter
 * that fills it in.  All offsets are from the region's start; all fields
 * 64-bit little-endian.
 */
#ifndef RT_H
#define RT_H

#define RT_SSP        0    /* shadow stack pointer: the running activation's slot */
#define RT_PID        8    /* pid of the process that started the program */
#define RT_ENVP       16   /* its environment */
#define RT_SAVE       24   /* 4 words the start-up code saves registers in */
#define RT_THREADED   56   /* non-zero once a thread was created */
#define RT_NPROCS     64
#define RT_PROCS      72   /* offset of the procedure table */
#define RT_HEAD       80   /* offset and length of the text before the procedures */
#define RT_HEADLEN    88
#define RT_ENVNAME    96   /* offset and length of "CPO_PROFILE_OUT=" */
#define RT_ENVLEN     104
#define RT_GUARD      112  /* pages below and above the shadow stack, made */
#define RT_GUARD2     136  /* inaccessible at start-up */
#define RT_MSG        120  /* offset and length of what to say on stderr when */
#define RT_MSGLEN     128  /* threads made the counts unusable */
#define RT_VFORK      144  /* a child sharing memory was started (vfork) */
#define RT_COUNTERS   152  /* the counters: where, and how many bytes */
#define RT_COUNTLEN   160
#define RT_LAST       168  /* the cycle counter when a path last started or stopped */
#define RT_ERRMSG     176  /* offset and length of what to say on stderr when */
#define RT_ERRLEN     184  /* no file can be made, before the name */
#define RT_MODE       192  /* what the binary keeps: RT_M_PATHS | RT_M_CCT */
#define RT_ARENA      200  /* the calling context tree's nodes: where they start, */
#define RT_AFREE      208  /* the first free byte, the end (offsets) */
#define RT_AEND       216
#define RT_NNODES     224  /* nodes made, the root included */
#define RT_CUT        232  /* non-zero once the arena was full */
#define RT_CHEAD      240  /* offset and length of the tree's "cpo-cct 1 ..." head */
#define RT_CHEADLEN   248
#define RT_CTAIL      256  /* offset and length of its "end" line */
#define RT_CTAILLEN   264
#define RT_CUTMSG     272  /* offset and length of what to say when the arena */
#define RT_CUTLEN     280  /* was full */
#define RT_HLOST      288  /* path runs a full hashed table could not keep */
#define RT_LOSTMSG    296  /* offset and length of what to say then */
#define RT_LOSTLEN    304
#define RT_TB         312  /* the running thread's block: the region itself
                              until a thread starts, then 0 (rt_tblock) */
#define RT_NT         320  /* threads with a block of their own */
#define RT_TTAB       328  /* offset of their table: {unique value, block} */
#define RT_TMANY      336  /* non-zero once a thread found the table full */
#define RT_MANYMSG    344  /* offset and length of what to say then */
#define RT_MANYLEN    352
#define RT_LOCK       360  /* held while the tree or a hashed table changes */
#define RT_TCAP       368  /* non-zero: the inserted code looks up threads' blocks */
#define RT_HDRSIZE    376

#define RT_NTHREADS   256  /* entries of the thread table */
/* A thread's block: its RT_SSP and RT_LAST at the region's offsets, in
 * the first page; its shadow stack after, its RT_SLACK slack slots
 * first, a guard page last. */
#define RT_TSLOTS     (1ul << 16)

#define RT_M_PATHS    1
#define RT_M_CCT      2

/* A shadow-stack slot: the path sum, the cycles the path ran so far, and
 * the stack pointer at the activation's entry; with a calling context
 * tree also the activation's node and the call site it is calling from
 * now (an index into its procedure's sites, 0 when not in a call). */
#define RT_SLOT       32
#define RT_CSLOT      48
#define RT_SLACK      1024 /* slots below the first, for unbalanced pops */
#define RT_S_SUM      0
#define RT_S_CYCLES   8
#define RT_S_SP       16
#define RT_S_NODE     24
#define RT_S_SITE     32
/* One per instrumented procedure: its counters (count and cycles per
 * path, 16 bytes), and its `proc` line. */
#define RT_P_COUNTS   0
#define RT_P_NPATHS   8
#define RT_P_LINE     16
#define RT_P_LINELEN  24
#define RT_P_ADDR     32   /* the procedure's link address */
#define RT_P_NAME     40   /* offset and length of its name, escaped */
#define RT_P_NAMELEN  48
#define RT_P_NSITES   56   /* its call sites */
#define RT_P_SITES    64   /* offset of their link addresses (8 bytes each) */
#define RT_P_HCAP     72   /* 0: a dense table of count and cycles per path;
                              else a hashed one of this many {path + 1,
                              count, cycles} (more paths than a dense one
                              holds) */
#define RT_PSIZE      80

/* A node of the calling context tree, in the arena: the procedure (index
 * in the table + 1; 0 for the root), its parent, the call site in the
 * parent (index), calls, cycles, how many child slots it has (sites + 1:
 * slot 0 is for entries not made by a call), the next record at the
 * same site of the parent, its number; then the child slots.  A record
 * whose first word has the top bit set is a back edge (recursion) from
 * the node it hangs under to an ancestor: {tag, from, site, count, to, -,
 * next, -}. */
#define RT_N_ID       0
#define RT_N_PARENT   8
#define RT_N_SITE     16
#define RT_N_CALLS    24
#define RT_N_CYCLES   32
#define RT_N_NSL      40
#define RT_N_NEXT     48
#define RT_N_INDEX    56
#define RT_N_CHILD    64
#define RT_BACK_SIZE  64
#define RT_BK_FROM    8
#define RT_BK_COUNT   24
#define RT_BK_TO      32
/* A link from the end of one chunk of the arena to the next: {tag, next
 * chunk}.  Chunks after the region's are mapped, RT_CHUNK bytes or more. */
#define RT_LINK_TAG   (1ul << 62)
#define RT_LINK_SIZE  16
#define RT_CHUNK      (4ul << 20)

/* Blob layout: entry points and the words the rewriter patches. */
#define RT_B_START    0    /* br to the start-up code (the new e_entry) */
#define RT_B_HOOK     4    /* br to the system-call hook */
#define RT_B_FINI     8    /* br to the finaliser (the new DT_FINI) */
#define RT_B_CHILD    12   /* br to the clearing of a forked child's counters */
#define RT_B_ENTER    16   /* br to the tree's slow entry (a context not seen) */
#define RT_B_COUNT    20   /* br to the counting of a path in a hashed table */
#define RT_B_TBLOCK   24   /* br to the lookup of the running thread's block */
#define RT_B_THREAD   28   /* br to the note that threads are about to start */
#define RT_B_REGION   32   /* region address - blob address */
#define RT_B_ENTRY    40   /* original entry (moved) - blob address */
#define RT_B_REGABS   48   /* the region's address, for the inserted code */
#define RT_B_OFINI    56   /* original DT_FINI (moved) - blob address, or 0 */
#define RT_B_SIZE     64   /* the words above */

#endif
