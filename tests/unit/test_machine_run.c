/*
 * Unit tests for a whole machine through its public interface: spawn a
 * test program (build/programs, skipped when absent), run it, read the
 * results and the notices a collector gets.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine/machine.h"

static const char *program(const char *name)
{
    static char path[512];
    const char *build = getenv("BUILD");
    snprintf(path, sizeof path, "%s/programs/%s", build ? build : "build", name);
    return access(path, X_OK) == 0 ? path : NULL;
}

typedef struct seen {
    int loads, exits, exec_loads;
    char build_id[129];
} seen;

static void on_image(void *ctx, const axp_image_event *e)
{
    seen *s = ctx;
    if (e->kind == AXP_PROCESS_EXIT) {
        s->exits++;
        return;
    }
    if (e->kind != AXP_IMAGE_LOAD)
        return;
    s->loads++;
    if (strstr(e->path, "intloop-dyn")) {
        s->exec_loads++;
        snprintf(s->build_id, sizeof s->build_id, "%s", e->build_id);
        cr_assert_eq(e->pid, 1000);
        cr_assert_eq(e->base + (uint64_t)e->link, 0x120000000ULL, "an EXEC image runs at its link address");
    }
}

Test(machine_run, runs_a_program_and_reports_images)
{
    const char *p = program("intloop-dyn");
    if (!p)
        cr_skip_test("build/programs/intloop-dyn missing (make programs)");
    char err[512];
    axp_config cfg = { .ncpus = 2, .exact = true };
    axp_machine *m = axp_new(&cfg, err, sizeof err);
    cr_assert(m, "%s", err);
    seen s = {0};
    axp_set_image_hook(m, on_image, &s);
    char *argv[] = { (char *)p, NULL }, *envp[] = { NULL };
    FILE *devnull = freopen("/dev/null", "w", stdout);
    cr_assert(devnull);
    cr_assert_eq(axp_spawn(m, p, argv, envp, err, sizeof err), 0, "%s", err);
    cr_assert_eq(axp_run(m), 0);
    cr_assert_gt(axp_instructions(m), 100000);
    cr_assert_geq(s.exec_loads, 1, "the executable's text was announced");
    cr_assert_geq(s.loads, 3, "and the interpreter's and libc's");
    cr_assert_eq(s.exits, 1);
    cr_assert_eq(strlen(s.build_id), 40, "with its build-id");

    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    cr_assert_eq(axp_write_exact(m, f), 0);
    fclose(f);
    char want[200];
    snprintf(want, sizeof want, "image 0 %s ", s.build_id);
    cr_assert(strstr(text, want), "exact counts name the image by build-id");
    free(text);
    f = open_memstream(&text, &len);
    cr_assert_eq(axp_write_stats(m, f), 0);
    fclose(f);
    cr_assert(strstr(text, "\"instructions\": "));
    cr_assert(strstr(text, "\"processes\": ["));
    free(text);
    axp_free(m);
}

Test(machine_run, errors_name_the_file)
{
    char err[512];
    axp_config cfg = { .ncpus = 1 };
    axp_machine *m = axp_new(&cfg, err, sizeof err);
    char *argv[] = { "/no/such/file", NULL }, *envp[] = { NULL };
    cr_assert_neq(axp_spawn(m, "/no/such/file", argv, envp, err, sizeof err), 0);
    cr_assert(strstr(err, "/no/such/file"), "%s", err);
    axp_free(m);
    axp_config bad = { .ncpus = 0 };
    cr_assert_null(axp_new(&bad, err, sizeof err));
    cr_assert(strstr(err, "--cpus"), "%s", err);
}
