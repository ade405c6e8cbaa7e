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
/* outfile_open and outfile_stream in one: the stream, or NULL with "PATH:
 * what is wrong" in err and nothing left behind. */
FILE *outfile_open_stream(outfile *o, const char *path, mode_t mode, char *err, size_t errlen);
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

/* Where one path is named on a command line: how (an option such as
 * "--report", or words such as "the image") and the path itself. */
typedef struct outfile_arg {
    const char *how;
    const char *path;
} outfile_arg;

/* path with its directory resolved (links, ".", ".."), its last
 * component kept as it is, since a link there is the output's own file;
 * a directory not made yet resolves through its nearest existing
 * ancestor.  malloc'd; NULL when nothing resolves or memory runs out. */
char *outfile_resolve(const char *path);
/* Whether a and b name one file: the same inode when both exist (through
 * any link), else the same name in the same directory ("x" and "./x"). */
bool outfile_same(const char *a, const char *b);
/* Whether path is dir or lies somewhere below it (an output written into a
 * database would replace or confuse files the database owns).  The
 * output's last component is not resolved: a link there is replaced,
 * never written through. */
bool outfile_inside(const char *path, const char *dir);
/* Before anything is written: false with "HOW PATH: why" in err when an
 * output names the same file as an input or as another output, or lies
 * inside one of dirs (directories the command reads or keeps, such as
 * databases).  Entries with a NULL path are skipped. */
bool outfile_apart(const outfile_arg *outs, size_t nout, const outfile_arg *ins, size_t nin,
                   const outfile_arg *dirs, size_t ndirs, char *err, size_t errlen);

#endif
