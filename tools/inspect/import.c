/*
 * import.c - ckpt-inspect import-legacy: PDC's legacy checkpoint files
 * (metadata_checkpoint.<rank>) into a new pdc-ckpt store, through the
 * importer in tools/legacy (all or nothing; docs/TOOLS.md, "Migrating").
 *
 *   ckpt-inspect import-legacy --store ROOT [--nranks N] FILE...
 *
 * N defaults to the number of files (one per old server rank); any other
 * count re-homes the records by PDC's routing rule.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "inspect.h"
#include "legacy.h"

int cmd_import_legacy(int argc, char **argv)
{
    static const struct option lo[] = {
        {"store", required_argument, 0, 's'}, {"nranks", required_argument, 0, 'n'}, HELP_OPT,
        {0, 0, 0, 0}};
    const char *root = NULL;
    int64_t nranks = 0;
    int c;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        if (c == 'h') {
            return cmd_help();
        } else if (c == 's') {
            root = optarg;
        } else if (c == 'n') {
            if (parse_i64(optarg, &nranks) != 0 || nranks < 1 || nranks > 1048576) {
                errp(optarg, "--nranks needs a rank count from 1 to 1048576");
                return EXIT_USAGE;
            }
        } else {
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (root == NULL)
        return usage_err("import-legacy", "--store ROOT missing");
    if ((c = check_operands(argc, argv, 1, 1, "FILE...")) != EXIT_OK)
        return c;
    size_t nfiles = (size_t)(argc - optind);
    if (nranks == 0)
        nranks = (int64_t)nfiles;
    struct legacy_import_stats st;
    char err[1024] = "", summary[4096];
    int rc = legacy_import(root, (int)nranks, (const char *const *)(argv + optind), nfiles, &st, err,
                           sizeof err);
    if (rc != 0) {
        /* the importer's messages start with the file or the root */
        fprintf(stderr, PROG ": %s\n", err[0] ? err : ckpt_strerror(rc));
        fprintf(stderr, PROG ": %s: nothing was imported\n", root);
        return EXIT_FAIL;
    }
    legacy_import_summary(summary, sizeof summary, &st);
    fputs(summary, stdout);
    if (summary[0] && summary[strlen(summary) - 1] != '\n')
        fputc('\n', stdout);
    return finish_stdout();
}
