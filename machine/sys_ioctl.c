/*
 * machine/sys_ioctl.c: ioctl.  Alpha's request numbers (13 size bits, 3
 * direction bits) and its termios, whose flag bits and control-character
 * slots differ from the host's, so each is translated by name.  Requests
 * that are not ours to know get ENOTTY, as a driver would answer.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "machine/sys.h"

static const struct { uint32_t a, h; } iflags[] = {
    {0x1, IGNBRK}, {0x2, BRKINT}, {0x4, IGNPAR}, {0x8, PARMRK}, {0x10, INPCK},
    {0x20, ISTRIP}, {0x40, INLCR}, {0x80, IGNCR}, {0x100, ICRNL}, {0x200, IXON},
    {0x400, IXOFF}, {0x800, IXANY}, {0x1000, IUCLC}, {0x2000, IMAXBEL}, {0x4000, IUTF8},
}, oflags[] = {
    {0x1, OPOST}, {0x2, ONLCR}, {0x4, OLCUC}, {0x8, OCRNL}, {0x10, ONOCR},
    {0x20, ONLRET}, {0x40, OFILL}, {0x80, OFDEL}, {0xc00, TAB3},
}, cflags[] = {
    {0x300, CSIZE}, {0x400, CSTOPB}, {0x800, CREAD}, {0x1000, PARENB},
    {0x2000, PARODD}, {0x4000, HUPCL}, {0x8000, CLOCAL},
}, lflags[] = {
    {0x1, ECHOKE}, {0x2, ECHOE}, {0x4, ECHOK}, {0x8, ECHO}, {0x10, ECHONL},
    {0x20, ECHOPRT}, {0x40, ECHOCTL}, {0x80, ISIG}, {0x100, ICANON}, {0x400, IEXTEN},
    {0x400000, TOSTOP}, {0x800000, FLUSHO}, {0x20000000, PENDIN}, {0x80000000, NOFLSH},
};
static const struct { int a, h; } ccs[] = {
    {0, VEOF}, {1, VEOL}, {2, VEOL2}, {3, VERASE}, {4, VWERASE}, {5, VKILL},
    {6, VREPRINT}, {7, VSWTC}, {8, VINTR}, {9, VQUIT}, {10, VSUSP}, {12, VSTART},
    {13, VSTOP}, {14, VLNEXT}, {15, VDISCARD}, {16, VMIN}, {17, VTIME},
};
#define XLATE(tab, v, from, to) ({                                      \
        uint32_t r_ = 0;                                                \
        for (size_t i_ = 0; i_ < sizeof tab / sizeof tab[0]; i_++) {    \
            if (((v) & tab[i_].from) == tab[i_].from)                   \
                r_ |= tab[i_].to;                                       \
        }                                                               \
        r_;                                                             \
    })

static void termios_to_alpha(const struct termios *h, uint8_t b[44])
{
    uint32_t v[4] = {
        XLATE(iflags, h->c_iflag, h, a), XLATE(oflags, h->c_oflag, h, a),
        XLATE(cflags, h->c_cflag & ~CBAUD, h, a) | (uint32_t)(cfgetospeed(h) & 0xf),
        XLATE(lflags, h->c_lflag, h, a),
    };
    memset(b, 0, 44);
    memcpy(b, v, 16);
    for (size_t i = 0; i < sizeof ccs / sizeof ccs[0]; i++)
        b[16 + ccs[i].a] = h->c_cc[ccs[i].h];
    uint32_t sp = (uint32_t)(cfgetospeed(h) & 0xf);
    memcpy(b + 36, &sp, 4);
    memcpy(b + 40, &sp, 4);
}

static void termios_from_alpha(const uint8_t b[44], struct termios *h)
{
    uint32_t v[4];
    memcpy(v, b, 16);
    h->c_iflag = XLATE(iflags, v[0], a, h);
    h->c_oflag = XLATE(oflags, v[1], a, h);
    h->c_cflag = (h->c_cflag & CBAUD) | XLATE(cflags, v[2], a, h);
    h->c_lflag = XLATE(lflags, v[3], a, h);
    for (size_t i = 0; i < sizeof ccs / sizeof ccs[0]; i++)
        h->c_cc[ccs[i].h] = b[16 + ccs[i].a];
}

SYS(ioctl)
{
    int fd = (int)a[0];
    gfile *f = fd_get(t->p, fd);
    if (!f)
        return -A_EBADF;
    uint32_t req = (uint32_t)a[1];
    switch (req) {
    case A_TCGETS: {
        struct termios h;
        if (tcgetattr(f->host, &h) < 0)
            return -xerrno(errno);
        uint8_t b[44];
        termios_to_alpha(&h, b);
        return mem_write(t->mm, a[2], b, 44) ? -A_EFAULT : 0;
    }
    case A_TCSETS: case A_TCSETSW: case A_TCSETSF: {
        struct termios h;
        uint8_t b[44];
        if (tcgetattr(f->host, &h) < 0)
            return -xerrno(errno);
        if (mem_read(t->mm, a[2], b, 44))
            return -A_EFAULT;
        termios_from_alpha(b, &h);
        int act = req == A_TCSETS ? TCSANOW : req == A_TCSETSW ? TCSADRAIN : TCSAFLUSH;
        return tcsetattr(f->host, act, &h) < 0 ? -xerrno(errno) : 0;
    }
    case A_TIOCGWINSZ: {
        struct winsize w;
        if (ioctl(f->host, TIOCGWINSZ, &w) < 0)
            return -xerrno(errno);
        return mem_write(t->mm, a[2], &w, 8) ? -A_EFAULT : 0;
    }
    case A_TIOCSWINSZ: {
        struct winsize w;
        if (mem_read(t->mm, a[2], &w, 8))
            return -A_EFAULT;
        return ioctl(f->host, TIOCSWINSZ, &w) < 0 ? -xerrno(errno) : 0;
    }
    case A_TIOCGPGRP: {
        if (!isatty(f->host))
            return -A_ENOTTY;
        int pg = t->p->pgid;
        return mem_write(t->mm, a[2], &pg, 4) ? -A_EFAULT : 0;
    }
    case A_TIOCSPGRP:
        return isatty(f->host) ? 0 : -A_ENOTTY;
    case A_TIOCGSID: {
        if (!isatty(f->host))
            return -A_ENOTTY;
        int sid = t->p->sid;
        return mem_write(t->mm, a[2], &sid, 4) ? -A_EFAULT : 0;
    }
    case A_FIONREAD: {
        int n;
        if (ioctl(f->host, FIONREAD, &n) < 0)
            return -xerrno(errno);
        return mem_write(t->mm, a[2], &n, 4) ? -A_EFAULT : 0;
    }
    case A_FIONBIO: {
        int on;
        if (mem_read(t->mm, a[2], &on, 4))
            return -A_EFAULT;
        f->flags = on ? (f->flags | A_O_NONBLOCK) : (f->flags & ~A_O_NONBLOCK);
        return 0;
    }
    case A_FIOCLEX: t->p->fd->e[fd].cloexec = true; return 0;
    case A_FIONCLEX: t->p->fd->e[fd].cloexec = false; return 0;
    default:
        return -A_ENOTTY;
    }
}
