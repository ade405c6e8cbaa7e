/*
 * rewriter/rtblob.c: the runtime an instrumented image carries
 * (rewriter/runtime/, built for Alpha by scripts/build-runtime.sh), as
 * bytes.  Builds without the blob (the fuzzers) get an empty one, and
 * instrumenting then fails with a message.
 */
#include <stddef.h>
#include <stdint.h>

#include "rewriter/rtblob.h"

#ifdef RT_BLOB
__asm__(".section .rodata\n"
        ".balign 16\n"
        ".globl rw_rt_blob\n"
        "rw_rt_blob:\n"
        ".incbin \"" RT_BLOB "\"\n"
        ".globl rw_rt_blob_end\n"
        "rw_rt_blob_end:\n"
        ".previous\n");
#else
const uint8_t rw_rt_blob[1], rw_rt_blob_end[1];
#endif

size_t rw_rt_size(void)
{
#ifdef RT_BLOB
    return (size_t)(rw_rt_blob_end - rw_rt_blob);
#else
    return 0;
#endif
}
