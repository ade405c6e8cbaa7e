/*
 * report/pprof.h: a profile selection as pprof's profile.proto
 * (github.com/google/pprof, proto/profile.proto), for `pprof` and the
 * tools that read its format.
 *
 * One sample type per event (type = the event's name, unit "count"), one
 * Mapping per image (its path and build-id), one Location per sampled
 * (image, offset) whose address is the offset (the link-time address),
 * with one Line naming its procedure (and source line when the image has
 * line information).  Without stacks each sample has one location; with
 * an event's stacks (estimator/stacks.h) that event's samples are one
 * Sample per distinct stack, its locations leaf first, so pprof's cum
 * differs from flat.  Frames in images with no samples in the selection
 * get locations of no mapping, named as the stacks name them.  period_type and period are the first event's and its mean
 * sampling period, so a count times the period estimates events.
 * Pseudo-procedures ("[.plt]", "[image not read]", "[unknown]") appear as
 * functions of that name with the image path as their file name.
 */
#ifndef REPORT_PPROF_H
#define REPORT_PPROF_H

#include "estimator/samples.h"
#include "estimator/stacks.h"

/* The profile, uncompressed, in a malloc'd buffer. */
bool est_pprof_encode(const est_set *s, uint8_t **out, size_t *size, est_error *err);
/* The profile gzip-compressed into file (as pprof expects); errors name
 * the file, and a failed write leaves no partial file behind. */
bool est_pprof_write(const est_set *s, const char *file, est_error *err);

/* The same with stacks: stk[e] (NULL, or the stacks of event e) is used
 * when its total equals the set's samples of e, else e stays flat. */
bool est_pprof_encode_stacks(const est_set *s, const est_stacks *const *stk, uint8_t **out, size_t *size,
                             est_error *err);
bool est_pprof_write_stacks(const est_set *s, const est_stacks *const *stk, const char *file,
                            est_error *err);

#endif
