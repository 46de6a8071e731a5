/*
 * workload_main.c - ckpt-workload's options, usage and demo, and
 * wl_main(), the program (workload_cli.h; shared helpers: workload_util.c). ckpt-workload runs the model
 * PDC server on every MPI rank against a pdc-ckpt store: write a
 * deterministic workload, restart (map or rebuild), verify record by
 * record, or all of it as a demo.
 *
 *   ckpt-workload write   --store DIR --objects N [--tags-per-object M] [--tagged T] [--force]
 *   ckpt-workload restart --store DIR [--create] [--rebuild [--check --objects N ...]]
 *   ckpt-workload verify  --store DIR --objects N [...] [--after-crash] [--json]
 *   ckpt-workload demo    [--store DIR] [--objects N] [--tags-per-object M] [--force]
 *
 * write and restart take --method NAME: lmdb (this project's store, the
 * default) in ckpt-workload; ckpt-bench-workload (tools/bench/) adds the
 * benchmark's methods (fwrite, bulki, sqlite, rocksdb, lmdb-raw). Result
 * lines carry peak_rss_kb: getrusage's ru_maxrss of each rank's process,
 * maximum over ranks.
 *
 * Times are the maximum over ranks. Exit 0 on success, 1 on any failure
 * (the failing rank says what on stderr), 2 on bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload_cli.h"

static const struct wl_methods *g_methods;

/* "lmdb", or the extra methods' names */
static const char *method_names(void)
{
    return g_methods ? g_methods->names : "lmdb";
}

/* 1 for lmdb (or NULL: the default), 0 for another known method, -1 if unknown */
static int method_is_lmdb(const char *name)
{
    if (name == NULL || strcmp(name, "lmdb") == 0)
        return 1;
    return g_methods && g_methods->known(name) ? 0 : -1;
}

static void usage(FILE *f)
{
    const char *p = wl_prog;
    fprintf(f,
            "usage: %s write   --store DIR --objects N [--tags-per-object M] [--tagged T] [--force]\n"
            "       %s restart --store DIR [--create] [--rebuild [--check --objects N ...]]\n"
            "       %s verify  --store DIR --objects N [...] [--after-crash]\n"
            "       %s demo    [--store DIR] [--objects N] [--tags-per-object M] [--force]\n"
            "       %s -V | -h | --help      (COMMAND -h: this help too)\n"
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
            "         --method NAME (write, restart): %s (default lmdb)%s\n"
            "environment: PDC_CKPT_DIR (the store, see --store), PDC_TMPDIR,\n"
            "         PDC_CKPT_SYNC, PDC_CKPT_COMMIT_EVERY, PDC_CKPT_COMMIT_MS,\n"
            "         PDC_CKPT_SYNC_MS, PDC_CKPT_SHARED_DIR, PDC_CKPT_POWERLOSS_GUARD\n"
            "         (docs/PDC_INTEGRATION.md); CKPT_WORKLOAD_HOLD=FILE (write: keep the\n"
            "         store open after the workload while FILE exists; for tests)\n"
            "exit status: 0 ok, 1 failure, 2 bad usage\n",
            p, p, p, p, p, method_names(),
            g_methods ? "" : "; the benchmark's\n         methods are in ckpt-bench-workload "
                             "(built with the benchmarks, not installed)");
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
static int parse_args(struct wl_args *a, int argc, char **argv)
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
        if (wl_rank == 0)
            fprintf(stderr, "%s: a command is needed (write, restart, verify or demo)\n", wl_prog);
        return -1;
    }
    a->cmd = argv[1];
    if (strcmp(a->cmd, "-h") == 0 || strcmp(a->cmd, "--help") == 0)
        return 1;
    if (strcmp(a->cmd, "write") != 0 && strcmp(a->cmd, "restart") != 0 &&
        strcmp(a->cmd, "verify") != 0 && strcmp(a->cmd, "demo") != 0) {
        if (wl_rank == 0)
            fprintf(stderr, "%s: unknown command \"%s\" (use write, restart, verify or demo)\n", wl_prog,
                    a->cmd);
        return -1;
    }
    if (ckpt_hooks_opts_from_env(&a->hopts, a->root, sizeof a->root) != 0) {
        if (wl_rank == 0)
            fprintf(stderr, "%s: %s\n", wl_prog, ckpt_errmsg());
        return -1;
    }
    /* PDC_CKPT_DIR names the store when --store does not (not for demo,
     * which keeps its own store away from a server's) */
    a->have_store = env_dir != NULL && *env_dir != 0 && strcmp(a->cmd, "demo") != 0;
    optind = 2;
    opterr = wl_rank == 0; /* getopt names a bad option; once, not once per rank */
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
                if (wl_rank == 0)
                    fprintf(stderr, "%s: --%s needs a %s integer, not \"%s\"\n", wl_prog, lo[li].name,
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
                if (wl_rank == 0)
                    fprintf(stderr, "%s: --sync: use sync, interval or close, not \"%s\"\n", wl_prog,
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
            if (method_is_lmdb(optarg) < 0) {
                if (wl_rank == 0)
                    fprintf(stderr, "%s: --method: use %s%s, not \"%s\"%s\n", wl_prog,
                            g_methods ? "one of " : "", method_names(), optarg,
                            g_methods ? "" : " (the benchmark's methods are in "
                                             "ckpt-bench-workload, built with the benchmarks)");
                return -1;
            }
            a->method = optarg;
            break;
        default:
            return -1; /* getopt said which option */
        }
    }
    if (optind != argc) {
        if (wl_rank == 0)
            fprintf(stderr, "%s: unexpected argument \"%s\"\n", wl_prog, argv[optind]);
        return -1;
    }
    a->hopts.store_root = a->root;
    a->hopts.rank = wl_rank;
    a->hopts.nranks = wl_size;
    a->p.rank = wl_rank;
    a->p.nranks = a->from_ranks > 0 ? a->from_ranks : wl_size;
    return 0;
}

static void keep_args(int argc, char **argv)
{
    size_t n = 0;
    for (int i = 1; i < argc && n + 2 < sizeof wl_cmdline; i++) {
        int w = snprintf(wl_cmdline + n, sizeof wl_cmdline - n, "%s%s", i > 1 ? " " : "", argv[i]);
        if (w < 0 || (size_t)w >= sizeof wl_cmdline - n)
            break;
        n += (size_t)w;
    }
}

static int cmd_demo(struct wl_args *a)
{
    if (!a->have_store) {
        const char *tmp = getenv("PDC_TMPDIR");
        snprintf(a->root, sizeof a->root, "%s/pdc-ckpt-demo", tmp && *tmp ? tmp : "./pdc_tmp");
    }
    if (a->p.objects == 0)
        a->p.objects = 10000;
    if (a->p.tags_per_object == 0)
        a->p.tags_per_object = 10;
#ifdef M_MMAP_THRESHOLD
    /* A server restarts in a new process; the demo writes, closes and
     * restarts in one. When the close frees LMDB's 2 MiB dirty-page list,
     * glibc raises its mmap threshold to that size, so the restart's
     * environment takes the list from the heap and zeroes it: about 6 ms
     * of page faults here, which no real restart pays (ckpt-bench restarts
     * in fresh processes). A fixed threshold keeps large buffers mmapped,
     * as in a new process. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
    if (wl_rank == 0)
        printf("pdc-ckpt demo: %d server ranks, %ld objects x %ld kvtags, store %s\n", wl_size,
               a->p.objects, a->p.tags_per_object, a->root);
    if (wl_cmd_write(a, 1) != 0)
        return 1;
    a->rebuild = 0;
    if (wl_cmd_restart(a, 1) != 0)
        return 1;
    a->rebuild = 1;
    a->check = 1;
    if (wl_cmd_restart(a, 1) != 0)
        return 1;
    if (wl_cmd_verify(a, 1) != 0)
        return 1;
    if (wl_rank == 0)
        printf("close commits only the last batch; restart (map) only opens the store.\n"
               "Look inside: build/bin/ckpt-inspect stat %s\n", a->root);
    return 0;
}

/* write/restart with another method (wl_main's methods). */
static int method_cmd(const struct wl_args *a)
{
    struct wl_method_cmd c = {a->method, a->root, a->p, wl_rank, wl_size, a->force, a->rebuild,
                              a->check};
    if (strcmp(a->cmd, "write") == 0)
        return g_methods->write(&c);
    if (strcmp(a->cmd, "restart") == 0)
        return g_methods->restart(&c);
    if (wl_rank == 0)
        fprintf(stderr, "%s: verify reads a pdc-ckpt store; for --method %s use restart --rebuild "
                "--check\n", wl_prog, a->method);
    return 2;
}

int wl_main(int argc, char **argv, const char *prog, const struct wl_methods *methods)
{
    struct wl_args a;
    int rc = 2, pr;
    wl_prog = prog;
    g_methods = methods;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wl_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &wl_size);
    keep_args(argc, argv);
    ckpt_fault_guard_install(); /* a damaged store is an error, not a crash */
    if (argc >= 2 && (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0)) {
        if (wl_rank == 0)
            printf("%s 0.1.0 (store format %u)\n", wl_prog, CKPT_FORMAT_VERSION);
        MPI_Finalize();
        return 0;
    }
    if ((pr = parse_args(&a, argc, argv)) != 0) {
        if (wl_rank == 0)
            usage(pr > 0 ? stdout : stderr);
        rc = pr > 0 ? 0 : 2;
    } else if (strcmp(a.cmd, "write") == 0 || strcmp(a.cmd, "verify") == 0 ||
               strcmp(a.cmd, "restart") == 0) {
        if (!a.have_store || (strcmp(a.cmd, "restart") != 0 && a.p.objects == 0) ||
            (a.check && a.p.objects == 0)) {
            if (wl_rank == 0) {
                int no_objects = strcmp(a.cmd, "restart") != 0 || a.check;
                fprintf(stderr, "%s: %s needs %s%s%s\n", wl_prog, a.cmd,
                        a.have_store ? "" : "--store DIR (or PDC_CKPT_DIR)",
                        !a.have_store && no_objects && a.p.objects == 0 ? " and " : "",
                        no_objects && a.p.objects == 0 ? "--objects N" : "");
                usage(stderr);
            }
        } else if (!method_is_lmdb(a.method)) {
            rc = method_cmd(&a);
        } else if (strcmp(a.cmd, "write") == 0) {
            rc = wl_cmd_write(&a, 0);
        } else if (strcmp(a.cmd, "verify") == 0) {
            rc = wl_cmd_verify(&a, 0);
        } else {
            rc = wl_cmd_restart(&a, 0);
        }
    } else if (!method_is_lmdb(a.method)) {
        if (wl_rank == 0)
            fprintf(stderr, "%s: --method: demo runs the lmdb method only\n", wl_prog);
    } else {
        rc = cmd_demo(&a);
    }
    MPI_Finalize();
    return rc;
}
