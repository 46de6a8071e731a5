/*
 * powerloss_workload.c - the workload of the power-loss test, run under
 * crash_shim.so (LD_PRELOAD), which records its writes and syncs.
 *
 *   powerloss_workload ROOT MODE SEED N K [SESSIONS]
 *
 * Applies mutations 0..N-1 of SEED (powerloss_model.c) to rank 0 of a new
 * store at ROOT in sync mode MODE, committing every K mutations (no
 * time-based commits), in SESSIONS sessions (default 2): each opens the
 * store, writes its share and closes it, except the last, which ends
 * without closing (ckpt_store_discard) when SESSIONS is negative. A short
 * sleep after each commit lets the background thread sync and merge.
 * PDC_CKPT_POWERLOSS_GUARD=off runs it without the power-loss guard (to
 * see what that risks: the test then fails on the images it corrupts).
 *
 * Markers in the shim's log (shim_mark):
 *   "pre" M   the next call may commit mutations up to M (before it)
 *   "commit" M  mutations 0..M-1 are committed (after the call returned)
 *   "id" I    ckpt_store_next_id handed out id I (after it returned): right
 *             after each open and each commit, with nothing staged
 * The checker derives from them which committed prefixes a crash image
 * may hold, and that no id handed out before the crash is handed out
 * again after it.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ckpt_hooks.h" /* ckpt_rec_keys */
#include "ckpt_store.h"
#include "powerloss_model.h"

static void (*mark_fn)(uint64_t, const char *);

static void mark(uint64_t v, const char *what)
{
    if (mark_fn)
        mark_fn(v, what);
}

/* An id, marked once handed out (nothing is staged: an id call that
 * commits commits no mutation). 0, or 1 after saying why. */
static int take_id(ckpt_store *st)
{
    uint64_t id;
    if (ckpt_store_next_id(&id, st) != 0) {
        fprintf(stderr, "next id: %s\n", ckpt_errmsg());
        return 1;
    }
    mark(id, "id");
    return 0;
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s ROOT MODE SEED N K [SESSIONS]\n", argv[0]);
        return 2;
    }
    void *sym = dlsym(RTLD_DEFAULT, "shim_mark");
    memcpy(&mark_fn, &sym, sizeof mark_fn); /* a function pointer from dlsym (POSIX) */
    int mode = ckpt_sync_mode_parse(argv[2]);
    uint64_t seed = strtoull(argv[3], NULL, 10), n = strtoull(argv[4], NULL, 10);
    unsigned k = (unsigned)strtoul(argv[5], NULL, 10);
    int sessions = argc > 6 ? atoi(argv[6]) : 2, discard_last = sessions < 0;
    if (sessions < 0)
        sessions = -sessions;
    if (mode < 0 || k == 0 || sessions < 1)
        return 2;
    static struct plm m;
    plm_init(&m, seed);
    for (int s = 0; s < sessions; s++) {
        struct ckpt_store_opts o = CKPT_STORE_OPTS_INIT;
        ckpt_store *st;
        o.root = argv[1];
        o.rec_keys = ckpt_rec_keys; /* the hooks' records */
        o.sync_mode = mode;
        o.commit_every = k;
        o.commit_ms = 0;
        o.sync_ms = 20;
        o.sync_kb = 16;
        o.tagidx_merge = 200;
        o.map_size = (size_t)1 << 20; /* grows while the workload runs */
        const char *guard = getenv("PDC_CKPT_POWERLOSS_GUARD");
        o.no_powerloss_guard = guard != NULL && strcmp(guard, "off") == 0;
        mark(m.n, "pre");
        if (ckpt_store_open(&st, &o) != 0) {
            fprintf(stderr, "open: %s\n", ckpt_errmsg());
            return 1;
        }
        mark(m.n, "commit");
        if (take_id(st) != 0)
            return 1;
        uint64_t end = n * (uint64_t)(s + 1) / (uint64_t)sessions;
        while (m.n < end) {
            struct plm_op op;
            plm_next(&m, &op);
            int commits = ckpt_store_pending(st) + 1 >= k;
            if (commits)
                mark(m.n + 1, "pre");
            if (plm_stage(st, &op) != 0) {
                fprintf(stderr, "mutation %llu: %s\n", (unsigned long long)m.n,
                        ckpt_errmsg());
                return 1;
            }
            plm_apply(&m, &op);
            if (commits) {
                if (ckpt_store_pending(st) != 0) {
                    fprintf(stderr, "mutation %llu did not commit\n", (unsigned long long)m.n);
                    return 1;
                }
                mark(m.n, "commit");
                if (take_id(st) != 0)
                    return 1;
                pause_us(300);
            }
        }
        if (discard_last && s == sessions - 1) {
            ckpt_store_discard(st);
            break;
        }
        mark(m.n, "pre");
        if (ckpt_store_close(st) != 0) {
            fprintf(stderr, "close: %s\n", ckpt_errmsg());
            return 1;
        }
        mark(m.n, "commit");
        mark(m.n, "closed");
    }
    ckpt_store_wait_closed();
    return 0;
}
