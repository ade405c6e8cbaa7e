/*
 * common/outfile.h: writing a file so that a failure never loses or
 * damages what was there.
 *
 * The new contents go to a temporary created in the output's own directory
 * with O_EXCL and an unpredictable name (mkstemp), so a file or link
 * planted under a guessed name is never opened; the temporary is renamed
 * over the output only when everything was written and synced.  An output
 * that exists and is not a regular file (a device node, directory, FIFO or
 * socket) is refused: renaming over it would replace the node.  A symbolic
 * link at the output is replaced by the new file; its target is never
 * written (docs/decisions.md).
 */
#ifndef COMMON_OUTFILE_H
#define COMMON_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct outfile {
    char *path;      /* the output */
    char *tmp;       /* the temporary, NULL once renamed or removed */
    int fd;          /* open on tmp, or -1 */
    FILE *fp;        /* from outfile_stream, or NULL */
} outfile;

/* Creates the temporary for path, with permissions mode (less the umask).
 * False with "PATH: what is wrong" in err. */
bool outfile_open(outfile *o, const char *path, mode_t mode, char *err, size_t errlen);
/* A stdio stream on the temporary (owned by o); NULL when out of memory. */
FILE *outfile_stream(outfile *o);
/* Flushes, syncs and renames the temporary over the output; on any failure
 * removes the temporary, leaves the output as it was, and says why. */
bool outfile_commit(outfile *o, char *err, size_t errlen);
/* Removes the temporary: the output is left as it was. */
void outfile_abort(outfile *o);

/* Whether path may be written as an output: absent, a regular file or a
 * symbolic link.  False with the reason in err otherwise. */
bool outfile_check(const char *path, char *err, size_t errlen);
/* Whether name, an entry of output path's directory, is a temporary that
 * outfile_open made for it (one a kill left behind, for a cleanup). */
bool outfile_is_temp(const char *path, const char *name);
/* Whether the output path names the file in already is (the same inode,
 * through any link): writing it would replace the input. */
bool outfile_is(const char *path, const char *in);

#endif
