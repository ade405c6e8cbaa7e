/*
 * machine/sys_info.c: what a program may ask about the machine: uname,
 * sysinfo, getcpu, getrandom (a fixed sequence, so runs repeat), and
 * Alpha's osf_getsysinfo/osf_setsysinfo for the IEEE control word, raised
 * exceptions, the unaligned-access flags and the processor type.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>

#include "machine/sys.h"

SYS(uname)
{
    char u[6][65];
    memset(u, 0, sizeof u);
    struct utsname h;
    uname(&h);
    strcpy(u[0], "Linux");
    snprintf(u[1], 65, "%s", h.nodename);
    strcpy(u[2], "6.1.0-axp");
    strcpy(u[3], "#1 SMP axp");
    strcpy(u[4], "alpha");
    strcpy(u[5], "(none)");
    return mem_write(t->mm, a[0], u, sizeof u) ? -A_EFAULT : 0;
}

SYS(sysinfo)
{
    struct sysinfo h;
    sysinfo(&h);
    uint8_t b[112];
    memset(b, 0, sizeof b);
    int64_t up = vtime_ns(t->m) / 1000000000;
    uint64_t v[] = { (uint64_t)up, 0, 0, 0, h.totalram, h.freeram, h.sharedram, h.bufferram,
                     h.totalswap, h.freeswap };
    memcpy(b, v, sizeof v);
    uint16_t procs = 0;
    for (proc *p = t->m->procs; p; p = p->all_next)
        if (p->state == P_LIVE)
            procs++;
    memcpy(b + 80, &procs, 2);
    uint32_t unit = h.mem_unit;
    memcpy(b + 104, &unit, 4);
    return mem_write(t->mm, a[0], b, sizeof b) ? -A_EFAULT : 0;
}

SYS(getcpu)
{
    uint32_t c = (uint32_t)(t->cpu >= 0 ? t->cpu : 0), z = 0;
    if (a[0] && mem_write(t->mm, a[0], &c, 4))
        return -A_EFAULT;
    if (a[1] && mem_write(t->mm, a[1], &z, 4))
        return -A_EFAULT;
    return 0;
}

/* asm/fpu.h: the software control word's view of the FPCR. */
static uint64_t swcr_to_fpcr(uint64_t sw)
{
    uint64_t fp = (sw & SWCR_STATUS_MASK) << 35;
    fp |= (sw & SWCR_MAP_DMZ) << 36;
    fp |= (sw & SWCR_STATUS_MASK) ? FPCR_SUM : 0;
    fp |= (~sw & (SWCR_TRAP_INV | SWCR_TRAP_DZE | SWCR_TRAP_OVF)) << 48;
    fp |= (~sw & (SWCR_TRAP_UNF | SWCR_TRAP_INE)) << 57;
    fp |= (sw & SWCR_MAP_UMZ) ? FPCR_UNDZ | FPCR_UNFD : 0;
    fp |= (~sw & SWCR_TRAP_DNO) << 41;
    return fp;
}

SYS(osf_getsysinfo)
{
    switch (a[0]) {
    case A_GSI_IEEE_FP_CONTROL: {
        uint64_t w = (t->swcr & SWCR_MASK) | ((t->fpcr >> 35) & SWCR_STATUS_MASK);
        return mem_write(t->mm, a[1], &w, 8) ? -A_EFAULT : 0;
    }
    case A_GSI_UACPROC: {
        if (a[2] < 4)
            return -A_EINVAL;
        uint32_t w = t->uac;
        return mem_write(t->mm, a[1], &w, 4) ? -A_EFAULT : 1;
    }
    case A_GSI_PROC_TYPE: {
        if (a[2] < 8)
            return -A_EINVAL;
        uint64_t w = 5;        /* EV5_CPU in the HWRPB's numbering */
        return mem_write(t->mm, a[1], &w, 8) ? -A_EFAULT : 1;
    }
    default:
        return -A_EOPNOTSUPP;
    }
}

SYS(osf_setsysinfo)
{
    switch (a[0]) {
    case A_SSI_IEEE_FP_CONTROL: {
        uint64_t sw;
        if (mem_read(t->mm, a[1], &sw, 8))
            return -A_EFAULT;
        t->swcr = sw & SWCR_MASK;
        fp_set_fpcr(t, (t->fpcr & FPCR_DYN_MASK) | swcr_to_fpcr(sw));
        return 0;
    }
    case A_SSI_IEEE_RAISE_EXCEPTION: {
        uint64_t exc;
        if (mem_read(t->mm, a[1], &exc, 8))
            return -A_EFAULT;
        exc &= SWCR_STATUS_MASK;
        uint64_t sw = (t->swcr & SWCR_MASK) | exc;
        t->swcr |= exc;
        fp_set_fpcr(t, t->fpcr | swcr_to_fpcr(sw));
        uint64_t fex = (exc >> 16) & sw;
        if (fex) {
            int code = 0;
            if (fex & SWCR_TRAP_DNO) code = A_FPE_FLTUND;
            if (fex & SWCR_TRAP_INE) code = A_FPE_FLTRES;
            if (fex & SWCR_TRAP_UNF) code = A_FPE_FLTUND;
            if (fex & SWCR_TRAP_OVF) code = A_FPE_FLTOVF;
            if (fex & SWCR_TRAP_DZE) code = A_FPE_FLTDIV;
            if (fex & SWCR_TRAP_INV) code = A_FPE_FLTINV;
            ksiginfo si = { .signo = A_SIGFPE, .code = code };
            sig_send_thread(t, &si);
        }
        return 0;
    }
    case A_SSI_NVPAIRS:
        for (uint64_t i = 0; i < a[2]; i++) {
            uint32_t vw[2];
            if (mem_read(t->mm, a[1] + 8 * i, vw, 8))
                return -A_EFAULT;
            if (vw[0] != A_SSIN_UACPROC)
                return -A_EOPNOTSUPP;
            t->uac = vw[1] & 7;
        }
        return 0;
    case 7:       /* SSI_LMF */
        return 0;
    default:
        return -A_EOPNOTSUPP;
    }
}

void random_fill(machine *m, void *buf, size_t n)
{
    uint8_t *b = buf;
    if (!m->rng)
        m->rng = 0x9e3779b97f4a7c15ULL;
    for (size_t i = 0; i < n; i++) {
        m->rng ^= m->rng << 13;
        m->rng ^= m->rng >> 7;
        m->rng ^= m->rng << 17;
        b[i] = (uint8_t)(m->rng >> 24);
    }
}

/* Deterministic on purpose: the same run gets the same "random" bytes. */
SYS(getrandom)
{
    uint64_t n = a[1] > (1u << 25) ? (1u << 25) : a[1];
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return -A_ENOMEM;
    random_fill(t->m, buf, n);
    long r = n && mem_write(t->mm, a[0], buf, n) ? -A_EFAULT : (long)n;
    free(buf);
    return r;
}
