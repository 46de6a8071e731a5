/*
 * ckpt-workload - runs the model PDC server on every MPI rank against a
 * pdc-ckpt store: write a deterministic workload, restart (map or
 * rebuild), verify record by record, or all of it as a demo.
 *
 *   ckpt-workload write   --store DIR --objects N [--tags-per-object M] [--tagged T] [--force]
 *   ckpt-workload restart --store DIR [--create] [--rebuild [--check --objects N ...]]
 *   ckpt-workload verify  --store DIR --objects N [...] [--after-crash] [--json]
 *   ckpt-workload demo    [--store DIR] [--objects N] [--tags-per-object M] [--force]
 *
 * A store that is replaced (write --force, demo --force) is replaced only
 * once the new one is complete: it is written beside the old one
 * (ROOT.new-PID), under the old store's lock (ckpt_root_lock: refused
 * while any process has it open for writing), then renamed into place.
 *
 * write and restart take --method NAME (default lmdb, this project's store);
 * the other methods (fwrite, bulki, sqlite, rocksdb, lmdb-raw) are the
 * benchmark's, in tools/bench/. Result lines carry peak_rss_kb: getrusage's
 * ru_maxrss of each rank's process, maximum over ranks.
 *
 * Times are the maximum over ranks. Exit 0 on success, 1 on any failure
 * (the failing rank says what on stderr), 2 on bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "ckpt_fs.h"
#include "ckpt_hooks_mpi.h"
#include "methods.h"
#include "model_server.h"
#include "progress.h"
#include "workload.h"

#define PROG "ckpt-workload"

struct args {
    const char *cmd;
    char root[4096];
    int have_store;
    struct wl_params p;
    int rebuild, check, after_crash, force, create;
    int from_ranks;          /* rank count the workload was written with (0: the store's) */
    long new_ids;            /* restart: hand out this many new ids and check them */
    struct ckpt_hooks_opts hopts;
    const char *method; /* --method; NULL: lmdb */
};

static int g_rank, g_size;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " write   --store DIR --objects N [--tags-per-object M] [--tagged T] [--force]\n"
            "       " PROG " restart --store DIR [--create] [--rebuild [--check --objects N ...]]\n"
            "       " PROG " verify  --store DIR --objects N [...] [--after-crash]\n"
            "       " PROG " demo    [--store DIR] [--objects N] [--tags-per-object M] [--force]\n"
            "       " PROG " -V | -h | --help      (COMMAND -h: this help too)\n"
            "Run under mpiexec: one server rank per MPI rank.\n"
            "--store DIR: the store root; without it, write, restart and verify use\n"
            "         $PDC_CKPT_DIR when that is set (demo: $PDC_TMPDIR/pdc-ckpt-demo,\n"
            "         ./pdc_tmp/pdc-ckpt-demo without PDC_TMPDIR)\n"
            "options: --seed S (0)  --region-every K (8)  --sync sync|interval|close\n"
            "         --force (write, demo: replace an existing store, once the new one is\n"
            "         complete; refused while another process has it open for writing)\n"
            "         --create (restart: start a new store if there is none; else an error)\n"
            "         --from-ranks P (verify, restart --check: the workload was written on\n"
            "         P ranks; default: what the store recorded when it was written)\n"
            "         --new-ids K (restart: hand out K new ids, check none is in use)\n"
            "         --commit-every K  --commit-ms T\n"
            "         --method NAME (write, restart): %s (default lmdb)\n"
            "environment: PDC_CKPT_DIR (the store, see --store), PDC_TMPDIR,\n"
            "         PDC_CKPT_SYNC, PDC_CKPT_COMMIT_EVERY, PDC_CKPT_COMMIT_MS,\n"
            "         PDC_CKPT_SYNC_MS, PDC_CKPT_SHARED_DIR (docs/PDC_INTEGRATION.md)\n"
            "exit status: 0 ok, 1 failure, 2 bad usage\n",
            bench_method_names());
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    /* one write per line: stderr is unbuffered, and the lines of several
     * ranks would interleave mid-line (mpiexec forwards what it reads) */
    char line[2048];
    va_list ap;
    int n = snprintf(line, sizeof line, PROG ": rank %d: ", g_rank);
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    fputs(line, stderr);
    return 1;
}

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0)
        return -1;
    *out = v;
    return 0;
}

/* 0 parsed, 1 help asked for, -1 bad usage (said on stderr by rank 0). */
static int parse_args(struct args *a, int argc, char **argv)
{
    static const struct option lo[] = {
        {"store", required_argument, 0, 's'},       {"objects", required_argument, 0, 'n'},
        {"tags-per-object", required_argument, 0, 'm'}, {"tagged", required_argument, 0, 't'},
        {"seed", required_argument, 0, 'S'},        {"region-every", required_argument, 0, 'R'},
        {"sync", required_argument, 0, 'y'},        {"commit-every", required_argument, 0, 'k'},
        {"commit-ms", required_argument, 0, 'T'},   {"rebuild", no_argument, 0, 'b'},
        {"check", no_argument, 0, 'c'},             {"after-crash", no_argument, 0, 'a'},
        {"force", no_argument, 0, 'f'},             {"help", no_argument, 0, 'h'},
        {"method", required_argument, 0, 'M'},      {"create", no_argument, 0, 'C'},
        {"from-ranks", required_argument, 0, 'F'},  {"new-ids", required_argument, 0, 'I'},
        {0, 0, 0, 0}};
    struct ckpt_hooks_opts def = CKPT_HOOKS_OPTS_INIT;
    const char *env_dir = getenv("PDC_CKPT_DIR");
    long v;
    int c, li = 0;

    memset(a, 0, sizeof *a);
    a->hopts = def;
    a->p.region_every = 8;
    if (argc < 2) {
        if (g_rank == 0)
            fprintf(stderr, PROG ": a command is needed (write, restart, verify or demo)\n");
        return -1;
    }
    a->cmd = argv[1];
    if (strcmp(a->cmd, "-h") == 0 || strcmp(a->cmd, "--help") == 0)
        return 1;
    if (strcmp(a->cmd, "write") != 0 && strcmp(a->cmd, "restart") != 0 &&
        strcmp(a->cmd, "verify") != 0 && strcmp(a->cmd, "demo") != 0) {
        if (g_rank == 0)
            fprintf(stderr, PROG ": unknown command \"%s\" (use write, restart, verify or demo)\n",
                    a->cmd);
        return -1;
    }
    if (ckpt_hooks_opts_from_env(&a->hopts, a->root, sizeof a->root) != 0) {
        if (g_rank == 0)
            fprintf(stderr, PROG ": %s\n", ckpt_store_errmsg(NULL));
        return -1;
    }
    /* PDC_CKPT_DIR names the store when --store does not (not for demo,
     * which keeps its own store away from a server's) */
    a->have_store = env_dir != NULL && *env_dir != 0 && strcmp(a->cmd, "demo") != 0;
    optind = 2;
    opterr = g_rank == 0; /* getopt names a bad option; once, not once per rank */
    while ((c = getopt_long(argc, argv, "h", lo, &li)) != -1) {
        switch (c) {
        case 's':
            snprintf(a->root, sizeof a->root, "%s", optarg);
            a->have_store = 1;
            break;
        case 'n':
        case 'm':
        case 't':
        case 'R':
        case 'S':
        case 'k':
        case 'T':
        case 'F':
        case 'I':
            if (parse_long(optarg, &v) != 0 || (c == 'F' && (v < 1 || v > 1 << 20))) {
                if (g_rank == 0)
                    fprintf(stderr, PROG ": --%s needs a %s integer, not \"%s\"\n", lo[li].name,
                            c == 'F' ? "positive" : "non-negative", optarg);
                return -1;
            }
            if (c == 'n')
                a->p.objects = v;
            else if (c == 'm')
                a->p.tags_per_object = v;
            else if (c == 't')
                a->p.tagged = v;
            else if (c == 'R')
                a->p.region_every = v;
            else if (c == 'S')
                a->p.seed = (unsigned)v;
            else if (c == 'k')
                a->hopts.commit_every = (unsigned)v;
            else if (c == 'F')
                a->from_ranks = (int)v;
            else if (c == 'I')
                a->new_ids = v;
            else
                a->hopts.commit_ms = (unsigned)v;
            break;
        case 'y':
            if ((a->hopts.sync_mode = ckpt_sync_mode_parse(optarg)) < 0) {
                if (g_rank == 0)
                    fprintf(stderr, PROG ": --sync: use sync, interval or close, not \"%s\"\n",
                            optarg);
                return -1;
            }
            break;
        case 'b':
            a->rebuild = 1;
            break;
        case 'c':
            a->check = 1;
            break;
        case 'a':
            a->after_crash = 1;
            break;
        case 'f':
            a->force = 1;
            break;
        case 'C':
            a->create = 1;
            break;
        case 'h':
            return 1;
        case 'M':
            if (bench_method_is_lmdb(optarg) < 0) {
                if (g_rank == 0)
                    fprintf(stderr, PROG ": --method: use one of %s, not \"%s\"\n",
                            bench_method_names(), optarg);
                return -1;
            }
            a->method = optarg;
            break;
        default:
            return -1; /* getopt said which option */
        }
    }
    if (optind != argc) {
        if (g_rank == 0)
            fprintf(stderr, PROG ": unexpected argument \"%s\"\n", argv[optind]);
        return -1;
    }
    a->hopts.store_root = a->root;
    a->hopts.rank = g_rank;
    a->hopts.nranks = g_size;
    a->p.rank = g_rank;
    a->p.nranks = a->from_ranks > 0 ? a->from_ranks : g_size;
    return 0;
}

/* The command line after the program name, for "run this instead". */
static char g_args[1024];

static void keep_args(int argc, char **argv)
{
    size_t n = 0;
    for (int i = 1; i < argc && n + 2 < sizeof g_args; i++) {
        int w = snprintf(g_args + n, sizeof g_args - n, "%s%s", i > 1 ? " " : "", argv[i]);
        if (w < 0 || (size_t)w >= sizeof g_args - n)
            break;
        n += (size_t)w;
    }
}

/* 1 if dir holds a rank-<N> entry (in a shared directory: also the
 * rank-<N>.new/.old of an interrupted publish). */
static int holds_ranks(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int found = 0;
    if (d == NULL)
        return 0;
    while (!found && (de = readdir(d)) != NULL)
        found = strncmp(de->d_name, "rank-", 5) == 0;
    closedir(d);
    return found;
}

/* Rank 0: what ROOT/rank-0's meta says (rank count now, and when first
 * written), broadcast to every rank. 0, or 1 after rank 0 said why. */
static int store_shape(const char *root, int *nranks, int *origin)
{
    int sh[3] = {0, 0, 0};
    if (g_rank == 0) {
        ckpt_store *st;
        struct ckpt_store_info m;
        int rc = ckpt_store_open_readonly(&st, root, 0);
        if (rc == 0) {
            rc = ckpt_store_info(&m, st);
            ckpt_store_close(st);
        }
        if (rc)
            sh[0] = fail("%s", ckpt_store_errmsg(NULL));
        else {
            sh[1] = m.nranks;
            sh[2] = m.origin_nranks;
        }
    }
    MPI_Bcast(sh, 3, MPI_INT, 0, MPI_COMM_WORLD);
    *nranks = sh[1];
    *origin = sh[2];
    return sh[0];
}

/* Where a replacing write builds its store: ROOT.new-PID, beside ROOT
 * (same file system, so that it can be renamed into place). */
static int sibling_root(char *out, size_t n, const char *root)
{
    size_t len = strlen(root);
    while (len > 1 && root[len - 1] == '/')
        len--;
    int w = snprintf(out, n, "%.*s.new-%ld", (int)len, root, (long)getpid());
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Put the new rank-<rank> (complete, closed) in place of the old one. */
static int swap_rank(const char *root, const char *newroot, int rank)
{
    char cur[4200], nw[4200], old[4200];
    struct stat sb;
    snprintf(cur, sizeof cur, "%s/rank-%d", root, rank);
    snprintf(nw, sizeof nw, "%s/rank-%d", newroot, rank);
    snprintf(old, sizeof old, "%s/rank-%d.old", newroot, rank);
    if (lstat(cur, &sb) == 0 && rename(cur, old) != 0)
        return fail("moving the old %s aside to %s: %s", cur, old, strerror(errno));
    if (rename(nw, cur) != 0)
        return fail("moving the new %s into place at %s: %s (the old store is in %s)", nw, cur,
                    strerror(errno), old);
    return 0;
}

/* Rank 0, after every rank swapped: old ranks beyond this job's count go
 * too (they belonged to the replaced store), then the old layout. */
static int finish_replace(const char *root, const char *newroot)
{
    DIR *d = opendir(root);
    struct dirent *de;
    char a[4200], b[4200];
    int rc = 0;
    while (d && (de = readdir(d)) != NULL) {
        int r = ckpt_rank_of_name(de->d_name);
        if (r < g_size)
            continue;
        if (snprintf(a, sizeof a, "%s/rank-%d", root, r) >= (int)sizeof a ||
            snprintf(b, sizeof b, "%s/rank-%d.old", newroot, r) >= (int)sizeof b)
            continue;
        if (rename(a, b) != 0)
            rc = fail("moving the old %s aside: %s", a, strerror(errno));
    }
    if (d)
        closedir(d);
    if (rc == 0 && ckpt_fs_fsync(root) != 0)
        rc = fail("%s: fsync: %s", root, strerror(errno));
    if (rc == 0 && ckpt_fs_rmtree(newroot) != 0)
        rc = fail("removing the replaced store in %s: %s", newroot, strerror(errno));
    return rc;
}

/* ------------------------------------------------------------------ */
/* write                                                               */
/* ------------------------------------------------------------------ */

struct apply {
    model_server *m;
    int keep_ids;       /* records keep the stream's ids (re-homed tables) */
    int home, nranks;   /* with keep_ids: apply only what is homed on `home` */
    uint64_t *members;
    size_t nmem, capmem;
    uint64_t cont;
    long muts;
};

static int flush_members(struct apply *ap)
{
    int rc = 0;
    if (ap->nmem)
        rc = model_cont_add(ap->m, ap->cont, ap->members, ap->nmem);
    ap->nmem = 0;
    return rc;
}

static int apply_mut(const struct wl_mut *mu, void *arg)
{
    struct apply *ap = arg;
    uint64_t id = 0;
    int rc = 0;
    if (ap->keep_ids) {
        if (wl_home(mu, ap->nranks) != ap->home)
            return 0;
        if (mu->kind == WL_CONT)
            return model_cont_create_id(ap->m, &mu->cont);
        if (mu->kind == WL_OBJ)
            return model_obj_create(ap->m, &mu->obj, &id);
    }
    ap->muts++;
    switch (mu->kind) {
    case WL_CONT:
        rc = model_cont_create(ap->m, mu->cont.cont_name, &id);
        if (rc == 0 && id != mu->id)
            return ckpt_error(CKPT_E_EXISTS, "container got id %llu, expected %llu: is the store "
                              "fresh?", (unsigned long long)id, (unsigned long long)mu->id);
        break;
    case WL_CONT_TAG:
    case WL_TAG:
        rc = model_kvtag_put(ap->m, mu->owner, &mu->tag);
        break;
    case WL_OBJ: {
        struct ckpt_obj o = mu->obj;
        o.obj_id = 0;
        rc = model_obj_create(ap->m, &o, &id);
        if (rc == 0 && id != mu->id)
            return ckpt_error(CKPT_E_EXISTS, "%s got id %llu, expected %llu: is the store fresh?",
                              o.obj_name, (unsigned long long)id, (unsigned long long)mu->id);
        break;
    }
    case WL_REGION:
        rc = model_region_put(ap->m, &mu->region);
        break;
    case WL_MEMBER:
        if (ap->nmem == ap->capmem) {
            size_t nc = ap->capmem ? ap->capmem * 2 : 1024;
            uint64_t *nm = realloc(ap->members, nc * sizeof *nm);
            if (nm == NULL)
                return CKPT_E_NOMEM;
            ap->members = nm;
            ap->capmem = nc;
        }
        ap->cont = mu->owner;
        ap->members[ap->nmem++] = mu->id;
        if (ap->nmem == 1024)
            rc = flush_members(ap);
        break;
    }
    return rc;
}

/* The tables this rank holds after a re-homing from p->nranks = P_old
 * ranks to `nranks`: every old rank's stream, filtered by new home. */
static int run_streams_homed(const struct wl_params *p, int nranks, int me, model_server *m)
{
    struct apply ap = {m, 1, me, nranks, NULL, 0, 0, 0, 0};
    struct wl_params q = *p;
    int rc = 0;
    for (q.rank = 0; rc == 0 && q.rank < q.nranks; q.rank++) {
        rc = wl_stream(&q, apply_mut, &ap);
        if (rc == 0)
            rc = flush_members(&ap);
    }
    free(ap.members);
    return rc;
}

/* Apply this rank's stream to model m (hooks or not). */
static int run_stream(const struct wl_params *p, model_server *m, long *muts)
{
    struct apply ap = {m, 0, 0, 0, NULL, 0, 0, 0, 0};
    int rc = wl_stream(p, apply_mut, &ap);
    if (rc == 0)
        rc = flush_members(&ap);
    free(ap.members);
    if (muts)
        *muts = ap.muts;
    return rc;
}

static int cmd_write(struct args *a, int quiet)
{
    ckpt_hooks *h = NULL;
    model_server *m = NULL;
    struct ckpt_hooks_opts ho = a->hopts;
    char newroot[4200] = "";
    long muts = 0;
    int rc = 0, replace = 0, lockfd = -1;
    double t0, t1, t2;

    /* A store there already is refused, or with --force replaced: the new
     * one is written beside it while rank 0 holds the old one's lock (no
     * writer can open it; refused if one has it open), and only a complete
     * new store is renamed into place. */
    if (g_rank == 0) {
        replace = holds_ranks(a->root);
        if (replace && !a->force)
            rc = fail("%s: a store is already there; remove it or add --force", a->root);
        else if (replace && ckpt_root_lock(&lockfd, a->root) != 0)
            rc = fail("%s%s", ckpt_store_errmsg(NULL), a->force ? "; nothing was replaced" : "");
        else if (replace && sibling_root(newroot, sizeof newroot, a->root) != 0)
            rc = fail("%s: path too long", a->root);
        else if (replace && holds_ranks(newroot))
            rc = fail("%s is in the way (left by an interrupted replace?); remove it", newroot);
    }
    if (bench_any_failed(rc != 0)) {
        ckpt_root_unlock(lockfd);
        return 1;
    }
    MPI_Bcast(&replace, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(newroot, sizeof newroot, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (replace)
        ho.store_root = newroot;
    if ((rc = ckpt_hooks_open(&h, &ho)) != 0 || (rc = model_create(&m, g_rank, g_size, h)) != 0)
        fail("open: %s", ckpt_store_errmsg(NULL));
    if (bench_any_failed(rc != 0)) {
        ckpt_hooks_discard(h);
        if (replace && g_rank == 0)
            ckpt_fs_rmtree(newroot);
        ckpt_root_unlock(lockfd);
        return 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    if ((rc = run_stream(&a->p, m, &muts)) != 0)
        fail("workload: %s (%s)", ckpt_store_errmsg(NULL), ckpt_strerror(rc));
    t1 = MPI_Wtime();
    if (rc == 0 && (rc = ckpt_hooks_close(h)) != 0)
        fail("close: %s", ckpt_store_errmsg(NULL));
    t2 = MPI_Wtime();
    /* close returned with everything durable; the environment's unmapping
     * goes on on its own thread (ckpt_store_close): timed apart */
    ckpt_store_wait_closed();
    double unmap = MPI_Wtime() - t2;
    if (rc)
        ckpt_hooks_discard(h);
    model_destroy(m);
    /* what close is measured against: one small fsync'd commit on the same
     * file system, now, under the same load */
    double fs = rc == 0 ? bench_fsync_commit_s(a->root, g_rank, 11) : 0;
    double wmax = bench_max_all(t1 - t0), cmax = bench_max_all(t2 - t1), fsmax = bench_max_all(fs);
    double umax = bench_max_all(unmap);
    long total = bench_sum_all(muts), rss = bench_peak_rss_kb();
    if (replace && bench_any_failed(rc != 0)) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (g_rank == 0) {
            ckpt_fs_rmtree(newroot); /* the old store was not touched */
            fail("%s was left as it was", a->root);
        }
        ckpt_root_unlock(lockfd);
        return 1;
    }
    if (replace) {
        rc = bench_any_failed(swap_rank(a->root, newroot, g_rank));
        if (rc == 0 && g_rank == 0)
            rc = finish_replace(a->root, newroot);
        ckpt_root_unlock(lockfd);
        if (bench_any_failed(rc != 0))
            return 1;
    }
    if (bench_any_failed(rc != 0))
        return 1;
    if (g_rank == 0 && !quiet) {
        printf("write: %d ranks, %ld objects x %ld tags, %ld tagged, %ld mutations, store %s\n",
               g_size, a->p.objects, a->p.tags_per_object, a->p.tagged, total, a->root);
        printf("  workload %.6f s, close %.6f s (then unmapping %.6f s on its thread), one small "
               "fsync'd commit %.6f s (max over ranks)\n", wmax, cmax, umax, fsmax);
        printf("result: phase=write ranks=%d mutations=%ld workload_s=%.9f close_s=%.9f "
               "unmap_s=%.9f fsync_commit_s=%.9f peak_rss_kb=%ld method=lmdb\n", g_size, total,
               wmax, cmax, umax, fsmax, rss);
    } else if (g_rank == 0) {
        printf("  write    %ld mutations on %d ranks: workload %.6f s, close %.6f s\n", total, g_size,
               wmax, cmax);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* restart                                                             */
/* ------------------------------------------------------------------ */

static int cmd_restart(struct args *a, int quiet)
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
    if (g_rank == 0 && !a->create) {
        have = holds_ranks(a->root) || (a->hopts.shared_root && holds_ranks(a->hopts.shared_root));
        if (!have)
            fail("no store at %s (no rank-<N> directory%s); to start a new store there, add "
                 "--create", a->root, a->hopts.shared_root ? ", and no shared copy" : "");
    }
    if (bench_any_failed(!have))
        return 1;
    /* a re-homing shows rank 0's share of the old environments read (on a
     * terminal only) */
    ckpt_progress_begin(&pr, "restart: re-homing, rank 0 read", "old environments", 0);
    if (g_rank == 0) {
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
        fail("restart: %s", ckpt_store_errmsg(NULL));
    if (rc == 0 && g_rank == 0 && rs.recovered)
        printf("restart: an interrupted re-homing was rolled %s\n",
               rs.recovered > 0 ? "forward (completed)" : "back (undone)");
    if (rc == 0 && g_rank == 0 && rs.old_nranks != rs.new_nranks)
        printf("restart: re-homed %llu records from %d to %d ranks, %llu moved, in %.6f s\n"
               "result: phase=rehome from=%d to=%d records=%llu moved=%llu seconds=%.9f\n",
               (unsigned long long)rs.records, rs.old_nranks, rs.new_nranks,
               (unsigned long long)rs.moved, rs.seconds, rs.old_nranks, rs.new_nranks,
               (unsigned long long)rs.records, (unsigned long long)rs.moved, rs.seconds);
    if (rc == 0 && a->rebuild && a->check && a->from_ranks == 0) {
        /* the rank count the workload was written with: the store knows */
        struct ckpt_store_info info;
        if ((rc = ckpt_store_info(&info, ckpt_hooks_store(h))) != 0)
            fail("restart: %s", ckpt_store_errmsg(NULL));
        else
            a->p.nranks = info.origin_nranks;
    }
    if (rc == 0 && a->rebuild && a->check) {
        char why[256];
        if ((rc = model_create(&expect, g_rank, g_size, NULL)) == 0 &&
            (rc = (a->p.nranks == g_size ? run_stream(&a->p, expect, NULL)
                                            : run_streams_homed(&a->p, g_size, g_rank, expect))) == 0 &&
            !model_equal(expect, m, why, sizeof why)) {
            rc = fail("rebuilt tables differ from the workload's: %s", why);
        } else if (rc) {
            fail("building the expected tables: %s", ckpt_strerror(rc));
        }
    }
    /* new ids must never collide with any record, re-homed or not: the
     * directory rank of a new id of this rank is this rank, so a record
     * with that id would be found here or in the id directory here */
    for (long k = 0; rc == 0 && k < a->new_ids; k++) {
        uint64_t id;
        int home;
        ckpt_hooks_read *rd = NULL;
        if ((rc = ckpt_hook_new_id(h, &id)) != 0 || (rc = ckpt_hooks_read_begin(&rd, h)) != 0) {
            fail("new id: %s", ckpt_store_errmsg(NULL));
            break;
        }
        int r2 = ckpt_hooks_id_home(&home, rd, id);
        ckpt_hooks_read_end(rd);
        if (r2 != CKPT_E_NOTFOUND)
            rc = fail("new id %llu is already in use (on rank %d)", (unsigned long long)id,
                      r2 == 0 ? home : -1);
    }
    if (rc == 0 && a->new_ids && g_rank == 0)
        printf("restart: %ld new ids per rank, none in use\n", a->new_ids);
    model_destroy(expect);
    model_destroy(m);
    if (h && ckpt_hooks_close(h) != 0) {
        rc = fail("close after restart: %s", ckpt_store_errmsg(NULL));
        ckpt_hooks_discard(h);
    }
    double tmax = bench_max_all(t1 - t0);
    long objs = bench_sum_all((long)st.objs), tags = bench_sum_all((long)st.kvtags), rss = bench_peak_rss_kb();
    if (bench_any_failed(rc != 0))
        return 1;
    if (g_rank == 0) {
        const char *mode = a->rebuild ? "rebuild" : "map";
        if (!quiet) {
            printf("restart (%s): %d ranks, %.6f s (max over ranks)", mode, g_size, tmax);
            if (a->rebuild)
                printf(", %ld objects and %ld kvtags rebuilt%s", objs, tags,
                       a->check ? ", tables equal to the workload's" : "");
            printf("\nresult: phase=restart_%s ranks=%d seconds=%.9f peak_rss_kb=%ld method=lmdb\n",
                   mode, g_size, tmax, rss);
        } else {
            printf("  restart  %-7s %.6f s%s\n", mode, tmax,
                   a->check ? " (rebuilt tables equal the written ones)" : "");
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* verify                                                              */
/* ------------------------------------------------------------------ */

struct verify {
    ckpt_hooks *h;
    ckpt_hooks_read *r;
    int after_crash;
    int nranks;      /* ranks now: where records and id directory entries live */
    long index;      /* mutations seen */
    long prefix;     /* leading mutations present */
    long gap_at;     /* first missing mutation, -1 if none */
    long present[6]; /* per kind */
    char err[512];
};

static int str_same(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* 1 present and equal, 0 absent, -1 present but different (err set). */
static int check_obj(struct verify *v, const struct wl_mut *mu)
{
    struct ckpt_obj o, byname;
    const struct ckpt_obj *e = &mu->obj;
    int rc = ckpt_hooks_get_obj(&o, v->r, mu->id);
    if (rc == CKPT_E_NOTFOUND)
        return 0;
    if (rc) {
        snprintf(v->err, sizeof v->err, "object %s: %s", e->obj_name, ckpt_store_errmsg(NULL));
        return -1;
    }
    int same = o.cont_id == e->cont_id && str_same(o.obj_name, e->obj_name) &&
               o.time_step == e->time_step && o.user_id == e->user_id &&
               str_same(o.app_name, e->app_name) && o.data_type == e->data_type &&
               o.create_time == e->create_time && o.last_modified_time == e->last_modified_time &&
               str_same(o.data_location, e->data_location) && str_same(o.tags, e->tags) &&
               o.ndim == e->ndim;
    for (uint32_t d = 0; same && d < o.ndim; d++)
        same = o.dims[d] == e->dims[d];
    if (!same) {
        snprintf(v->err, sizeof v->err, "object %s (id %llu): stored fields differ", e->obj_name,
                 (unsigned long long)mu->id);
        return -1;
    }
    rc = ckpt_hooks_get_obj_by_name(&byname, v->r, e->obj_name, e->time_step);
    if (rc || byname.obj_id != mu->id) {
        snprintf(v->err, sizeof v->err, "object %s (ts %d): name lookup %s", e->obj_name,
                 e->time_step, rc ? ckpt_strerror(rc) : "finds another id");
        return -1;
    }
    return 1;
}

static int check_tag(struct verify *v, const struct wl_mut *mu)
{
    struct ckpt_kvtag t;
    int rc = ckpt_hooks_get_kvtag(&t, v->r, mu->owner, mu->tag.name);
    if (rc == CKPT_E_NOTFOUND)
        return 0;
    if (rc || t.type != mu->tag.type || t.size != mu->tag.size ||
        memcmp(t.value, mu->tag.value, t.size) != 0) {
        snprintf(v->err, sizeof v->err, "kvtag %s of %s %llu: %s", mu->tag.name,
                 mu->kind == WL_TAG ? "object" : "container", (unsigned long long)mu->owner,
                 rc ? ckpt_store_errmsg(NULL) : "stored value differs");
        return -1;
    }
    return 1;
}

struct region_find {
    const struct ckpt_region *want;
    int found, same;
};

static int region_cb(const struct ckpt_region *g, void *p)
{
    struct region_find *f = p;
    const struct ckpt_region *w = f->want;
    if (g->ndim != w->ndim || g->start[0] != w->start[0] || g->count[0] != w->count[0])
        return 0;
    f->found = 1;
    f->same = g->data_size == w->data_size && g->unit_size == w->unit_size &&
              g->offset == w->offset && g->data_loc_type == w->data_loc_type &&
              str_same(g->storage_location, w->storage_location) && g->has_hist == w->has_hist;
    if (f->same && g->has_hist) {
        f->same = g->hist.nbin == w->hist.nbin && g->hist.dtype == w->hist.dtype &&
                  g->hist.incr == w->hist.incr;
        for (int32_t b = 0; f->same && b < g->hist.nbin; b++)
            f->same = ckpt_hist_bin(&g->hist, (size_t)b) == ckpt_hist_bin(&w->hist, (size_t)b) &&
                      ckpt_hist_range(&g->hist, 2 * (size_t)b) ==
                          ckpt_hist_range(&w->hist, 2 * (size_t)b);
    }
    return 1;
}

static int check_region(struct verify *v, const struct wl_mut *mu)
{
    struct region_find f = {&mu->region, 0, 0};
    int rc = ckpt_hooks_foreach_region(v->r, mu->region.obj_id, region_cb, &f);
    if (rc < 0) {
        snprintf(v->err, sizeof v->err, "regions of object %ld: %s", mu->i, ckpt_store_errmsg(NULL));
        return -1;
    }
    if (!f.found)
        return 0;
    if (!f.same) {
        snprintf(v->err, sizeof v->err, "region of object obj%ld: stored fields differ", mu->i);
        return -1;
    }
    return 1;
}

static int check_member(struct verify *v, const struct wl_mut *mu)
{
    uint8_t k[16];
    ckpt_val val;
    ckpt_rtxn *tx;
    ckpt_key_u64(k, mu->owner);
    ckpt_key_u64(k + 8, mu->id);
    int rc = ckpt_rtxn_begin(&tx, ckpt_hooks_store(v->h));
    if (rc == 0) {
        rc = ckpt_get_raw(&val, tx, CKPT_DB_CONT_OBJ, k, 16);
        ckpt_rtxn_end(tx);
    }
    if (rc == CKPT_E_NOTFOUND)
        return 0;
    if (rc) {
        snprintf(v->err, sizeof v->err, "membership of obj%ld: %s", mu->i, ckpt_store_errmsg(NULL));
        return -1;
    }
    return 1;
}

static int check_cont(struct verify *v, const struct wl_mut *mu)
{
    struct ckpt_cont c;
    int rc = ckpt_hooks_get_cont_by_name(&c, v->r, mu->cont.cont_name);
    if (rc == CKPT_E_NOTFOUND)
        return 0;
    if (rc || c.cont_id != mu->id) {
        snprintf(v->err, sizeof v->err, "container %s: %s", mu->cont.cont_name,
                 rc ? ckpt_store_errmsg(NULL) : "has another id");
        return -1;
    }
    return 1;
}

static const char *kind_name(enum wl_kind k)
{
    static const char *const n[] = {"container", "container kvtag", "object", "kvtag", "region",
                                    "membership"};
    return n[k];
}

/* The id directory sends an id-based lookup to the record's home. */
static int check_id_home(struct verify *v, const struct wl_mut *mu)
{
    int home = -1, want = wl_home(mu, v->nranks);
    int rc = ckpt_hooks_id_home(&home, v->r, mu->id);
    if (rc || home != want) {
        snprintf(v->err, sizeof v->err, "id %llu (%s): the id directory on rank %d %s %d, expected "
                 "rank %d", (unsigned long long)mu->id, mu->kind == WL_OBJ ? "an object" : "a container",
                 g_rank, rc ? "fails:" : "names rank", rc ? rc : home, want);
        return 1;
    }
    return 0;
}

static int verify_mut(const struct wl_mut *mu, void *arg);

/* After a re-homing: check what is homed here, and the directory entries
 * of ids whose directory rank this is. */
static int verify_homed(const struct wl_mut *mu, void *arg)
{
    struct verify *v = arg;
    if ((mu->kind == WL_OBJ || mu->kind == WL_CONT) &&
        ckpt_id_dir_rank(mu->id, v->nranks) == g_rank && check_id_home(v, mu) != 0)
        return 1;
    return wl_home(mu, v->nranks) == g_rank ? verify_mut(mu, arg) : 0;
}

static int verify_mut(const struct wl_mut *mu, void *arg)
{
    struct verify *v = arg;
    int st;
    switch (mu->kind) {
    case WL_CONT:
        st = check_cont(v, mu);
        break;
    case WL_CONT_TAG:
    case WL_TAG:
        st = check_tag(v, mu);
        break;
    case WL_OBJ:
        st = check_obj(v, mu);
        break;
    case WL_REGION:
        st = check_region(v, mu);
        break;
    default:
        st = check_member(v, mu);
        break;
    }
    long idx = v->index++;
    if (st < 0)
        return 1;
    if (st == 1) {
        v->present[mu->kind]++;
        if (v->gap_at >= 0) {
            snprintf(v->err, sizeof v->err, "mutation %ld (%s of obj%ld) is present after mutation "
                     "%ld is missing: not a committed prefix", idx, kind_name(mu->kind), mu->i,
                     v->gap_at);
            return 1;
        }
        v->prefix++;
        return 0;
    }
    if (!v->after_crash) {
        if (mu->kind == WL_CONT || mu->kind == WL_CONT_TAG)
            snprintf(v->err, sizeof v->err, "%s missing", kind_name(mu->kind));
        else
            snprintf(v->err, sizeof v->err, "%s of obj%ld missing", kind_name(mu->kind), mu->i);
        return 1;
    }
    if (v->gap_at < 0)
        v->gap_at = idx;
    return 0;
}

/* Entries per database must equal what the stream put there: nothing extra. */
static int check_counts(struct verify *v)
{
    static const struct {
        int db;
        int k1, k2;
    } want[] = {{CKPT_DB_CONT, WL_CONT, -1},
                {CKPT_DB_OBJ, WL_OBJ, -1},
                {CKPT_DB_KVTAG, WL_TAG, WL_CONT_TAG},
                {CKPT_DB_TAG_INDEX, WL_TAG, WL_CONT_TAG},
                {CKPT_DB_REGION, WL_REGION, -1},
                {CKPT_DB_CONT_OBJ, WL_MEMBER, -1},
                {CKPT_DB_OBJ_NAME, WL_OBJ, -1}};
    ckpt_rtxn *tx;
    int rc = ckpt_rtxn_begin(&tx, ckpt_hooks_store(v->h));
    if (rc) {
        snprintf(v->err, sizeof v->err, "%s", ckpt_store_errmsg(NULL));
        return 1;
    }
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint64_t n = 0;
        long exp = v->present[want[i].k1] + (want[i].k2 >= 0 ? v->present[want[i].k2] : 0);
        if ((rc = ckpt_db_stat(tx, want[i].db, &n, NULL)) != 0 || (long)n != exp) {
            snprintf(v->err, sizeof v->err, "database %s holds %llu entries, expected %ld",
                     ckpt_db_name(want[i].db), (unsigned long long)n, exp);
            ckpt_rtxn_end(tx);
            return 1;
        }
    }
    ckpt_rtxn_end(tx);
    return 0;
}

static int cmd_verify(struct args *a, int quiet)
{
    struct verify v;
    int rc;
    memset(&v, 0, sizeof v);
    v.after_crash = a->after_crash;
    v.gap_at = -1;
    v.nranks = g_size;
    int nranks, origin;
    /* the store says on how many ranks it is now, and was written */
    if (store_shape(a->root, &nranks, &origin) != 0)
        return 1;
    if (nranks != g_size) {
        if (g_rank == 0)
            fail("%s holds a store of %d ranks and this job has %d: verify it on %d ranks "
                 "(mpiexec -n %d " PROG " %s), or re-home it to %d ranks first (mpiexec -n %d "
                 PROG " restart --store %s)", a->root, nranks, g_size, nranks, nranks, g_args,
                 g_size, g_size, a->root);
        return 1;
    }
    if (a->from_ranks == 0) {
        a->from_ranks = origin;
        a->p.nranks = origin;
    }
    long total = wl_count(&a->p);
    if (a->after_crash && a->from_ranks != g_size) {
        if (g_rank == 0)
            fail("--after-crash checks a store on the rank count that wrote it (%d), and this "
                 "job has %d: run mpiexec -n %d " PROG " %s", a->from_ranks, g_size,
                 a->from_ranks, g_args);
        return 1;
    }
    if ((rc = ckpt_hooks_open_readonly(&v.h, &a->hopts)) != 0)
        fail("verify: %s", ckpt_store_errmsg(NULL));
    else if ((rc = ckpt_hooks_read_begin(&v.r, v.h)) != 0)
        fail("verify: %s", ckpt_store_errmsg(NULL));
    if (rc == 0) {
        if (a->from_ranks == g_size) {
            rc = wl_stream(&a->p, verify_mut, &v);
        } else {
            struct wl_params q = a->p;
            for (q.rank = 0; rc == 0 && q.rank < q.nranks; q.rank++)
                rc = wl_stream(&q, verify_homed, &v);
        }
        if (rc == 0)
            rc = check_counts(&v);
        if (rc)
            fail("verify %s/rank-%d: %s", a->root, g_rank, v.err[0] ? v.err : ckpt_strerror(rc));
    }
    ckpt_hooks_read_end(v.r);
    if (v.h)
        ckpt_hooks_close(v.h);
    if (rc == 0 && a->after_crash)
        printf("verify --after-crash: rank %d holds a committed prefix of %ld of its %ld mutations\n",
               g_rank, v.prefix, total);
    long all = bench_sum_all(v.prefix);
    if (bench_any_failed(rc != 0))
        return 1;
    if (g_rank == 0 && !a->after_crash) {
        if (quiet)
            printf("  verify   %ld mutations checked record by record: OK\n", all);
        else
            printf("verify: %d ranks, %ld mutations checked record by record: OK\n", g_size, all);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* demo                                                                */
/* ------------------------------------------------------------------ */

static int cmd_demo(struct args *a)
{
    if (!a->have_store) {
        const char *tmp = getenv("PDC_TMPDIR");
        snprintf(a->root, sizeof a->root, "%s/pdc-ckpt-demo", tmp && *tmp ? tmp : "./pdc_tmp");
    }
    if (a->p.objects == 0)
        a->p.objects = 10000;
    if (a->p.tags_per_object == 0)
        a->p.tags_per_object = 10;
    if (g_rank == 0)
        printf("pdc-ckpt demo: %d server ranks, %ld objects x %ld kvtags, store %s\n", g_size,
               a->p.objects, a->p.tags_per_object, a->root);
    if (cmd_write(a, 1) != 0)
        return 1;
    a->rebuild = 0;
    if (cmd_restart(a, 1) != 0)
        return 1;
    a->rebuild = 1;
    a->check = 1;
    if (cmd_restart(a, 1) != 0)
        return 1;
    if (cmd_verify(a, 1) != 0)
        return 1;
    if (g_rank == 0)
        printf("close commits only the last batch; restart (map) only opens the store.\n"
               "Look inside: build/bin/ckpt-inspect stat %s\n", a->root);
    return 0;
}

/* write/restart with a benchmark method (tools/bench/methods.h). */
static int method_cmd(const struct args *a)
{
    struct bench_cmd c = {a->method, a->root, a->p, g_rank, g_size, a->force, a->rebuild, a->check,
                          run_stream};
    if (strcmp(a->cmd, "write") == 0)
        return bench_write(&c);
    if (strcmp(a->cmd, "restart") == 0)
        return bench_restart(&c);
    if (g_rank == 0)
        fprintf(stderr, PROG ": verify reads a pdc-ckpt store; for --method %s use restart --rebuild "
                "--check\n", a->method);
    return 2;
}

int main(int argc, char **argv)
{
    struct args a;
    int rc = 2, pr;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    keep_args(argc, argv);
    ckpt_fault_guard_install(); /* a damaged store is an error, not a crash */
    if (argc >= 2 && (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0)) {
        if (g_rank == 0)
            printf(PROG " 0.1.0 (store format %u)\n", CKPT_FORMAT_VERSION);
        MPI_Finalize();
        return 0;
    }
    if ((pr = parse_args(&a, argc, argv)) != 0) {
        if (g_rank == 0)
            usage(pr > 0 ? stdout : stderr);
        rc = pr > 0 ? 0 : 2;
    } else if (strcmp(a.cmd, "write") == 0 || strcmp(a.cmd, "verify") == 0 ||
               strcmp(a.cmd, "restart") == 0) {
        if (!a.have_store || (strcmp(a.cmd, "restart") != 0 && a.p.objects == 0) ||
            (a.check && a.p.objects == 0)) {
            if (g_rank == 0) {
                int no_objects = strcmp(a.cmd, "restart") != 0 || a.check;
                fprintf(stderr, PROG ": %s needs %s%s%s\n", a.cmd,
                        a.have_store ? "" : "--store DIR (or PDC_CKPT_DIR)",
                        !a.have_store && no_objects && a.p.objects == 0 ? " and " : "",
                        no_objects && a.p.objects == 0 ? "--objects N" : "");
                usage(stderr);
            }
        } else if (!bench_method_is_lmdb(a.method)) {
            rc = method_cmd(&a);
        } else if (strcmp(a.cmd, "write") == 0) {
            rc = cmd_write(&a, 0);
        } else if (strcmp(a.cmd, "verify") == 0) {
            rc = cmd_verify(&a, 0);
        } else {
            rc = cmd_restart(&a, 0);
        }
    } else if (!bench_method_is_lmdb(a.method)) {
        if (g_rank == 0)
            fprintf(stderr, PROG ": --method: demo runs the lmdb method only\n");
    } else {
        rc = cmd_demo(&a);
    }
    MPI_Finalize();
    return rc;
}
