/*
 * cpo cat [--header] PROFILE
 *
 * One profile file as text: its header, then one "offset count" line per
 * sampled offset.  The whole file is checked before anything is printed,
 * so a damaged profile gives one error line and no partial listing.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "profdb/profdb.h"
#include "tools/cpo/commands.h"

static const char *when(int64_t t, char *buf, size_t size)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm))
        snprintf(buf, size, "%" PRId64, t);
    return buf;
}

int cmd_cat(int argc, char **argv)
{
    bool header_only = false;
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--header"))
            header_only = true;
        else if (argv[i][0] == '-' || file) {
            file = NULL;
            break;
        } else
            file = argv[i];
    }
    if (!file) {
        fprintf(stderr, "usage: cpo cat [--header] PROFILE\n");
        return 2;
    }
    profdb_profile p;
    profdb_error err;
    if (!profdb_read_file(file, &p, &err)) {
        fprintf(stderr, "cpo: %s\n", err.msg);
        return 1;
    }
    const profdb_info *h = &p.info;
    char buf[2 * PROFDB_MAX_BUILD_ID + 1];
    printf("file:        %s\n", file);
    printf("format:      version %u\n", h->version);
    printf("key:         %s\n", h->key);
    printf("build-id:    %s\n", h->build_id_len ? profdb_key(h->build_id, h->build_id_len, NULL, buf)
                                               : "(none)");
    printf("image:       %s\n", h->paths[0]);
    for (unsigned i = 1; i < h->npaths; i++)
        printf("also seen as: %s\n", h->paths[i]);
    printf("event:       %s\n", h->event);
    printf("host:        %s\n", h->host);
    printf("samples:     %" PRIu64 "\n", h->total);
    printf("entries:     %" PRIu64 "\n", h->nentries);
    printf("mean period: %.1f (%" PRIu64 " events)\n", profdb_mean_period(h), h->period_sum);
    char t[64];
    printf("created:     %s\n", when(h->created, t, sizeof t));
    printf("updated:     %s\n", when(h->updated, t, sizeof t));
    printf("payload:     %" PRIu64 " bytes zstd, %" PRIu64 " bytes encoded\n", h->payload_len,
           h->encoded_len);
    if (!header_only) {
        printf("\n%-18s %s\n", "offset", "count");
        for (size_t i = 0; i < p.n; i++)
            printf("0x%-16" PRIx64 " %" PRIu64 "\n", p.e[i].offset, p.e[i].count);
    }
    profdb_profile_free(&p);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        perror("cpo: cat: stdout");
        return 1;
    }
    return 0;
}
