/*
 * hook_cost_bench.c - CPU cost of the hooks on PDC's write path
 * (docs/BENCHMARKS.md, "Cost on PDC's write path"), driven as the PDC
 * glue (src/server/pdc_server_ckpt.c, added by server_hooks/pdc/patches)
 * drives them for the workload of
 * `pdc-ckpt-client bench-write --objects N --tags T` (N objects, each
 * created, then given T PDC_UINT64 kvtags t0..t<T-1>, one RPC per tag):
 *   object create (PDC_insert_metadata_to_hash_table): ckpt_hook_new_id
 *     (PDC_Server_gen_obj_id), then the struct ckpt_obj of PDC's
 *     pdc_metadata_t (meta_to_ckpt) and ckpt_hook_obj_create
 *     (PDC_Server_ckpt_obj_create);
 *   kvtag put (PDC_Server_add_kvtag): ckpt_hook_kvtag_put(owner, {name,
 *     PDC_UINT64, 8, &value}) (PDC_Server_ckpt_kvtag_put).
 * A mutation is one of those calls (N + N * T per run). Each run writes a
 * fresh store; every figure is the median over the runs:
 *   encode    thread CPU ns per record of the record encoders alone
 *             (ckpt_rec_obj_encode, ckpt_rec_kvtag_encode)
 *   stage     thread CPU ns per mutation of the hook calls with the commit
 *             policy off (encode, key, append to the batch); split into
 *             create (ns per object create: new id and record) and
 *             kvtag_put (ns per kvtag put)
 *   commit    thread CPU ns per mutation of ckpt_hooks_checkpoint called
 *             every K mutations (K: --commit-every, the policy's default)
 *   inline    thread CPU ns per mutation of the hook calls with the glue's
 *             commit policy (CKPT_HOOKS_OPTS_INIT and the PDC_CKPT_*
 *             variables, as pdc_server_ckpt.c opens the store): the commits
 *             run inside the calls that reach the policy's limits, on the
 *             calling thread, so this is what PDC's RPC thread pays
 *   process   the inline phase's process CPU (every thread, with the
 *             store's background thread) per mutation
 *   wall      the inline phase's wall time per mutation
 *   waits     how often the calling thread blocked in the inline phase
 *             (voluntary context switches per 1000 mutations: the store's
 *             mutex held by its background thread, or a commit's I/O)
 *   close     ms of ckpt_hooks_close after the inline phase (the last
 *             commit and the sync)
 * The stage and commit phases share a run; the inline phase is a run of its
 * own, in another fresh store.
 *
 * usage: hook-cost-bench [--objects N] [--tags T] [--runs R]
 *                        [--commit-every K] [--dir DIR]
 * Defaults: 10000 objects, 100 tags, 5 runs, K 1000, DIR $TMPDIR or /tmp.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "ckpt_fs.h"
#include "ckpt_hooks.h"

#define PDC_UINT64_CODE 12 /* PDC's pdc_var_type_t PDC_UINT64 */

static double thread_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double process_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
}

/* Times the calling thread blocked so far (waited for a lock or for I/O). */
static double thread_waits(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return (double)ru.ru_nvcsw;
}

static double wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* What PDC's server has in the pdc_metadata_t of an object bench-write
 * creates (PDCobj_create with a default property), as meta_to_ckpt copies
 * it. */
static int32_t uid_g;

static void obj_fill(struct ckpt_obj *o, uint64_t id, uint64_t cont_id, const char *name)
{
    memset(o, 0, sizeof *o);
    o->obj_id = id;
    o->cont_id = cont_id;
    o->obj_name = name;
    o->app_name = "";
    o->data_location = "";
    o->tags = "";
    o->time_step = 0;
    o->user_id = uid_g;
    o->data_type = PDC_UINT64_CODE;
    o->create_time = (int64_t)time(NULL);
    o->last_modified_time = o->create_time;
    o->ndim = 1;
    o->dims[0] = 1;
}

struct cfg {
    size_t nobj, ntags, runs, every;
    const char *dir;
};

struct run {
    double stage_ns, commit_ns; /* thread CPU, whole run */
    double create_ns;           /* thread CPU of the object creates (stage run) */
    double inline_ns, inline_proc_ns, inline_wall_ns, close_ns;
    double inline_waits; /* the thread blocked (voluntary context switches) */
    size_t nmut;
};

static int fail(const char *what, int rc)
{
    const char *msg = ckpt_errmsg();
    fprintf(stderr, "hook-cost-bench: %s: %s: %s\n", what, ckpt_errname(rc),
            msg && *msg ? msg : ckpt_strerror(rc));
    return 1;
}

static int rm_store(const char *root)
{
    int e = ckpt_fs_rmtree(root);
    if (e != 0)
        fprintf(stderr, "hook-cost-bench: removing %s: %s\n", root, strerror(e));
    return e ? -1 : 0;
}

/* One object as the glue logs its create: a new id, then the record. */
static int obj_create(ckpt_hooks *h, uint64_t cont_id, const char *name, uint64_t *id)
{
    struct ckpt_obj o;
    int rc;
    if ((rc = ckpt_hook_new_id(id, h)) != 0)
        return rc;
    obj_fill(&o, *id, cont_id, name);
    return ckpt_hook_obj_create(h, &o);
}

/* Thread CPU ns of an empty thread_ns() bracket (median of 101). */
static double bracket_ns(void)
{
    double v[101];
    for (size_t i = 0; i < 101; i++) {
        double t0 = thread_ns();
        v[i] = thread_ns() - t0;
    }
    return bench_median(v, 101);
}

/* The workload; with every > 0, ckpt_hooks_checkpoint after each `every`
 * mutations, its thread CPU added to *commit_ns; with create_ns, the
 * thread CPU of the object creates (new id and record) added there. */
static int workload(ckpt_hooks *h, const struct cfg *c, size_t every, double *commit_ns,
                    double *create_ns, size_t *nmut)
{
    char tags[1000][8];
    size_t n = 0, ntags = c->ntags < 1000 ? c->ntags : 1000;
    int rc;
    for (size_t j = 0; j < ntags; j++)
        snprintf(tags[j], sizeof tags[j], "t%zu", j);
    for (size_t i = 0; i < c->nobj; i++) {
        uint64_t id;
        char name[32]; /* PDC's server has it from the RPC */
        snprintf(name, sizeof name, "o%zu", i);
        double t0 = create_ns ? thread_ns() : 0;
        if ((rc = obj_create(h, 1, name, &id)) != 0)
            return fail("object create", rc);
        if (create_ns)
            *create_ns += thread_ns() - t0;
        n++;
        for (size_t j = 0; j <= ntags; j++) {
            if (every && n % every == 0) {
                double c0 = thread_ns();
                if ((rc = ckpt_hooks_checkpoint(h)) != 0)
                    return fail("checkpoint", rc);
                *commit_ns += thread_ns() - c0;
            }
            if (j == ntags)
                break;
            uint64_t v = (uint64_t)i * 1000003u + (uint64_t)j;
            struct ckpt_kvtag t = {tags[j], PDC_UINT64_CODE, sizeof v, &v};
            if ((rc = ckpt_hook_kvtag_put(h, id, &t)) != 0)
                return fail("kvtag put", rc);
            n++;
        }
    }
    *nmut = n;
    return 0;
}

static int open_store(ckpt_hooks **h, const char *root, int policy_off)
{
    static char root_buf[4096];
    struct ckpt_hooks_opts o = CKPT_HOOKS_OPTS_INIT;
    int rc;
    if ((rc = ckpt_hooks_opts_from_env(&o, root_buf, sizeof root_buf)) != 0)
        return fail("PDC_CKPT_* environment", rc);
    o.store_root = root;
    o.rank = 0;
    o.nranks = 1;
    if (policy_off)
        o.commit_every = o.commit_ms = 0;
    if ((rc = ckpt_hooks_open(h, &o)) != 0)
        return fail("open", rc);
    return 0;
}

static int one_run(const struct cfg *c, struct run *r)
{
    char root[4096];
    ckpt_hooks *h;
    double t0, p0, w0, b0;
    int rc;
    memset(r, 0, sizeof *r);
    snprintf(root, sizeof root, "%s/hook-cost-bench.%ld", c->dir, (long)getpid());
    if (rm_store(root) != 0)
        return 1;

    /* stage and commit: the policy off, checkpoints every K mutations */
    if (open_store(&h, root, 1) != 0)
        return 1;
    double br = bracket_ns();
    t0 = thread_ns();
    if (workload(h, c, c->every, &r->commit_ns, &r->create_ns, &r->nmut) != 0)
        return 1;
    /* each create and each checkpoint was bracketed: take the brackets out */
    size_t nck = r->nmut / c->every;
    r->stage_ns = thread_ns() - t0 - r->commit_ns - br * (double)(c->nobj + nck);
    r->commit_ns -= br * (double)nck;
    r->create_ns -= br * (double)c->nobj;
    if ((rc = ckpt_hooks_close(h)) != 0)
        return fail("close", rc);
    ckpt_store_wait_closed();
    if (rm_store(root) != 0)
        return 1;

    /* inline: the glue's policy */
    if (open_store(&h, root, 0) != 0)
        return 1;
    size_t n;
    double unused = 0;
    t0 = thread_ns();
    p0 = process_ns();
    w0 = wall_ns();
    b0 = thread_waits();
    if (workload(h, c, 0, &unused, NULL, &n) != 0)
        return 1;
    r->inline_waits = thread_waits() - b0;
    r->inline_ns = thread_ns() - t0;
    r->inline_proc_ns = process_ns() - p0;
    r->inline_wall_ns = wall_ns() - w0;
    t0 = wall_ns();
    if ((rc = ckpt_hooks_close(h)) != 0)
        return fail("close", rc);
    r->close_ns = wall_ns() - t0;
    ckpt_store_wait_closed();
    return rm_store(root);
}

/* Thread CPU ns per record of the encoders alone. */
static void encode_cost(size_t reps, double *obj_ns, double *kvtag_ns)
{
    uint8_t buf[512];
    size_t len, sink = 0;
    struct ckpt_obj o;
    char name[32];
    double t0 = thread_ns();
    snprintf(name, sizeof name, "o%d", 4242);
    for (size_t i = 0; i < reps; i++) {
        obj_fill(&o, 1000000000u + i, 1, name);
        ckpt_rec_obj_encode(&len, buf, sizeof buf, &o);
        sink += len;
    }
    *obj_ns = (thread_ns() - t0) / (double)reps;
    t0 = thread_ns();
    for (size_t i = 0; i < reps; i++) {
        uint64_t v = i;
        struct ckpt_kvtag t = {"t42", PDC_UINT64_CODE, sizeof v, &v};
        ckpt_rec_kvtag_encode(&len, buf, sizeof buf, &t);
        sink += len;
    }
    *kvtag_ns = (thread_ns() - t0) / (double)reps;
    if (sink == 0)
        fprintf(stderr, "hook-cost-bench: nothing encoded\n");
}

static void usage(FILE *f)
{
    fprintf(f, "usage: hook-cost-bench [--objects N] [--tags T] [--runs R] [--commit-every K] "
               "[--dir DIR]\n");
}

int main(int argc, char **argv)
{
    const char *tmp = getenv("TMPDIR");
    struct cfg c = {10000, 100, 5, 1000, tmp && *tmp ? tmp : "/tmp"};
    uid_g = (int32_t)getuid();
    for (int i = 1; i < argc; i++) {
        size_t *dst = NULL;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (i + 1 >= argc) {
            usage(stderr);
            return 2;
        }
        if (strcmp(argv[i], "--objects") == 0)
            dst = &c.nobj;
        else if (strcmp(argv[i], "--tags") == 0)
            dst = &c.ntags;
        else if (strcmp(argv[i], "--runs") == 0)
            dst = &c.runs;
        else if (strcmp(argv[i], "--commit-every") == 0)
            dst = &c.every;
        else if (strcmp(argv[i], "--dir") == 0)
            c.dir = argv[i + 1];
        else {
            fprintf(stderr, "hook-cost-bench: unknown option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
        if (dst != NULL && (bench_parse_count(argv[i + 1], dst) != 0 ||
                            (dst == &c.ntags && *dst > 1000))) {
            fprintf(stderr, "hook-cost-bench: %s %s: expected a positive count%s\n", argv[i],
                    argv[i + 1], dst == &c.ntags ? " of at most 1000" : "");
            return 2;
        }
        i++;
    }

    double *v = calloc(11 * c.runs, sizeof *v);
    if (v == NULL)
        return 1;
    double *enc_o = v, *enc_k = v + c.runs, *stage = v + 2 * c.runs, *commit = v + 3 * c.runs;
    double *inl = v + 4 * c.runs, *proc = v + 5 * c.runs, *wall = v + 6 * c.runs,
           *close_ms = v + 7 * c.runs, *create = v + 8 * c.runs, *kvput = v + 9 * c.runs,
           *waits = v + 10 * c.runs;
    size_t nmut = 0;
    printf("hook-cost-bench: %zu objects x %zu kvtags, %zu runs, commit every %zu for the commit "
           "phase\n",
           c.nobj, c.ntags, c.runs, c.every);
    printf("run\tencode_obj_ns\tencode_kvtag_ns\tcreate_ns\tkvtag_put_ns\tstage_ns\tcommit_ns\t"
           "inline_ns\tprocess_ns\tinline_wall_ns\tinline_waits_per_1k\tclose_ms\n");
    for (size_t r = 0; r < c.runs; r++) {
        struct run x;
        encode_cost(1000000, &enc_o[r], &enc_k[r]);
        if (one_run(&c, &x) != 0) {
            free(v);
            return 1;
        }
        nmut = x.nmut;
        double m = (double)x.nmut;
        stage[r] = x.stage_ns / m;
        commit[r] = x.commit_ns / m;
        inl[r] = x.inline_ns / m;
        proc[r] = x.inline_proc_ns / m;
        wall[r] = x.inline_wall_ns / m;
        close_ms[r] = x.close_ns / 1e6;
        create[r] = x.create_ns / (double)c.nobj;
        kvput[r] = (x.stage_ns - x.create_ns) / (double)(x.nmut - c.nobj);
        waits[r] = x.inline_waits * 1000 / m;
        printf("%zu\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.1f\n", r + 1,
               enc_o[r], enc_k[r], create[r], kvput[r], stage[r], commit[r], inl[r], proc[r],
               wall[r], waits[r], close_ms[r]);
        fflush(stdout);
    }
    printf("hook-cost: mutations=%zu runs=%zu encode_obj_ns=%.1f encode_kvtag_ns=%.1f "
           "create_ns=%.1f kvtag_put_ns=%.1f stage_ns=%.1f commit_ns=%.1f inline_ns=%.1f "
           "process_ns=%.1f inline_wall_ns=%.1f inline_waits_per_1k=%.2f close_ms=%.1f (medians; "
           "ns per mutation unless said)\n",
           nmut, c.runs, bench_median(enc_o, c.runs), bench_median(enc_k, c.runs),
           bench_median(create, c.runs), bench_median(kvput, c.runs), bench_median(stage, c.runs), bench_median(commit, c.runs), bench_median(inl, c.runs),
           bench_median(proc, c.runs), bench_median(wall, c.runs), bench_median(waits, c.runs),
           bench_median(close_ms, c.runs));
    free(v);
    return 0;
}
