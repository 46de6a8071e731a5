/*
 * rel-damage - damages one rank of a store on disk, for the reliability
 * scripts (the same damage as test_damaged.c, through rel_util):
 *
 *   rel-damage ROOT RANK truncate BYTES     cut data.mdb to BYTES (negative:
 *                                           that many bytes short of its size)
 *   rel-damage ROOT RANK flip STRING        flip a bit in the NUL ending
 *                                           STRING inside a record (every copy)
 *   rel-damage ROOT RANK version V          meta record of format version V
 *   rel-damage ROOT RANK foreign            another program's LMDB environment
 *   rel-damage ROOT RANK empty-env          an LMDB environment with nothing
 *                                           committed (interrupted creation)
 *   rel-damage ROOT RANK page SEED          a seeded page of data.mdb overwritten
 *                                           with seeded garbage
 *   rel-damage ROOT RANK header SEED        3 seeded bits flipped in the header
 *                                           of a seeded page
 *                                           (both print the page number)
 *
 * Exit 0 on success, 1 on failure (message on stderr), 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rel_util.h"

static int usage(void)
{
    fprintf(stderr, "usage: rel-damage ROOT RANK truncate BYTES | flip STRING | version V |"
                    " foreign | empty-env | page SEED | header SEED\n");
    return 2;
}

int main(int argc, char **argv)
{
    char why[8192] = "", path[4200];
    if (argc < 4)
        return usage();
    const char *root = argv[1], *what = argv[3];
    int rank = atoi(argv[2]), rc = 0;
    snprintf(path, sizeof path, "%s/rank-%d/data.mdb", root, rank);
    if (strcmp(what, "truncate") == 0 && argc == 5) {
        long n = atol(argv[4]), size = rel_file_size(path);
        if (n < 0)
            n += size;
        if (size < 0 || n < 0 || truncate(path, n) != 0) {
            snprintf(why, sizeof why, "%s: cannot truncate to %s", path, argv[4]);
            rc = -1;
        }
    } else if (strcmp(what, "flip") == 0 && argc == 5) {
        int k = rel_flip_after(root, rank, argv[4], why, sizeof why);
        if (k == 0)
            snprintf(why, sizeof why, "%s: \"%s\" is in no record", path, argv[4]);
        rc = k > 0 ? 0 : -1;
    } else if (strcmp(what, "version") == 0 && argc == 5) {
        rc = rel_set_meta_version(root, rank, (uint32_t)strtoul(argv[4], NULL, 10), why, sizeof why);
    } else if (strcmp(what, "foreign") == 0 && argc == 4) {
        rc = rel_make_foreign(root, rank, 0, why, sizeof why);
    } else if ((strcmp(what, "page") == 0 || strcmp(what, "header") == 0) && argc == 5) {
        long pg = rel_damage_page(root, rank, what[0] == 'p' ? REL_DAMAGE_GARBAGE : REL_DAMAGE_HEADER,
                                  strtoull(argv[4], NULL, 10), why, sizeof why);
        if (pg >= 0)
            printf("%ld\n", pg);
        rc = pg >= 0 ? 0 : -1;
    } else if (strcmp(what, "empty-env") == 0 && argc == 4) {
        rc = rel_make_empty_env(root, rank, why, sizeof why);
    } else {
        return usage();
    }
    if (rc) {
        fprintf(stderr, "rel-damage: %s\n", why);
        return 1;
    }
    return 0;
}
