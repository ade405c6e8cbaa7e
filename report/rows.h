/*
 * report/rows.h: sample rows (estimator/samples.h) as JSON, one object per
 * row: {"procedure", "image", "samples": {EVENT: COUNT, ...}}; per image
 * rows have no "procedure".
 */
#ifndef REPORT_ROWS_H
#define REPORT_ROWS_H

#include <stdbool.h>
#include <stdio.h>

#include "estimator/samples.h"

void rpt_rows_json(FILE *f, const est_set *s, const est_row *rows, size_t n, bool per_image);

#endif
