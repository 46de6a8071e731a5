/*
 * workload_restart.c - ckpt-workload restart (workload_cli.h): the
 * collective restart of this project's store (map; re-homing a store
 * written on another rank count; finishing an interrupted one), or with
 * --rebuild the tables read back into the model server, --check compared
 * with the workload's, --new-ids checked against every record.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "ckpt_hooks_mpi.h"
#include "progress.h"
#include "workload_cli.h"

int wl_cmd_restart(struct wl_args *a, int quiet)
{
    ckpt_hooks *h = NULL;
    model_server *m = NULL, *expect = NULL;
    struct ckpt_rebuild_stats st = {0, 0, 0, 0, 0};
    int rc;
    double t0, t1;

    struct ckpt_rehome_stats rs;
    struct ckpt_progress pr;
    memset(&rs, 0, sizeof rs);
    /* The collective restart starts fresh stores where there are none (a
     * server's first start); here a missing store is most likely a typo */
    int have = 1;
    if (wl_rank == 0 && !a->create) {
        have = wl_holds_ranks(a->root) || (a->hopts.shared_root && wl_holds_ranks(a->hopts.shared_root));
        if (!have)
            wl_fail("no store at %s (no rank-<N> directory%s); to start a new store there, add "
                 "--create", a->root, a->hopts.shared_root ? ", and no shared copy" : "");
    }
    if (wl_any_failed(!have))
        return 1;
    /* a re-homing shows rank 0's share of the old environments read (on a
     * terminal only) */
    ckpt_progress_begin(&pr, "restart: re-homing, rank 0 read", "old environments", 0);
    if (wl_rank == 0) {
        a->hopts.progress = ckpt_progress_cb;
        a->hopts.progress_arg = &pr;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    /* collective: finishes or undoes an interrupted re-homing, and re-homes
     * a store written by another rank count; on the same count it is the
     * map restart itself */
    rc = ckpt_hooks_restart_elastic(&h, &a->hopts, MPI_COMM_WORLD, &rs);
    ckpt_progress_end(&pr);
    a->hopts.progress = NULL;
    a->hopts.progress_arg = NULL;
    if (rc == 0 && a->rebuild) {
        if ((rc = ckpt_hooks_close(h)) != 0)
            ckpt_hooks_discard(h);
        h = NULL;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (rc == 0)
            rc = model_restart_rebuild(&m, &h, &a->hopts, &st);
    }
    t1 = MPI_Wtime();
    if (rc)
        wl_fail("restart: %s", ckpt_errmsg());
    if (rc == 0 && wl_rank == 0 && rs.recovered)
        printf("restart: an interrupted re-homing was rolled %s\n",
               rs.recovered > 0 ? "forward (completed)" : "back (undone)");
    if (rc == 0 && wl_rank == 0 && rs.old_nranks != rs.new_nranks)
        printf("restart: re-homed %llu records from %d to %d ranks, %llu moved, in %.6f s\n"
               "result: phase=rehome from=%d to=%d records=%llu moved=%llu seconds=%.9f\n",
               (unsigned long long)rs.records, rs.old_nranks, rs.new_nranks,
               (unsigned long long)rs.moved, rs.seconds, rs.old_nranks, rs.new_nranks,
               (unsigned long long)rs.records, (unsigned long long)rs.moved, rs.seconds);
    if (rc == 0 && a->rebuild && a->check && a->from_ranks == 0) {
        /* the rank count the workload was written with: the store knows */
        struct ckpt_store_info info;
        if ((rc = ckpt_store_info(&info, ckpt_hooks_store(h))) != 0)
            wl_fail("restart: %s", ckpt_errmsg());
        else
            a->p.nranks = info.origin_nranks;
    }
    if (rc == 0 && a->rebuild && a->check) {
        char why[256];
        if ((rc = model_create(&expect, wl_rank, wl_size, NULL)) == 0 &&
            (rc = (a->p.nranks == wl_size ? wl_run_stream(&a->p, expect, NULL)
                                            : wl_run_streams_homed(&a->p, wl_size, wl_rank, expect))) == 0 &&
            !model_equal(expect, m, why, sizeof why)) {
            rc = wl_fail("rebuilt tables differ from the workload's: %s", why);
        } else if (rc) {
            wl_fail("building the expected tables: %s", ckpt_strerror(rc));
        }
    }
    /* new ids must never collide with any record, re-homed or not: the
     * directory rank of a new id of this rank is this rank, so a record
     * with that id would be found here or in the id directory here */
    for (long k = 0; rc == 0 && k < a->new_ids; k++) {
        uint64_t id;
        int home;
        ckpt_hooks_read *rd = NULL;
        if ((rc = ckpt_hook_new_id(&id, h)) != 0 || (rc = ckpt_hooks_read_begin(&rd, h)) != 0) {
            wl_fail("new id: %s", ckpt_errmsg());
            break;
        }
        int r2 = ckpt_hooks_id_home(&home, rd, id);
        ckpt_hooks_read_end(rd);
        if (r2 != CKPT_E_NOTFOUND)
            rc = wl_fail("new id %llu is already in use (on rank %d)", (unsigned long long)id,
                      r2 == 0 ? home : -1);
    }
    if (rc == 0 && a->new_ids && wl_rank == 0)
        printf("restart: %ld new ids per rank, none in use\n", a->new_ids);
    model_destroy(expect);
    model_destroy(m);
    if (h && ckpt_hooks_close(h) != 0) {
        rc = wl_fail("close after restart: %s", ckpt_errmsg());
        ckpt_hooks_discard(h);
    }
    double tmax = wl_max_all(t1 - t0);
    long objs = wl_sum_all((long)st.objs), tags = wl_sum_all((long)st.kvtags), rss = wl_peak_rss_kb();
    if (wl_any_failed(rc != 0))
        return 1;
    if (wl_rank == 0) {
        const char *mode = a->rebuild ? "rebuild" : "map";
        if (!quiet) {
            printf("restart (%s): %d ranks, %.6f s (max over ranks)", mode, wl_size, tmax);
            if (a->rebuild)
                printf(", %ld objects and %ld kvtags rebuilt%s", objs, tags,
                       a->check ? ", tables equal to the workload's" : "");
            printf("\nresult: phase=restart_%s ranks=%d seconds=%.9f peak_rss_kb=%ld method=lmdb\n",
                   mode, wl_size, tmax, rss);
        } else {
            printf("  restart  %-7s %.6f s%s\n", mode, tmax,
                   a->check ? " (rebuilt tables equal the written ones)" : "");
        }
    }
    return 0;
}
