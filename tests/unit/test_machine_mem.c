/*
 * Unit tests for axp's guest memory (regions, protections, copy-on-write,
 * moves) and for exact counts on a loop in a bare machine.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>

#include "tests/unit/test_machine_harness.h"

Test(machine_mem, regions_and_protection)
{
    bare b;
    bare_init(&b, false);
    mm *x = b.p->mm;
    uint8_t buf[20000], back[20000];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)(i * 7);
    /* across page boundaries */
    cr_assert_eq(mem_write(x, DATA + 100, buf, sizeof buf), 0);
    cr_assert_eq(mem_read(x, DATA + 100, back, sizeof back), 0);
    cr_assert_eq(memcmp(buf, back, sizeof buf), 0);
    /* untouched pages read as zero */
    uint64_t z = 1;
    cr_assert_eq(mem_read(x, DATA + 3 * PG_SIZE, &z, 8), 0);
    cr_assert_eq(z, 0);
    /* read-only code cannot be written by the kernel's copies; unmapped
     * memory cannot be read */
    cr_assert_eq(mem_write(x, CODE, buf, 8), -A_EFAULT);
    cr_assert_eq(mem_read(x, 0x10000, back, 8), -A_EFAULT);
    cr_assert_eq(mem_read(x, DATA + 4 * PG_SIZE - 4, back, 8), -A_EFAULT, "runs off the end");
    /* protect a page in the middle: the region splits */
    size_t before = x->nv;
    cr_assert_eq(mm_protect(b.m, x, DATA + PG_SIZE, PG_SIZE, GP_R), 0);
    cr_assert_eq(x->nv, before + 2);
    cr_assert_eq(mem_write(x, DATA + PG_SIZE, buf, 1), -A_EFAULT);
    cr_assert_eq(mem_write(x, DATA, buf, 1), 0);
    cr_assert_eq(mm_protect(b.m, x, DATA + 64 * PG_SIZE, PG_SIZE, GP_R), -A_ENOMEM, "unmapped");
    /* unmap a page: reads fault, the rest stays */
    cr_assert_eq(mm_unmap(b.m, x, DATA + 2 * PG_SIZE, PG_SIZE), 0);
    cr_assert_eq(mem_read(x, DATA + 2 * PG_SIZE, back, 1), -A_EFAULT);
    cr_assert_eq(mem_read(x, DATA + 3 * PG_SIZE, back, 1), 0);
    /* free space is found above the mmap base and never overlaps */
    uint64_t a = mm_find_free(x, 0, 10 * PG_SIZE);
    cr_assert_geq(a, MMAP_BASE);
    cr_assert(mm_range_free(x, a, 10 * PG_SIZE));
    mm_map(b.m, x, a, 10 * PG_SIZE, GP_R | GP_W, VMA_ANON, NULL, 0, -1, 0);
    uint64_t c = mm_find_free(x, 0, PG_SIZE);
    cr_assert(c >= a + 10 * PG_SIZE || c + PG_SIZE <= a);
}

Test(machine_mem, fork_copies_on_write)
{
    bare b;
    bare_init(&b, false);
    mm *x = b.p->mm;
    uint64_t v = 0x1111, w;
    mem_write(x, DATA, &v, 8);
    uint64_t frames = x->frames;
    mm *y = mm_fork(x);
    cr_assert_eq(y->frames, frames, "the child shares every frame");
    cr_assert_eq(mem_read(y, DATA, &w, 8), 0);
    cr_assert_eq(w, 0x1111);
    v = 0x2222;
    mem_write(y, DATA, &v, 8);                /* the child's copy */
    mem_read(x, DATA, &w, 8);
    cr_assert_eq(w, 0x1111, "the parent does not see the child's write");
    v = 0x3333;
    mem_write(x, DATA, &v, 8);
    mem_read(y, DATA, &w, 8);
    cr_assert_eq(w, 0x2222, "nor the child the parent's");
    mm_put(b.m, y);
    mem_read(x, DATA, &w, 8);
    cr_assert_eq(w, 0x3333);
}

Test(machine_mem, shared_anonymous_memory_stays_shared)
{
    bare b;
    bare_init(&b, false);
    mm *x = b.p->mm;
    uint64_t a = mm_find_free(x, 0, PG_SIZE);
    mm_map(b.m, x, a, PG_SIZE, GP_R | GP_W, VMA_ANON, NULL, 0, -1, 0);
    for (size_t i = 0; i < x->nv; i++)
        if (x->v[i].start == a)
            x->v[i].shared = true;
    mm *y = mm_fork(x);
    uint64_t v = 42, w = 0;
    mem_write(y, a, &v, 8);
    mem_read(x, a, &w, 8);
    cr_assert_eq(w, 42);
    mm_put(b.m, y);
}

Test(machine_mem, move_and_discard)
{
    bare b;
    bare_init(&b, false);
    mm *x = b.p->mm;
    uint64_t a = mm_find_free(x, 0, 2 * PG_SIZE);
    mm_map(b.m, x, a, 2 * PG_SIZE, GP_R | GP_W, VMA_ANON, NULL, 0, -1, 0);
    uint64_t v = 0xabcdef, w = 0;
    mem_write(x, a + PG_SIZE + 8, &v, 8);
    uint64_t to = a + 64 * PG_SIZE;
    cr_assert_eq(mm_move(b.m, x, a, 2 * PG_SIZE, to), 0);
    cr_assert_eq(mem_read(x, to + PG_SIZE + 8, &w, 8), 0);
    cr_assert_eq(w, 0xabcdef);
    cr_assert_eq(mem_read(x, a, &w, 8), -A_EFAULT, "the old place is gone");
    mm_discard(x, to, 2 * PG_SIZE);
    mem_read(x, to + PG_SIZE + 8, &w, 8);
    cr_assert_eq(w, 0, "MADV_DONTNEED: zero again");
}

Test(machine_mem, exact_counts_of_a_loop)
{
    bare b;
    bare_init(&b, true);
    /* r1 = 5; loop: r1 -= 1; bne r1, loop */
    emit(&b, MEM("lda", 1, 5, 31));
    emit(&b, OPI("subq", 1, 1, 1));
    emit(&b, BRA("bne", 1, -2));
    bare_run(&b);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(exact_write(b.m, f), 0);
    fclose(f);
    char want[256];
    snprintf(want, sizeof want, "block - 0x%llx 0x%llx 4\n", (unsigned long long)CODE + 4,
             (unsigned long long)CODE + 12);
    cr_assert(strstr(text, want), "loop body run 4 more times:\n%s", text);
    snprintf(want, sizeof want, "branch - 0x%llx 0x%llx 4 1\n", (unsigned long long)CODE + 8,
             (unsigned long long)CODE + 4);
    cr_assert(strstr(text, want), "branch taken 4, not taken 1:\n%s", text);
    snprintf(want, sizeof want, "exit - 0x%llx X 1\n", (unsigned long long)CODE + 12);
    cr_assert(strstr(text, want), "the bpt is a fault exit:\n%s", text);
    free(text);
}

Test(machine_mem, file_pages_are_read_when_touched)
{
    bare b;
    bare_init(&b, false);
    mm *x = b.p->mm;
    char path[] = "/tmp/axp-test-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    unlink(path);
    static uint8_t content[3 * 8192 + 100];
    for (size_t i = 0; i < sizeof content; i++)
        content[i] = (uint8_t)(i * 13 + 1);
    cr_assert_eq(write(fd, content, sizeof content), (ssize_t)sizeof content);
    uint64_t a = mm_find_free(x, 0, 4 * PG_SIZE);
    mm_map(b.m, x, a, 4 * PG_SIZE, GP_R | GP_W, VMA_FILE, "file", 0, -1, 0);
    mm_set_file(x, a, a + 4 * PG_SIZE, vfile_new(fd));
    close(fd);
    uint8_t back[sizeof content];
    cr_assert_eq(mem_read(x, a, back, sizeof back), 0);
    cr_assert_eq(memcmp(back, content, sizeof back), 0);
    uint8_t z = 1;
    mem_read(x, a + 4 * PG_SIZE - 1, &z, 1);
    cr_assert_eq(z, 0, "past the end of the file: zero");
    /* untouched pages of a moved or forked mapping still come from the file */
    mm *y = mm_fork(x);
    uint64_t to = a + 32 * PG_SIZE;
    cr_assert_eq(mm_move(b.m, y, a, 4 * PG_SIZE, to), 0);
    cr_assert_eq(mem_read(y, to + 2 * PG_SIZE, back, 100), 0);
    cr_assert_eq(memcmp(back, content + 2 * PG_SIZE, 100), 0);
    mm_put(b.m, y);
}
