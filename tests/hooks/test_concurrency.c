/*
 * test_concurrency.c - many server threads calling hooks at once on one
 * ckpt_hooks handle, with a small commit_every (commits happen in every
 * thread), a small commit_ms (the background thread commits too), a 1 MiB
 * initial map (it grows while threads write) and a reader thread doing
 * lookups meanwhile. After close and reopen every mutation is there exactly
 * once (entries per database, the store's mutation count) and all ids are
 * unique.
 *
 * cmocka's assertions longjmp and must not run outside the main thread:
 * worker threads record their first failure and the main thread reports it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bulki.h"
#include "hooks_test_util.h"
#include "model_server.h"

enum { NTHREADS = 8, NOBJ = 150 };

/* per-object schedule, the same in every thread */
static int drops_shared_tag(int i) { return i % 10 == 9; }
static int is_deleted(int i) { return i % 25 == 24; }
static int checkpoints(int i) { return i % 40 == 39; }
static int tries_long_name(int i) { return i % 30 == 0; }

struct shared {
    ckpt_hooks *h;
    uint64_t cont;
    atomic_int writers_done;
    uint64_t reads;
    char err[512];
    pthread_mutex_t mu;
};

struct worker {
    struct shared *s;
    int t;
    uint64_t ids[NOBJ];
    char err[512];
};

#define TCHECK(w, cond, ...)                                                   \
    do {                                                                       \
        if (!(cond)) {                                                         \
            int n_ = snprintf((w)->err, sizeof (w)->err, "thread %d: ", (w)->t); \
            snprintf((w)->err + n_, sizeof (w)->err - (size_t)n_, __VA_ARGS__); \
            return NULL;                                                       \
        }                                                                      \
    } while (0)

#define TRC(w, expr)                                                           \
    do {                                                                       \
        int rc_ = (expr);                                                      \
        TCHECK(w, rc_ == 0, "%s returned %d (%s): %s", #expr, rc_, ckpt_errname(rc_), \
               ckpt_errmsg());                                       \
    } while (0)

static void obj_name(char *buf, size_t n, int t, int i)
{
    snprintf(buf, n, "/t%d/obj-%03d", t, i);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    ckpt_hooks *h = w->s->h;
    const int t = w->t;
    for (int i = 0; i < NOBJ; i++) {
        char name[32];
        uint64_t id;
        TRC(w, ckpt_hook_new_id(&id, h));
        w->ids[i] = id;
        obj_name(name, sizeof name, t, i);
        struct ckpt_obj o;
        memset(&o, 0, sizeof o);
        o.obj_id = id;
        o.cont_id = w->s->cont;
        o.obj_name = name;
        o.time_step = t;
        o.user_id = t;
        o.ndim = 1;
        o.dims[0] = (uint64_t)i + 1;
        TRC(w, ckpt_hook_obj_create(h, &o));
        int32_t iv = i;
        struct ckpt_kvtag shared_tag = {"shared-tag", BULKI_T_INT, 4, &iv};
        char kname[16], kval[32];
        snprintf(kname, sizeof kname, "k%d", i % 3);
        snprintf(kval, sizeof kval, "t%d-i%d", t, i);
        struct ckpt_kvtag own = {kname, BULKI_T_STRING, (uint32_t)strlen(kval) + 1, kval};
        TRC(w, ckpt_hook_kvtag_put(h, id, &shared_tag));
        TRC(w, ckpt_hook_kvtag_put(h, id, &own));
        struct ckpt_region g;
        double range[4] = {0, 1, 1, 2};
        uint64_t bins[2] = {(uint64_t)t, (uint64_t)i};
        memset(&g, 0, sizeof g);
        g.obj_id = id;
        g.ndim = 1 + (uint32_t)(i % 4);
        for (uint32_t d = 0; d < g.ndim; d++)
            g.count[d] = 8;
        g.data_size = (uint64_t)i;
        g.storage_location = "/r";
        if (i % 2 == 0) {
            g.has_hist = 1;
            g.hist.nbin = 2;
            g.hist.range = range;
            g.hist.bin = bins;
        }
        TRC(w, ckpt_hook_region_put(h, &g));
        TRC(w, ckpt_hook_cont_add_objs(h, w->s->cont, &id, 1));
        if (drops_shared_tag(i))
            TRC(w, ckpt_hook_kvtag_delete(h, id, "shared-tag"));
        if (is_deleted(i))
            TRC(w, ckpt_hook_obj_delete(h, id));
        if (checkpoints(i))
            TRC(w, ckpt_hooks_checkpoint(h));
        if (tries_long_name(i)) {
            /* each thread reads its own error message */
            size_t len = CKPT_NAME_MAX + 1 + (size_t)t;
            char *longname = malloc(len + 1);
            TCHECK(w, longname != NULL, "out of memory");
            memset(longname, 'a' + t, len);
            longname[len] = 0;
            struct ckpt_kvtag bad = {longname, BULKI_T_INT, 4, &iv};
            int rc = ckpt_hook_kvtag_put(h, id, &bad);
            char want[32];
            snprintf(want, sizeof want, "%zu bytes", len);
            int msg_ok = strstr(ckpt_errmsg(), want) != NULL;
            free(longname);
            TCHECK(w, rc == CKPT_E_NAMETOOLONG, "long name: %d", rc);
            TCHECK(w, msg_ok, "message \"%s\" is not about this thread's %s name",
                   ckpt_errmsg(), want);
        }
    }
    return NULL;
}

/* Lookups while the writers run (a reader never stages mutations). */
static void *reader_main(void *arg)
{
    struct shared *s = arg;
    uint64_t n = 0;
    while (!atomic_load(&s->writers_done)) {
        ckpt_hooks_read *r;
        struct ckpt_cont c;
        int rc = ckpt_hooks_read_begin(&r, s->h);
        if (rc != 0) {
            snprintf(s->err, sizeof s->err, "reader: read_begin: %s", ckpt_errmsg());
            return NULL;
        }
        rc = ckpt_hooks_get_cont(&c, r, s->cont);
        if (rc != 0 || strcmp(c.cont_name, "/shared") != 0) {
            snprintf(s->err, sizeof s->err, "reader: get_cont returned %d", rc);
            ckpt_hooks_read_end(r);
            return NULL;
        }
        rc = ckpt_hooks_foreach_member(r, s->cont, NULL, NULL);
        ckpt_hooks_read_end(r);
        if (rc != 0) {
            snprintf(s->err, sizeof s->err, "reader: foreach_member returned %d", rc);
            return NULL;
        }
        n++;
    }
    s->reads = n;
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int count_cb(uint64_t a, uint64_t b, void *p)
{
    (void)a;
    (void)b;
    ++*(uint64_t *)p;
    return 0;
}

static int count_id_cb(uint64_t a, void *p)
{
    return count_cb(a, 0, p);
}

static void test_eight_threads_on_one_handle(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    o.commit_every = 7;
    o.commit_ms = 2;
    o.sync_mode = CKPT_SYNC_CLOSE;
    o.sync_ms = 50;
    o.map_size = (size_t)1 << 20;
    static struct shared s;
    static struct worker w[NTHREADS];
    memset(&s, 0, sizeof s);
    memset(w, 0, sizeof w);
    HTU_OK(ckpt_hooks_open(&s.h, &o));
    HTU_OK(ckpt_hook_new_id(&s.cont, s.h));
    struct ckpt_cont c = {s.cont, "/shared", ""};
    HTU_OK(ckpt_hook_cont_create(s.h, &c));
    struct ckpt_kvtag ct = {"owner", BULKI_T_STRING, 5, "test"};
    HTU_OK(ckpt_hook_kvtag_put(s.h, s.cont, &ct));
    HTU_OK(ckpt_hooks_checkpoint(s.h));

    pthread_t th[NTHREADS], rd;
    assert_int_equal(pthread_create(&rd, NULL, reader_main, &s), 0);
    for (int t = 0; t < NTHREADS; t++) {
        w[t].s = &s;
        w[t].t = t;
        assert_int_equal(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
    }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    atomic_store(&s.writers_done, 1);
    pthread_join(rd, NULL);
    for (int t = 0; t < NTHREADS; t++)
        if (w[t].err[0])
            fail_msg("%s", w[t].err);
    if (s.err[0])
        fail_msg("%s", s.err);
    assert_true(s.reads > 0);

    /* the background thread commits a batch nobody else would commit: one
     * mutation into an empty batch is below commit_every and not yet
     * commit_ms old, and nothing is staged after it */
    HTU_OK(ckpt_hooks_checkpoint(s.h));
    struct ckpt_kvtag late = {"late", BULKI_T_STRING, 2, "l"};
    HTU_OK(ckpt_hook_kvtag_put(s.h, s.cont, &late));
    for (int n = 0; n < 2000 && ckpt_store_pending(ckpt_hooks_store(s.h)) != 0; n++) /* up to 20 s */
        sleep_ms(10);
    assert_int_equal(ckpt_store_pending(ckpt_hooks_store(s.h)), 0);
    HTU_OK(ckpt_hooks_close(s.h));

    /* what must be there */
    uint64_t live = 0, shared_tags = 0, per_thread_muts = 0;
    for (int i = 0; i < NOBJ; i++) {
        per_thread_muts += 5 + (uint64_t)drops_shared_tag(i) + (uint64_t)is_deleted(i);
        if (is_deleted(i))
            continue;
        live++;
        shared_tags += !drops_shared_tag(i);
    }
    live *= NTHREADS;
    shared_tags *= NTHREADS;
    const uint64_t cont_tags = 2; /* "owner" and "late" */
    const uint64_t kvtags = live + shared_tags + cont_tags;
    /* container, its tag, the workers' mutations, the late tag */
    const uint64_t mutations = 2 + NTHREADS * per_thread_muts + 1;

    ckpt_hooks *h;
    HTU_OK(ckpt_hooks_restart_map(&h, &o));
    struct ckpt_store_info info;
    HTU_OK(ckpt_store_info(&info, ckpt_hooks_store(h)));
    assert_int_equal(info.mutations, mutations);
    assert_true(info.commits * 7 >= mutations);
    assert_true(info.map_size > ((size_t)1 << 20)); /* the map grew */
    print_message("%llu mutations in %llu commits; map %zu KiB; %llu reads meanwhile\n",
                  (unsigned long long)info.mutations, (unsigned long long)info.commits,
                  info.map_size >> 10, (unsigned long long)s.reads);

    ckpt_rtxn *tx;
    HTU_OK(ckpt_rtxn_begin(&tx, ckpt_hooks_store(h)));
    struct {
        int db;
        uint64_t want;
    } dbs[] = {
        {CKPT_DB_OBJ, live},       {CKPT_DB_OBJ_NAME, live}, {CKPT_DB_KVTAG, kvtags},
        {CKPT_DB_TAG_INDEX, kvtags}, {CKPT_DB_CONT, 1},        {CKPT_DB_CONT_NAME, 1},
        {CKPT_DB_CONT_OBJ, live},  {CKPT_DB_REGION, live},
    };
    for (size_t i = 0; i < sizeof dbs / sizeof dbs[0]; i++) {
        uint64_t n = 0;
        HTU_OK(ckpt_db_stat(&n, NULL, tx, dbs[i].db));
        if (n != dbs[i].want)
            fail_msg("database %s holds %llu entries, expected %llu", ckpt_db_name(dbs[i].db),
                     (unsigned long long)n, (unsigned long long)dbs[i].want);
    }
    ckpt_rtxn_end(tx);

    /* every object where it belongs, deleted ones gone */
    ckpt_hooks_read *r;
    HTU_OK(ckpt_hooks_read_begin(&r, h));
    for (int t = 0; t < NTHREADS; t++) {
        for (int i = 0; i < NOBJ; i++) {
            char name[32];
            struct ckpt_obj got;
            struct ckpt_kvtag tg;
            obj_name(name, sizeof name, t, i);
            if (is_deleted(i)) {
                HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_obj(&got, r, w[t].ids[i]));
                HTU_RC(CKPT_E_NOTFOUND, ckpt_hooks_get_obj_by_name(&got, r, name, t));
                continue;
            }
            HTU_OK(ckpt_hooks_get_obj_by_name(&got, r, name, t));
            assert_int_equal(got.obj_id, w[t].ids[i]);
            assert_int_equal(got.cont_id, s.cont);
            assert_int_equal(got.dims[0], (uint64_t)i + 1);
            HTU_RC(drops_shared_tag(i) ? CKPT_E_NOTFOUND : 0,
                   ckpt_hooks_get_kvtag(&tg, r, w[t].ids[i], "shared-tag"));
            char kname[16], kval[32];
            snprintf(kname, sizeof kname, "k%d", i % 3);
            snprintf(kval, sizeof kval, "t%d-i%d", t, i);
            HTU_OK(ckpt_hooks_get_kvtag(&tg, r, w[t].ids[i], kname));
            assert_string_equal((const char *)tg.value, kval);
        }
    }
    uint64_t nmem = 0, ntagged = 0;
    HTU_OK(ckpt_hooks_foreach_member(r, s.cont, count_cb, &nmem));
    assert_int_equal(nmem, live);
    HTU_OK(ckpt_hooks_foreach_tagged(r, "shared-tag", count_id_cb, &ntagged));
    assert_int_equal(ntagged, shared_tags);
    ckpt_hooks_read_end(r);

    /* all ids unique, and new ones continue above them */
    uint64_t *all = malloc(sizeof(uint64_t) * (NTHREADS * NOBJ + 2));
    assert_non_null(all);
    size_t n = 0;
    for (int t = 0; t < NTHREADS; t++)
        for (int i = 0; i < NOBJ; i++)
            all[n++] = w[t].ids[i];
    all[n++] = s.cont;
    qsort(all, n, sizeof *all, cmp_u64);
    for (size_t i = 1; i < n; i++)
        if (all[i] == all[i - 1])
            fail_msg("id %llu handed out twice", (unsigned long long)all[i]);
    uint64_t next;
    HTU_OK(ckpt_hook_new_id(&next, h));
    assert_true(next > all[n - 1]);
    free(all);
    HTU_OK(ckpt_hooks_close(h));
}

/* The model server from many threads (its tables take a lock; the hooks
 * and the background commits run concurrently underneath), then a rebuild
 * restart gives an equal model. */
struct mworker {
    model_server *m;
    uint64_t cont;
    int t;
    char err[512];
};

static void *mworker_main(void *arg)
{
    struct mworker *w = arg;
    for (int i = 0; i < NOBJ; i++) {
        char name[32];
        uint64_t id;
        struct ckpt_obj o;
        memset(&o, 0, sizeof o);
        obj_name(name, sizeof name, w->t, i);
        o.cont_id = w->cont;
        o.obj_name = name;
        o.time_step = w->t;
        TRC(w, model_obj_create(w->m, &o, &id));
        TRC(w, model_cont_add(w->m, w->cont, &id, 1));
        int32_t v = i;
        struct ckpt_kvtag tg = {"i", BULKI_T_INT, 4, &v};
        TRC(w, model_kvtag_put(w->m, id, &tg));
        struct ckpt_region g;
        memset(&g, 0, sizeof g);
        g.obj_id = id;
        g.ndim = 2;
        g.count[0] = g.count[1] = (uint64_t)i + 1;
        TRC(w, model_region_put(w->m, &g));
        if (i % 7 == 3)
            TRC(w, model_obj_delete(w->m, id));
    }
    return NULL;
}

static void test_model_server_from_many_threads_rebuilds_equal(void **state)
{
    struct ckpt_hooks_opts o = htu_opts(state);
    o.commit_every = 7;
    o.commit_ms = 2;
    ckpt_hooks *h, *h2;
    model_server *m, *m2;
    uint64_t cont;
    HTU_OK(ckpt_hooks_open(&h, &o));
    HTU_OK(model_create(&m, 0, 1, h));
    HTU_OK(model_cont_create(m, "/mt", &cont));
    static struct mworker w[NTHREADS];
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].m = m;
        w[t].cont = cont;
        w[t].t = t;
        assert_int_equal(pthread_create(&th[t], NULL, mworker_main, &w[t]), 0);
    }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NTHREADS; t++)
        if (w[t].err[0])
            fail_msg("%s", w[t].err);
    HTU_OK(ckpt_hooks_close(h));
    struct ckpt_rebuild_stats st;
    HTU_OK(model_restart_rebuild(&m2, &h2, &o, &st));
    char why[256] = "";
    if (!model_equal(m, m2, why, sizeof why))
        fail_msg("rebuilt model differs: %s", why);
    assert_int_equal(st.objs, model_count_objs(m));
    HTU_OK(ckpt_hooks_close(h2));
    model_destroy(m);
    model_destroy(m2);
}

#define T(f) cmocka_unit_test_setup_teardown(f, htu_setup, htu_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_eight_threads_on_one_handle),
        T(test_model_server_from_many_threads_rebuilds_equal),
    };
    return cmocka_run_group_tests_name("hooks concurrency", tests, NULL, NULL);
}
