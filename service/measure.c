/*
 * service/measure.c: what the database says of one executable.
 *
 * Every version of a program has a build-id of its own, so its profiles
 * are its own whatever epoch or host they fell in.  The service reads, per
 * version: the cycle samples and the cycles they stand for, how its
 * processes ended (the exits profile cpod keeps), the units of work done
 * (runs, or the estimated calls of a procedure) and the samples per
 * procedure, whose shares tell whether two stretches of the profile agree.
 */
#include <stdlib.h>
#include <string.h>

#include "estimator/freq.h"
#include "estimator/samples.h"
#include "image/image.h"
#include "service/internal.h"

void svc_profile_free(svc_profile *p)
{
    for (size_t i = 0; i < p->nprocs; i++)
        free(p->names[i]);
    free(p->names);
    free(p->counts);
    memset(p, 0, sizeof *p);
}

/* sum of (key, event) in the epoch; a profile that is not there is zero */
static bool sum(profdb *db, const char *epoch, const char *key, const char *event,
                profdb_profile *out, char *err, size_t errlen)
{
    profdb_error pe;
    memset(out, 0, sizeof *out);
    if (profdb_sum(db, epoch, NULL, key, event, out, NULL, &pe))
        return true;
    if (pe.code == PROFDB_ENOENT)
        return true;
    snprintf(err, errlen, "%s", pe.msg);
    return false;
}

typedef struct named {
    char *name;
    double count;
} named;

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

/* Samples per procedure, by name: names survive rewriting, addresses do
 * not.  A pseudo-name ([.plt]) may recur between procedures: sorting by
 * name brings its pieces together. */
static bool per_procedure(const image *img, const profdb_profile *pr, svc_profile *out)
{
    named *v = calloc(pr->n ? pr->n : 1, sizeof *v);
    size_t n = 0;
    bool ok = v != NULL;
    for (size_t i = 0; ok && i < pr->n; i++) {
        char buf[256];
        uint64_t lo, hi;
        const char *name = est_procedure_at(img, pr->e[i].offset, buf, sizeof buf, &lo, &hi);
        if (n && !strcmp(v[n - 1].name, name))
            v[n - 1].count += (double)pr->e[i].count;
        else if ((ok = (v[n].name = strdup(name)) != NULL))
            v[n++].count = (double)pr->e[i].count;
    }
    if (ok)
        qsort(v, n, sizeof *v, cmp_named);
    out->names = calloc(n ? n : 1, sizeof *out->names);
    out->counts = calloc(n ? n : 1, sizeof *out->counts);
    ok = ok && out->names && out->counts;
    for (size_t i = 0; i < n; i++) {
        if (ok && out->nprocs && !strcmp(out->names[out->nprocs - 1], v[i].name)) {
            out->counts[out->nprocs - 1] += v[i].count;
            free(v[i].name);
        } else if (ok) {
            out->names[out->nprocs] = v[i].name;
            out->counts[out->nprocs++] = v[i].count;
        } else {
            free(v[i].name);
        }
    }
    free(v);
    return ok;
}

/* estimated executions of the procedure's entry */
static bool calls_of(profdb *db, const char *epoch, const char *exe, const char *proc,
                     double *units, char *err, size_t errlen)
{
    static const char *const cycles[] = { "cycles" };
    est_selection sel = { .db = profdb_dir(db), .epoch = epoch, .all_epochs = !epoch,
                          .events = cycles, .nevents = 1 };
    est_analysis *a = est_analyse(&sel, exe, err, errlen);
    if (!a)
        return false;
    const cfg_proc *f = cfg_proc_named(a->cfg, proc);
    uint32_t b = f ? cfg_block_at(f, f->start) : CFG_NONE;
    *units = b == CFG_NONE ? 0 : a->freq->procs[f - a->cfg->procs].block[b];
    if (!f)
        snprintf(err, errlen, "%s: no procedure %s to count work by", exe, proc);
    est_analysis_free(a);
    return f != NULL;
}

bool svc_measure(profdb *db, const char *epoch, const char *exe, const svc_program *p,
                 svc_profile *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    image_error ie;
    image *img = image_open(exe, &ie);
    if (!img) {
        snprintf(err, errlen, "%s", ie.msg);
        return false;
    }
    char key[129];
    image_build_id_hex(img, key, sizeof key);
    profdb_profile cyc, ex;
    bool ok = sum(db, epoch, key, "cycles", &cyc, err, errlen) &&
              sum(db, epoch, key, PROFDB_EXITS_EVENT, &ex, err, errlen);
    if (ok) {
        out->samples = cyc.info.total;
        out->cycles = (double)cyc.info.period_sum;
        for (size_t i = 0; i < ex.n; i++)
            if (ex.e[i].offset < 3)
                out->exits[ex.e[i].offset] += ex.e[i].count;
        out->units = (double)(out->exits[0] + out->exits[1] + out->exits[2]);
        ok = per_procedure(img, &cyc, out);
        if (!ok)
            snprintf(err, errlen, "out of memory");
    }
    if (ok && p && p->work == SVC_WORK_CALLS)
        ok = out->samples == 0 ? (out->units = 0, true)
                               : calls_of(db, epoch, exe, p->work_proc, &out->units, err, errlen);
    profdb_profile_free(&cyc);
    profdb_profile_free(&ex);
    image_close(img);
    if (!ok)
        svc_profile_free(out);
    return ok;
}

double svc_overlap(const svc_profile *a, const svc_profile *b)
{
    double ta = 0, tb = 0, o = 0;
    for (size_t i = 0; i < a->nprocs; i++)
        ta += a->counts[i];
    for (size_t i = 0; i < b->nprocs; i++)
        tb += b->counts[i];
    if (ta <= 0 || tb <= 0)
        return 0;
    size_t i = 0, k = 0;
    while (i < a->nprocs && k < b->nprocs) {
        int c = strcmp(a->names[i], b->names[k]);
        if (c == 0) {
            double x = a->counts[i] / ta, y = b->counts[k] / tb;
            o += x < y ? x : y;
            i++, k++;
        } else if (c < 0) {
            i++;
        } else {
            k++;
        }
    }
    return o;
}

double svc_cycles_per_unit(const svc_profile *p)
{
    return p->units > 0 ? p->cycles / p->units : 0;
}
