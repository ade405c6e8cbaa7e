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
#define RT_HDRSIZE    192

/* A shadow-stack slot: the path sum, the cycles the path ran so far, and
 * the stack pointer at the activation's entry. */
#define RT_SLOT       32
/* One per instrumented procedure: its counters (count and cycles per
 * path, 16 bytes), and its `proc` line. */
#define RT_P_COUNTS   0
#define RT_P_NPATHS   8
#define RT_P_LINE     16
#define RT_P_LINELEN  24
#define RT_PSIZE      32

/* Blob layout: entry points and the words the rewriter patches. */
#define RT_B_START    0    /* br to the start-up code (the new e_entry) */
#define RT_B_HOOK     4    /* br to the system-call hook */
#define RT_B_FINI     8    /* br to the finaliser (the new DT_FINI) */
#define RT_B_CHILD    12   /* br to the clearing of a forked child's counters */
#define RT_B_REGION   16   /* region address - blob address */
#define RT_B_ENTRY    24   /* original entry (moved) - blob address */
#define RT_B_REGABS   32   /* the region's address, for the inserted code */
#define RT_B_OFINI    40   /* original DT_FINI (moved) - blob address, or 0 */
#define RT_B_SIZE     48   /* the words above */

#endif
