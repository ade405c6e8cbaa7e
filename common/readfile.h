/*
 * common/readfile.h: reading a whole file, or its first bytes, into memory.
 *
 * Only regular files are read: a directory, FIFO, device or socket is
 * refused (opened without blocking, so a FIFO given by mistake fails instead
 * of hanging).  The size is the one fstat gave at the open: a file that
 * shrinks meanwhile gives the bytes it still had (its reader then sees it
 * cut short), one that grows is read to its old size.  Reads interrupted by
 * a signal or cut short are resumed.
 *
 * The buffer has one byte more than the file, a NUL, so text can be parsed
 * as a string; an empty file gives a buffer of that NUL alone.  Free it with
 * free().  On failure nothing is left allocated or open, err holds
 * "PATH: reason" (the reason from errno for a failing call), and errno says
 * which failure it was, for callers that classify it:
 *   - EISDIR: a directory; EINVAL: another file that is not regular;
 *   - EFBIG: larger than max (readfile only);
 *   - ENOMEM: out of memory;
 *   - otherwise that of the failing open, fstat or read (ENOENT, EACCES...).
 */
#ifndef COMMON_READFILE_H
#define COMMON_READFILE_H

#include <stddef.h>
#include <stdint.h>

/* The whole file at path, of *size bytes.  A file larger than max bytes
 * (SIZE_MAX: any) is refused, with its size in *size, so a caller can say
 * why in its own words; on every other failure *size is 0. */
void *readfile(const char *path, size_t max, size_t *size, char *err, size_t errlen);

/* The first max bytes at most of the file at path, *got of them, and the
 * file's size in *file_size (*got when it ended early): enough to read a
 * header without reading what follows. */
void *readfile_head(const char *path, size_t max, size_t *got, uint64_t *file_size, char *err,
                    size_t errlen);

#endif
