/* cpo: the analysis front end.  Dispatches to one subcommand per file. */
#include <stdio.h>
#include <string.h>

#include "tools/cpo/commands.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *usage;
} commands[] = {
    { "disasm", cmd_disasm, "disasm IMAGE [--proc NAME]   disassemble an image or one procedure" },
    { "info",   cmd_info,   "info IMAGE                   image summary: type, entry, GP, build-id, sections" },
    { "syms",   cmd_syms,   "syms IMAGE                   symbol table" },
    { "cfg",    cmd_cfg,    "cfg IMAGE [--proc NAME] [--dot] control-flow graph of a procedure, or a summary" },
    { "addrmap", cmd_addrmap, "addrmap IMAGE [ADDR]        original address of ADDR in a rewritten image, or the map;\n"
                              "                                 --verify ORIGINAL checks it, --original FILE recovers it" },
    { "relocs", cmd_relocs, "relocs IMAGE                 every relocation, by section" },
    { "cat",    cmd_cat,    "cat [--header] PROFILE       one profile file: header, then offset and count lines" },
    { "prof",   cmd_prof,   "prof [--db DIR] [-i] [-e EVENT]... [--epoch E|--all-epochs] [--json] [--limit N]\n"
                            "                                 samples per procedure (per image with -i)" },
    { "list",   cmd_list,   "list PROC [--db DIR] [-e EVENT]... [--epoch E|--all-epochs] [--image IMAGE] [--source]\n"
                            "                                 one procedure's samples per instruction" },
    { "stats",  cmd_stats,  "stats [-e EVENT] [--limit N] SET...\n"
                            "                                 per-procedure statistics across profile sets" },
    { "diff",   cmd_diff,   "diff [-e EVENT] [-i] [--limit N] A B\n"
                            "                                 per-image and per-procedure differences of two sets" },
    { "export", cmd_export, "export --pprof FILE [--db DIR] [-e EVENT]... [--epoch E|--all-epochs]\n"
                            "                                 a selection as a gzipped pprof profile" },
    { "calc",   cmd_calc,   "calc --image IMAGE --all --json [--db DIR] [--epoch E|--all-epochs]\n"
                            "                                 estimated executions and CPI per block, edge and instruction" },
    { "accuracy", cmd_accuracy, "accuracy --exact FILE --image IMAGE [--db DIR] [--epoch E|--all-epochs] [--json]\n"
                            "                                 frequency estimates against exact counts (DCPI Figures 8, 9)" },
    { "paths",  cmd_paths,  "paths IMAGE --from FILE [--proc NAME] [--metric M] [--top N] [--threshold F] [--json]\n"
                            "       [--exact FILE]    hot paths of a path profile, or its check against exact counts" },
    { "cct",    cmd_cct,    "cct --from FILE [--metric M] [--depth N] [--min F] [--json | --folded]\n"
                            "                         a calling context tree with inclusive and exclusive metrics" },
    { "values", cmd_values, "values [PROC] [--db DIR] [--epoch E|--all-epochs] [--image IMAGE]\n"
                            "                                 [--kind result|address|latency|target] [--json]\n"
                            "                                 hot values per instruction, load latencies by level" },
    { "profileme", cmd_profileme, "profileme [PROC] [--db DIR] [--epoch E|--all-epochs] [--image IMAGE] [--json]\n"
                            "                                 [--histories N]  ProfileMe samples per instruction: rates,\n"
                            "                                 latencies, wasted issue slots, branch histories" },
    { "flush",  cmd_flush,  "flush --db DIR               drain every machine and merge into the database" },
    { "epoch",  cmd_epoch,  "epoch --db DIR               flush into the current epoch, then start a new one" },
    { "quit",   cmd_quit,   "quit --db DIR                flush, then stop the daemon" },
    { "report", cmd_report, "report BEFORE AFTER -o DIR [--db DIR] [--epoch E] [--limit N]  before/after report, text and HTML" },
    { "serve",  cmd_serve,  "serve --config FILE [--once] [--for SECONDS]  the continuous-optimization service" },
    { "status", cmd_status, "status --config FILE         what cpo serve is doing and has done" },
};

static void usage(FILE *f)
{
    fprintf(f, "usage: cpo COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  cpo %s\n", commands[i].usage);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "cpo: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
