/*
 * Fuzz target for cpo serve's two parsers (service/config.c, the state file
 * of service/store.c): any input is either refused with a message naming
 * the file, or read into a configuration or state that holds together.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/internal.h"
#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    char err[1024] = "";
    svc_config c;
    if (svc_config_load(path, "/nonexistent", &c, err, sizeof err)) {
        if (!c.db || !c.state || !c.nprograms || !c.axp || !c.qemu || c.db[0] != '/')
            abort();
        for (size_t i = 0; i < c.nprograms; i++)
            if (!c.programs[i].original || !c.programs[i].deploy || !c.programs[i].test ||
                !strcmp(c.programs[i].original, c.programs[i].deploy))
                abort();
        svc_config_free(&c);
    } else if (strncmp(err, path, strlen(path))) {
        abort();    /* every refusal names the file */
    }
    svc_state st = { .stale = -1, .reference = -1 };
    err[0] = 0;
    if (svc_state_read(path, &st, err, sizeof err)) {
        if (!st.phase[0])
            abort();
    } else if (strncmp(err, path, strlen(path))) {
        abort();
    }
    svc_state_free(&st);
    return 0;
}
