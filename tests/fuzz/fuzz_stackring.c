/*
 * Fuzz target for the consumer side of the stack rings
 * (collector/driver_stacks.c): a producer's ring is shared memory another
 * process writes, so any head, tail and ring bytes must either be taken
 * as records that keep within the ring (frame counts in range, every pc
 * inside the record) or be refused with DRV_ECORRUPT, never read outside
 * the mapping.  The input is laid over one CPU's control line (head,
 * tail: the first 16 bytes) and its 4096-byte ring, in a file the real
 * producer made.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collector/driver_stacks.h"

static char region[64];
static volatile uint64_t sink;

static int check(void *ctx, unsigned cpu, const drv_stack_rec *r)
{
    (void)ctx;
    if (cpu != 0 || !r->n || r->n > DRV_STACKS_MAX_FRAMES || r->event > 255 || r->end > 255)
        abort();
    uint64_t sum = 0;
    for (unsigned i = 0; i < r->n; i++)
        sum += r->pc[i];      /* every pc readable: ASan says if not */
    sink = sum;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!region[0])
        snprintf(region, sizeof region, "/tmp/fuzz-stackring-%d", (int)getpid());
    drv_error err;
    drv_stacks_unlink(region);
    drv_stacks *p = drv_stacks_create(region, 1, 4096, &err);
    if (!p)
        abort();
    drv_stacks_close(p);
    char path[96];
    snprintf(path, sizeof path, "%s%s", region, DRV_STACKS_SUFFIX);
    FILE *f = fopen(path, "r+");
    if (!f)
        abort();
    /* control page at 4096: head, then (64 bytes on) tail; ring at 8192 */
    uint64_t head = 0, tail = 0;
    if (size >= 16) {
        memcpy(&head, data, 8);
        memcpy(&tail, data + 8, 8);
        data += 16;
        size -= 16;
    }
    fseek(f, 4096, SEEK_SET);
    fwrite(&head, 8, 1, f);
    fseek(f, 4096 + 64, SEEK_SET);
    fwrite(&tail, 8, 1, f);
    fseek(f, 8192, SEEK_SET);
    fwrite(data, 1, size > 4096 ? 4096 : size, f);
    fclose(f);
    drv_stacks *c = drv_stacks_open(region, &err);
    if (!c)
        abort();
    int n = drv_stacks_take(c, check, NULL, &err);
    if (n < 0 && (n != DRV_ECORRUPT || !err.msg[0]))
        abort();
    drv_stacks_close(c);
    drv_stacks_unlink(region);
    return 0;
}
