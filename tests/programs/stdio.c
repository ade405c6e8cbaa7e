/* stdio: files and formatted I/O.
 *
 *   - reads standard input line by line (stdio.stdin supplies it): prints
 *     each line's number, length and upper-cased text, and sums the numbers
 *     found by sscanf,
 *   - writes "stdio-test.tmp" in the current directory with fprintf of many
 *     formats and fwrite of binary records, reads it back with fgets,
 *     fscanf, fread, fseek/ftell/rewind, ungetc, then removes it and checks
 *     that it is gone,
 *   - the same round trip through tmpfile().
 * Must run in a writable current directory.  Exit status 0, or 1 with a
 * message on stderr if a file operation fails.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TMPNAME "stdio-test.tmp"

static void die(const char *what)
{
    fprintf(stderr, "stdio: %s: %s\n", what, strerror(errno));
    exit(1);
}

struct record { int32_t id; int32_t score; double weight; };

static void read_stdin(void)
{
    char line[256];
    int n = 0;
    long total = 0;
    while (fgets(line, sizeof line, stdin)) {
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n')
            line[--len] = '\0';
        n++;
        for (size_t i = 0; i < len; i++)
            line[i] = (char)toupper((unsigned char)line[i]);
        long a = 0, b = 0;
        int got = sscanf(line, "%*[^0-9-]%ld%*[^0-9-]%ld", &a, &b);
        if (got > 0)
            total += a + (got > 1 ? b : 0);
        printf("stdin %d (%zu): %s [%d numbers]\n", n, len, line, got < 0 ? 0 : got);
    }
    printf("stdin: %d lines, numbers sum to %ld\n", n, total);
}

static void write_formats(FILE *f)
{
    fprintf(f, "ints: %d %i %u %5d|%-5d|%05d %+d % d\n", -42, 17, 4000000000u, 7, 7, 7, 7, 7);
    fprintf(f, "hex: %x %X %#x %#o %o %08lx\n", 48879u, 48879u, 255u, 8u, 511u, 0xdeadbeefUL);
    fprintf(f, "sizes: %hhd %hd %ld %lld %zu %jd\n", (signed char)-3, (short)-300,
            -5000000000L, 123456789012345LL, (size_t)99, (intmax_t)-1);
    fprintf(f, "chars: %c%c%c %s|%10s|%-10s|%.3s\n", 'a', 'b', 'c', "str", "right", "left", "truncated");
    fprintf(f, "floats: %f %.2f %e %.3E %g %g %G %10.4f|%-10.1f|\n", 3.14159, 2.71828,
            12345.678, 0.000123, 0.0001, 1e20, 1e-10, -1.5, 99.95);
    fprintf(f, "hexfloat: %a %a\n", 1.0, -0.1);
    int count = 0;
    fprintf(f, "percent: 100%% done%n\n", &count);
    fprintf(f, "count: %d\n", count);
    fprintf(f, "star: %*d|%-*d|%.*f\n", 6, 12, 6, 34, 3, 1.0 / 3.0);
}

static void roundtrip(FILE *f, const char *label)
{
    write_formats(f);
    long text_end = ftell(f);
    struct record recs[4];
    for (int i = 0; i < 4; i++) {
        recs[i].id = i;
        recs[i].score = i * i * 100 - 7;
        recs[i].weight = i * 0.25;
    }
    if (fwrite(recs, sizeof recs[0], 4, f) != 4)
        die("fwrite");
    if (fflush(f) != 0)
        die("fflush");
    long end = ftell(f);
    printf("%s: text %ld bytes, total %ld bytes\n", label, text_end, end);

    rewind(f);
    char line[256];
    int n = 0;
    while (ftell(f) < text_end && fgets(line, sizeof line, f))
        printf("%s line %d: %s", label, ++n, line);

    /* fscanf from the start of the "floats:" line */
    rewind(f);
    for (int i = 0; i < 4; i++)
        if (!fgets(line, sizeof line, f))
            die("fgets");
    double d1, d2;
    if (fscanf(f, "floats: %lf %lf", &d1, &d2) != 2)
        die("fscanf");
    printf("%s fscanf: %.5f %.2f\n", label, d1, d2);

    /* ungetc, then binary records from the end backwards */
    if (fseek(f, 0, SEEK_SET) != 0)
        die("fseek");
    int c = fgetc(f);
    ungetc('I', f);
    printf("%s first char %c, after ungetc %c\n", label, c, fgetc(f));
    for (int i = 3; i >= 0; i--) {
        struct record r;
        if (fseek(f, text_end + i * (long)sizeof r, SEEK_SET) != 0)
            die("fseek");
        if (fread(&r, sizeof r, 1, f) != 1)
            die("fread");
        printf("%s record %d at %ld: id %d score %d weight %.2f\n", label, i,
               ftell(f) - (long)sizeof r, r.id, r.score, r.weight);
    }
    if (fseek(f, -3, SEEK_END) != 0)
        die("fseek");
    printf("%s ftell 3 before end: %ld\n", label, ftell(f));
    c = fgetc(f);
    c = fgetc(f);
    c = fgetc(f);
    c = fgetc(f);
    printf("%s past the end: EOF %d, feof %d\n", label, c == EOF, feof(f) != 0);
}

int main(void)
{
    read_stdin();

    FILE *f = fopen(TMPNAME, "w+");
    if (!f)
        die("fopen " TMPNAME);
    roundtrip(f, "file");
    if (fclose(f) != 0)
        die("fclose");
    if (remove(TMPNAME) != 0)
        die("remove");
    f = fopen(TMPNAME, "r");
    printf("after remove: fopen %s (%s)\n", f ? "succeeded" : "failed",
           f ? "-" : strerror(errno));
    if (f)
        fclose(f);

    f = tmpfile();
    if (!f)
        die("tmpfile");
    roundtrip(f, "tmpfile");
    fclose(f);
    return 0;
}
