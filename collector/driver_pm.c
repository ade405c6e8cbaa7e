/*
 * collector/driver_pm.c: ProfileMe records as the words of a stack-ring
 * record (collector/driver_stacks.h, docs/driver-shm.md "ProfileMe
 * records").  Six words: pc; effective address or jump target; flags,
 * history, history length and level; the three latencies and the issue
 * width; window and distance; the mean period's IEEE bits.
 */
#include <math.h>
#include <string.h>

#include "collector/driver_stacks.h"

void drv_pm_encode(const drv_pm *r, uint64_t w[DRV_PM_WORDS])
{
    uint64_t period;
    memcpy(&period, &r->period, sizeof period);
    w[0] = r->pc;
    w[1] = r->ea;
    w[2] = (uint64_t)r->flags | (uint64_t)r->hist << 32 | (uint64_t)r->hist_len << 48 | (uint64_t)r->level << 56;
    w[3] = (uint64_t)r->fetch_issue | (uint64_t)r->head << 16 | (uint64_t)r->issue_ready << 32 |
           (uint64_t)r->issue_width << 48;
    w[4] = (uint64_t)r->window | (uint64_t)r->distance << 16;
    w[5] = period;
}

bool drv_pm_decode(const drv_stack_rec *r, drv_pm *out)
{
    if (r->event != DRV_PM_EVENT || r->end != DRV_PM_VERSION || r->n != DRV_PM_WORDS)
        return false;
    const uint64_t *w = r->pc;
    memset(out, 0, sizeof *out);
    out->pc = w[0];
    out->ea = w[1];
    out->flags = (uint32_t)w[2];
    out->hist = (uint16_t)(w[2] >> 32);
    out->hist_len = (uint8_t)(w[2] >> 48);
    out->level = (uint8_t)(w[2] >> 56);
    out->fetch_issue = (uint16_t)w[3];
    out->head = (uint16_t)(w[3] >> 16);
    out->issue_ready = (uint16_t)(w[3] >> 32);
    out->issue_width = (uint8_t)(w[3] >> 48);
    out->window = (uint16_t)w[4];
    out->distance = (uint16_t)(w[4] >> 16);
    memcpy(&out->period, &w[5], sizeof out->period);
    return !(out->flags & ~(uint32_t)DRV_PM_FLAGS) && out->hist_len <= 16 && out->level <= 3 &&
           (w[3] >> 56) == 0 && (w[4] >> 32) == 0 && out->distance <= out->window && isfinite(out->period) &&
           out->period >= 1 && out->period <= 4294967296.0;
}
