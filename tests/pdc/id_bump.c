/*
 * id_bump - moves the id sequence of one rank of a closed store so that
 * only LEFT ids remain ((rank + 1) * 1e9 + seq, seq < 1e9): what a rank
 * that handed out about 10^9 ids, or restarted after some 60 crashes
 * (each skips 2^24 ids), has left. For test_pdc_noid.sh.
 *   usage: id_bump ROOT RANK NRANKS LEFT
 */
#include <stdio.h>
#include <stdlib.h>

#include "ckpt_store.h"

int main(int argc, char **argv)
{
    struct ckpt_store_opts o = CKPT_STORE_OPTS_INIT;
    struct ckpt_store_info info;
    ckpt_store *st;
    int rc;
    if (argc != 5) {
        fprintf(stderr, "usage: id_bump ROOT RANK NRANKS LEFT\n");
        return 2;
    }
    o.root = argv[1];
    o.rank = atoi(argv[2]);
    o.nranks = atoi(argv[3]);
    o.create = 0;
    uint64_t left = strtoull(argv[4], NULL, 10);
    if (left < 1 || left >= CKPT_ID_BASE) {
        fprintf(stderr, "id_bump: LEFT must be in [1, 1e9)\n");
        return 2;
    }
    if ((rc = ckpt_store_open(&st, &o)) != 0) {
        fprintf(stderr, "id_bump: %s\n", ckpt_errmsg());
        return 1;
    }
    /* the last id handed out is the one before the first of the LEFT */
    rc = ckpt_store_reserve_id(st, ((uint64_t)o.rank + 1) * CKPT_ID_BASE + CKPT_ID_BASE - left - 1);
    if (rc == 0)
        rc = ckpt_store_checkpoint(st);
    if (rc == 0)
        rc = ckpt_store_info(&info, st);
    if (rc != 0) {
        fprintf(stderr, "id_bump: %s\n", ckpt_errmsg());
        ckpt_store_close(st);
        return 1;
    }
    if ((rc = ckpt_store_close(st)) != 0) {
        fprintf(stderr, "id_bump: close: %s\n", ckpt_errmsg());
        return 1;
    }
    printf("%llu\n", (unsigned long long)(CKPT_ID_BASE - info.id_seq));
    return 0;
}
