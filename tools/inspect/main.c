/*
 * ckpt-inspect - look into a pdc-ckpt store (ROOT/rank-<N>/, one LMDB
 * environment per rank) without changing it: statistics, records as JSON,
 * one object with its tags and regions, tag searches, a consistency check,
 * and a consistent copy of a live store. docs/TOOLS.md has the details.
 *
 * Every subcommand opens the store read-only (no LMDB write transaction,
 * no writer lock), so it works while a PDC server writes the store.
 *
 * Exit status: 0 success; 1 an error, nothing found, or (verify) problems
 * found; 2 bad usage. Errors: "ckpt-inspect: PATH: message" on stderr.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"

void usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " stat ROOT [--json]\n"
            "       " PROG " dump ROOT [--rank R] [--db NAME] [--prefix KEY] [--raw]\n"
            "       " PROG " get ROOT (--id ID | --name NAME [--time-step T]) [--json]\n"
            "       " PROG " find ROOT --tag NAME [--value V]\n"
            "       " PROG " verify ROOT [--json]\n"
            "       " PROG " copy ROOT DEST [--compact]\n"
            "       " PROG " import-legacy --store ROOT [--nranks N] FILE...\n"
            "       " PROG " -V | -h | --help      (COMMAND -h: this help too)\n"
            "ROOT is a pdc-ckpt store root (ROOT/rank-<N>/ per server rank); it is only\n"
            "read, also while a server writes it (import-legacy creates a new one from\n"
            "PDC's metadata_checkpoint.<rank> files). Exit status: 0 ok, 1 error, not found\n"
            "or problems found, 2 bad usage. See docs/TOOLS.md.\nDatabases for --db:");
    for (int db = 0; db < CKPT_DB_COUNT; db++)
        fprintf(f, " %s", ckpt_db_name(db));
    fputc('\n', f);
}

int cmd_help(void)
{
    usage(stdout);
    return finish_stdout();
}

int usage_err(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verrp(cmd, fmt, ap);
    va_end(ap);
    usage(stderr);
    return EXIT_USAGE;
}

int parse_root_json(int argc, char **argv, int *as_json)
{
    static const struct option lo[] = {{"json", no_argument, 0, 'j'}, HELP_OPT, {0, 0, 0, 0}};
    int c;
    *as_json = 0;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'h')
            return cmd_help();
        if (c != 'j') {
            usage(stderr);
            return EXIT_USAGE;
        }
        *as_json = 1;
    }
    c = check_operands(argc, argv, 1, 0, "ROOT");
    return c == EXIT_OK ? -1 : c;
}

int check_operands(int argc, char **argv, int want, int at_least, const char *what)
{
    int have = argc - optind;
    const char *cmd = strchr(argv[0], ' ') ? strchr(argv[0], ' ') + 1 : argv[0];
    if (have < want)
        return usage_err(cmd, "%s missing", what);
    if (have > want && !at_least)
        return usage_err(cmd, "unexpected argument \"%s\" (give %s)", argv[optind + want], what);
    return EXIT_OK;
}

static const struct {
    const char *name;
    int (*fn)(int, char **);
} cmds[] = {
    {"stat", cmd_stat}, {"dump", cmd_dump},     {"get", cmd_get},
    {"find", cmd_find}, {"verify", cmd_verify}, {"copy", cmd_copy},
    {"import-legacy", cmd_import_legacy},
};

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"version", no_argument, 0, 'V'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    /* "+": stop at the subcommand; its options are its own */
    while ((c = getopt_long(argc, argv, "+Vh", lo, NULL)) != -1) {
        switch (c) {
        case 'V':
            printf(PROG " %s (store format %u)\n", CKPT_INSPECT_VERSION, CKPT_FORMAT_VERSION);
            return EXIT_OK;
        case 'h':
            usage(stdout);
            return EXIT_OK;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return EXIT_USAGE;
    }
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        if (strcmp(argv[optind], cmds[i].name) == 0) {
            int sub_argc = argc - optind;
            char **sub_argv = argv + optind;
            /* getopt's messages (an unknown option, a missing value) then
             * start with "ckpt-inspect CMD:" */
            static char self[64];
            snprintf(self, sizeof self, PROG " %s", cmds[i].name);
            sub_argv[0] = self;
            optind = 0; /* glibc: restart getopt for the subcommand */
            /* a damaged store: LMDB faulting inside the store's reads
             * comes back as an error (docs/RELIABILITY.md) */
            if (ckpt_fault_guard_install() != 0)
                fprintf(stderr, PROG ": %s\n", ckpt_errmsg());
            return inspect_exit(cmds[i].fn(sub_argc, sub_argv));
        }
    }
    fprintf(stderr, PROG ": unknown command \"%s\"\n", argv[optind]);
    usage(stderr);
    return EXIT_USAGE;
}
