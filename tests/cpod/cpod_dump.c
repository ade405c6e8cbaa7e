/*
 * tests/cpod/cpod_dump.c: a profile database as "KEY EVENT OFFSET COUNT"
 * lines (the format cpod_producer writes), summed over hosts.
 *
 *   cpod_dump DB [--epoch NAME]   every profile of one epoch, or of all
 *   cpod_dump DB --totals         one line: samples in the whole database
 *
 * Every profile is read whole and checked; a damaged one fails the run,
 * which is how the tests see that the database stayed consistent.  The
 * exits profiles (processes counted by how they ended, not samples) are
 * checked but not listed: the producers' samples are what is compared.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdb/profdb.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cpod_dump DB [--epoch NAME | --totals]\n");
        return 2;
    }
    const char *epoch = NULL;
    bool totals = false;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--epoch") && i + 1 < argc)
            epoch = argv[++i];
        else if (!strcmp(argv[i], "--totals"))
            totals = true;
        else {
            fprintf(stderr, "cpod_dump: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    profdb_error err;
    profdb *db = profdb_open(argv[1], 0, &err);
    if (!db) {
        fprintf(stderr, "cpod_dump: %s\n", err.msg);
        return 1;
    }
    profdb_info *v;
    size_t n;
    if (!profdb_list(db, epoch, &v, &n, &err)) {
        if (err.code == PROFDB_ENOENT) {
            if (totals)
                printf("0\n");
            return 0;
        }
        fprintf(stderr, "cpod_dump: %s\n", err.msg);
        return 1;
    }
    uint64_t all = 0;
    int status = 0;
    for (size_t i = 0; i < n && !status; i++) {
        /* profdb_list is sorted by epoch, key, event, host: sum each
         * (key, event) once, over hosts and (without --epoch) epochs. */
        bool dup = false;
        for (size_t k = 0; k < i && !dup; k++)
            dup = !strcmp(v[k].key, v[i].key) && !strcmp(v[k].event, v[i].event);
        if (dup)
            continue;
        profdb_profile p;
        if (!profdb_sum(db, epoch, NULL, v[i].key, v[i].event, &p, NULL, &err)) {
            fprintf(stderr, "cpod_dump: %s\n", err.msg);
            status = 1;
            break;
        }
        bool samples = strcmp(v[i].event, PROFDB_EXITS_EVENT) != 0;
        all += samples ? p.info.total : 0;
        for (size_t k = 0; k < p.n && !totals && samples; k++)
            printf("%s %s %016" PRIx64 " %" PRIu64 "\n", v[i].key, v[i].event, p.e[k].offset,
                   p.e[k].count);
        profdb_profile_free(&p);
    }
    if (totals && !status)
        printf("%" PRIu64 "\n", all);
    profdb_infos_free(v, n);
    profdb_close(db);
    return status;
}
