/*
 * rewriter/runtime/rt.S: the instrumented image's start-up code and its
 * system-call hook.  Position-independent: addresses come from `br` and
 * the deltas the rewriter patches into the words after the entry points.
 */
#include "rt.h"

        .set noreorder
        .set noat
        .text
        .globl rt_blob
rt_blob:
        br      $31, start
        br      $31, hook
        br      $31, fini
        br      $31, child
        br      $31, enter
        br      $31, count
        br      $31, tblock
        br      $31, threads
        .quad   0                       /* RT_B_REGION */
        .quad   0                       /* RT_B_ENTRY */
        .quad   0                       /* RT_B_REGABS */
        .quad   0                       /* RT_B_OFINI */

/* reg = the region, tmp = the blob's address. */
.macro REGION reg, tmp
        br      \tmp, 8f
8:      lda     \tmp, rt_blob-8b(\tmp)
        ldq     \reg, RT_B_REGION(\tmp)
        addq    \tmp, \reg, \reg
.endm

/* Every integer register C code may clobber but sp, kept in
 * the 256 bytes below sp, which it moves. */
.macro SAVEALL
        lda     $30, -256($30)
        .irp    r, 0,1,2,3,4,5,6,7,8,16,17,18,19,20,21,22,23,24,25,26,27,28,29
        stq     $\r, 8*\r($30)
        .endr
.endm

.macro RESTOREALL
        .irp    r, 0,1,2,3,4,5,6,7,8,16,17,18,19,20,21,22,23,24,25,26,27,28,29
        ldq     $\r, 8*\r($30)
        .endr
        lda     $30, 256($30)
.endm

/* C function fn(region, a, b, c), every register kept but at: a, b, c
 * are the words at 8, 16 and 24 of the stack the caller came with (the
 * snippets' arguments); fn's result is in v0 until RESTOREALL. */
.macro CALLC fn
        SAVEALL
        REGION  $16, $1
        ldq     $17, 264($30)
        ldq     $18, 272($30)
        ldq     $19, 280($30)
        bsr     $26, \fn
.endm

/* An entry point the inserted code calls with `bsr at`: C function fn,
 * back to at. */
.macro STUB fn
        CALLC   \fn
        RESTOREALL
        ret     $31, ($28), 1
.endm

/* In the hook (its 256 bytes below sp, $1 saved there): C function fn,
 * then on to the system call. */
.macro HOOKC fn
        ldq     $1, 8($30)
        lda     $30, 256($30)
        CALLC   \fn
        RESTOREALL
        lda     $30, -256($30)
        br      $31, back
.endm

/* The kernel (or ld.so) enters here with sp -> argc, argv..., 0, envp...
 * and v0 holding ld.so's finaliser.  Note the environment and the pid,
 * make the pages around the shadow stack inaccessible, go on to _start. */
start:
        REGION  $2, $1
        stq     $0, RT_SAVE($2)
        ldq     $3, 0($30)
        s8addq  $3, $30, $3
        addq    $3, 16, $3
        stq     $3, RT_ENVP($2)
        mov     $2, $16
        bsr     $26, rt_start           /* the tree's root, the first cycle count */
        lda     $0, 20($31)             /* getxpid */
        callsys
        REGION  $2, $1
        stq     $0, RT_PID($2)
        ldq     $16, RT_GUARD($2)
        lda     $17, 8192($31)
        mov     $31, $18                /* PROT_NONE */
        lda     $0, 74($31)             /* mprotect */
        callsys
        REGION  $2, $1
        ldq     $16, RT_GUARD2($2)
        lda     $17, 8192($31)
        mov     $31, $18
        lda     $0, 74($31)
        callsys
        REGION  $2, $1
        ldq     $0, RT_SAVE($2)
        ldq     $3, RT_B_ENTRY($1)
        addq    $1, $3, $3
        jmp     $31, ($3)

/* A dynamic program's system calls are in its libraries: ld.so calls
 * DT_FINI at exit, which now comes here, writes the profile and goes on
 * to the program's own finaliser. */
fini:
        lda     $30, -16($30)
        stq     $26, 0($30)
        REGION  $16, $1
        bsr     $26, rt_write
        REGION  $2, $1
        ldq     $27, RT_B_OFINI($1)
        ldq     $26, 0($30)
        lda     $30, 16($30)
        beq     $27, 1f
        addq    $1, $27, $27
        jmp     $31, ($27)
1:      ret     $31, ($26), 1

/* A dynamic program's fork is in libc: the code after its call comes here
 * (`bsr at`) in the child, which starts from zero counts.  Everything but
 * at is kept. */
child:  STUB    rt_child

/* A context the inserted code's own lookup did not find: the snippet
 * (rewriter/snippet.c) came with `bsr at` after storing its at, the
 * procedure's number and the program's stack pointer at 0, 8 and 16 of
 * its stack.  Everything but at is kept. */
enter:  STUB    rt_enter

/* A path of a procedure with a hashed counter table ran: the snippet
 * came with `bsr at` after storing its at, the path, its cycles and the
 * procedure's number at 0, 8, 16 and 24 of its stack.  Everything but at
 * is kept. */
count:  STUB    rt_count

/* The running thread's block (after threads started): the snippet came
 * with `bsr at` after storing its at and its procedure's number at 0 and
 * 8 of its stack; the block goes to 8.  Everything but at is kept. */
tblock:
        CALLC   rt_tblock
        stq     $0, 264($30)
        RESTOREALL
        ret     $31, ($28), 1

/* Threads are about to start (a dynamic program loads pthread_create's
 * address): `bsr at`, at saved by the snippet.  Everything but at is
 * kept. */
threads:  STUB    rt_threaded

/* Called by `bsr at, hook` before every system call of the moved code:
 * everything but at is kept.  exit_group and execve write the profile
 * first.  A thread (clone with CLONE_THREAD) makes the runtime look up
 * each thread's block from then on, and a thread's exit frees its; a
 * child sharing memory (vfork, CLONE_VM) must not write them.  A forked
 * child (fork, clone without CLONE_VM on the same stack) starts from zero
 * counts: the hook makes that system call itself, clears the child's
 * counters, and returns past the program's own call_pal. */
hook:
        lda     $30, -256($30)
        stq     $1, 8($30)
        lda     $1, -405($0)
        beq     $1, write
        lda     $1, -1($0)
        beq     $1, texit
        lda     $1, -59($0)
        beq     $1, write
        lda     $1, -2($0)
        beq     $1, fork
        lda     $1, -66($0)
        beq     $1, shared
        lda     $1, -312($0)
        beq     $1, clone
back:   ldq     $1, 8($30)
        lda     $30, 256($30)
        ret     $31, ($28), 1
clone:  srl     $16, 16, $1             /* CLONE_THREAD 0x10000 */
        blbs    $1, thread
        srl     $16, 8, $1              /* CLONE_VM 0x100 */
        blbs    $1, shared
        bne     $17, back               /* a stack of its own: let it be */
fork:   stq     $28, 16($30)
        ldq     $1, 8($30)
        callsys
        ldq     $28, 16($30)
        bne     $19, 2f                 /* failed */
        bne     $0, 2f                  /* the parent */
        CALLC   rt_child
        RESTOREALL
        mov     $31, $0
2:      lda     $30, 256($30)
        lda     $28, 4($28)
        ret     $31, ($28), 1
texit:  HOOKC   rt_thread_exit
thread: HOOKC   rt_threaded
shared: stq     $2, 16($30)
        REGION  $2, $1
        stq     $2, RT_VFORK($2)
        ldq     $2, 16($30)
        br      $31, back
write:  HOOKC   rt_write

        .section .note.GNU-stack,"",@progbits
