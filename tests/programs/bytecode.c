/* bytecode: a switch-dispatched stack-machine interpreter.
 *
 * The interpreter's switch has 22 dense cases, so gcc compiles it to a jump
 * table (on Alpha: a table of GPREL32 entries in .rodata and a `jmp` through
 * a register).  A small assembler with labels builds a program that counts
 * the primes below LIMIT by trial division and prints those below 100.
 *
 * Usage: bytecode [LIMIT]   (default 2000; bytecode.args passes 2000)
 * Prints the primes below 100, the count, the number of bytecode
 * instructions executed and how often each opcode ran.  The exit status is
 * the value the bytecode program halts with: the count of primes modulo 256
 * (303 primes below 2000, so status 47).
 */
#include <stdio.h>
#include <stdlib.h>

enum op {
    OP_NOP, OP_PUSH, OP_LOAD, OP_STORE, OP_ADD, OP_SUB, OP_MUL, OP_DIV,
    OP_MOD, OP_LT, OP_GT, OP_EQ, OP_JMP, OP_JZ, OP_JNZ, OP_DUP, OP_DROP,
    OP_SWAP, OP_INC, OP_PRINT, OP_AND, OP_HALT, NOPS
};

static const char *const names[NOPS] = {
    "nop", "push", "load", "store", "add", "sub", "mul", "div", "mod", "lt",
    "gt", "eq", "jmp", "jz", "jnz", "dup", "drop", "swap", "inc", "print",
    "and", "halt",
};

/* ---- assembler ---------------------------------------------------------- */

static long code[256];
static int ncode;
static int label_at[16];
static struct { int where, label; } fixups[32];
static int nfixups;

static void emit(enum op op) { code[ncode++] = op; }
static void emit1(enum op op, long arg) { code[ncode++] = op; code[ncode++] = arg; }
static void label(int l) { label_at[l] = ncode; }
static void jump(enum op op, int l)
{
    code[ncode++] = op;
    fixups[nfixups].where = ncode;
    fixups[nfixups++].label = l;
    code[ncode++] = -1;
}
static void link_program(void)
{
    for (int i = 0; i < nfixups; i++)
        code[fixups[i].where] = label_at[fixups[i].label];
}

/* registers: r0 = n, r1 = limit, r2 = count, r3 = divisor */
enum { L_OUTER, L_INNER, L_PRIME, L_NEXT, L_SKIP, L_DONE };

static void assemble(long limit)
{
    emit1(OP_PUSH, limit); emit1(OP_STORE, 1);
    emit1(OP_PUSH, 2);     emit1(OP_STORE, 0);
    emit1(OP_PUSH, 0);     emit1(OP_STORE, 2);
    label(L_OUTER);
    emit1(OP_LOAD, 0); emit1(OP_LOAD, 1); emit(OP_LT); jump(OP_JZ, L_DONE);
    emit1(OP_PUSH, 2); emit1(OP_STORE, 3);
    label(L_INNER);
    emit1(OP_LOAD, 3); emit(OP_DUP); emit(OP_MUL);
    emit1(OP_LOAD, 0); emit(OP_GT); jump(OP_JNZ, L_PRIME);
    emit1(OP_LOAD, 0); emit1(OP_LOAD, 3); emit(OP_MOD); jump(OP_JZ, L_NEXT);
    emit1(OP_INC, 3); jump(OP_JMP, L_INNER);
    label(L_PRIME);
    emit1(OP_INC, 2);
    emit1(OP_LOAD, 0); emit1(OP_PUSH, 100); emit(OP_LT); jump(OP_JZ, L_SKIP);
    emit1(OP_LOAD, 0); emit(OP_PRINT);
    label(L_SKIP);
    label(L_NEXT);
    emit1(OP_INC, 0); jump(OP_JMP, L_OUTER);
    label(L_DONE);
    emit1(OP_LOAD, 2); emit(OP_DUP); emit(OP_PRINT);
    /* halt value: count & 255, computed as count - (count / 256) * 256 */
    emit(OP_DUP); emit1(OP_PUSH, 256); emit(OP_DIV); emit1(OP_PUSH, 256);
    emit(OP_MUL); emit(OP_SWAP); emit(OP_SWAP); emit(OP_SUB);
    emit1(OP_PUSH, 255); emit(OP_AND); emit(OP_NOP); emit(OP_HALT);
    /* never reached: keeps every opcode in the program */
    emit(OP_DROP); emit1(OP_PUSH, 1); emit1(OP_PUSH, 1); emit(OP_ADD);
    emit1(OP_PUSH, 1); emit(OP_EQ); emit(OP_HALT);
    link_program();
}

/* ---- interpreter ----------------------------------------------------------- */

static unsigned long executed, histogram[NOPS];

__attribute__((noipa)) static long run(const long *prog)
{
    long stack[64], reg[8] = { 0 };
    int sp = 0, pc = 0;
    long a, b;

    for (;;) {
        enum op op = (enum op)prog[pc++];
        executed++;
        histogram[op]++;
        switch (op) {
        case OP_NOP:   break;
        case OP_PUSH:  stack[sp++] = prog[pc++]; break;
        case OP_LOAD:  stack[sp++] = reg[prog[pc++]]; break;
        case OP_STORE: reg[prog[pc++]] = stack[--sp]; break;
        case OP_ADD:   b = stack[--sp]; a = stack[--sp]; stack[sp++] = a + b; break;
        case OP_SUB:   b = stack[--sp]; a = stack[--sp]; stack[sp++] = a - b; break;
        case OP_MUL:   b = stack[--sp]; a = stack[--sp]; stack[sp++] = a * b; break;
        case OP_DIV:   b = stack[--sp]; a = stack[--sp]; stack[sp++] = a / b; break;
        case OP_MOD:   b = stack[--sp]; a = stack[--sp]; stack[sp++] = a % b; break;
        case OP_LT:    b = stack[--sp]; a = stack[--sp]; stack[sp++] = a < b; break;
        case OP_GT:    b = stack[--sp]; a = stack[--sp]; stack[sp++] = a > b; break;
        case OP_EQ:    b = stack[--sp]; a = stack[--sp]; stack[sp++] = a == b; break;
        case OP_AND:   b = stack[--sp]; a = stack[--sp]; stack[sp++] = a & b; break;
        case OP_JMP:   pc = (int)prog[pc]; break;
        case OP_JZ:    pc = stack[--sp] == 0 ? (int)prog[pc] : pc + 1; break;
        case OP_JNZ:   pc = stack[--sp] != 0 ? (int)prog[pc] : pc + 1; break;
        case OP_DUP:   stack[sp] = stack[sp - 1]; sp++; break;
        case OP_DROP:  sp--; break;
        case OP_SWAP:  a = stack[sp - 1]; stack[sp - 1] = stack[sp - 2]; stack[sp - 2] = a; break;
        case OP_INC:   reg[prog[pc++]]++; break;
        case OP_PRINT: printf("%ld\n", stack[--sp]); break;
        case OP_HALT:  return stack[--sp];
        default:
            fprintf(stderr, "bad opcode %d at %d\n", (int)op, pc - 1);
            exit(2);
        }
    }
}

int main(int argc, char **argv)
{
    long limit = argc > 1 ? atol(argv[1]) : 2000;
    assemble(limit);
    printf("primes below %ld (program of %d words):\n", limit, ncode);
    long status = run(code);
    printf("halt %ld after %lu instructions\n", status, executed);
    for (int i = 0; i < NOPS; i++)
        printf("  %-5s %lu\n", names[i], histogram[i]);
    return (int)status;
}
