/*
 * rewriter/rtblob.h: the instrumented image's runtime, compiled for Alpha
 * (rewriter/runtime/rt.h describes its layout and its data region).
 */
#ifndef REWRITER_RTBLOB_H
#define REWRITER_RTBLOB_H

#include <stddef.h>
#include <stdint.h>

extern const uint8_t rw_rt_blob[], rw_rt_blob_end[];
size_t rw_rt_size(void);    /* 0 when this build has no runtime */

#endif
