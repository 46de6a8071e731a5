/*
 * test_inspect_live - ckpt-inspect against a store that this process holds
 * open for writing (as a running PDC server would):
 *
 *   live_stat_dump_verify  stat/dump/verify see exactly the committed data
 *                          (not what is only staged), report the writer's
 *                          map size as it grows from 1 MiB, and "not clean";
 *                          after close, "clean"
 *   live_copy              copy and copy --compact of the open store give
 *                          stores that verify accepts, with the same object
 *                          count
 *   live_long_names        names over 448 bytes (hashed keys) in dump, get,
 *                          find and verify
 *   live_concurrent        a writer thread commits and grows the map while
 *                          stat, dump, verify and both copies run; every
 *                          output is consistent (one commit's state)
 *   live_record_keys       dump shows an object's obj_keys entry; verify
 *                          reports one that disagrees with the record
 *
 * argv[1] is the ckpt-inspect binary. Each test runs in its own mkdtemp
 * directory, removed in teardown.
 */
#include <errno.h>
#include <dirent.h>
#include <json-c/json.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "ckpt_fs.h"
#include "ckpt_hooks.h"
#include "ckpt_store.h"
#include "test_util.h"

static const char *g_inspect;


static int setup(void **state)
{
    return tu_case_new(state, "inspect-live");
}

static int teardown(void **state)
{
    return tu_case_free(state);
}

/* Run ckpt-inspect with the given arguments (a printf format, already
 * shell-quoted by the caller) and assert its exit status is `want`;
 * stdout in *out (malloc'd). stderr goes to DIR/stderr.log and is printed
 * with the command when the status is not the expected one. */
static void run(struct tu_case *f, int want, char **out, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void run(struct tu_case *f, int want, char **out, const char *fmt, ...)
{
    char args[2048], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s 2>>'%s/stderr.log'", g_inspect, args, f->dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (;;) {
        if (cap - n < 4096) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
        size_t r = fread(buf + n, 1, cap - n - 1, p);
        if (r == 0)
            break;
        n += r;
    }
    buf[n] = 0;
    int st = pclose(p);
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
    if (rc != want) {
        char log[700];
        snprintf(log, sizeof log, "%s/stderr.log", f->dir);
        FILE *l = fopen(log, "r");
        fprintf(stderr, "command: %s -> exit %d\nstdout: %.2000s\n", cmd, rc, buf);
        if (l) {
            char line[1024];
            while (fgets(line, sizeof line, l))
                fprintf(stderr, "stderr: %s", line);
            fclose(l);
        }
    }
    *out = buf;
    assert_int_equal(rc, want);
}

static json_object *parse(const char *s)
{
    json_object *j = json_tokener_parse(s);
    if (j == NULL)
        fprintf(stderr, "not JSON: %.500s\n", s);
    assert_non_null(j);
    return j;
}

static json_object *path(json_object *j, const char *a, const char *b, const char *c)
{
    json_object *x = j;
    const char *ks[] = {a, b, c};
    for (int i = 0; i < 3 && ks[i]; i++)
        assert_true(json_object_object_get_ex(x, ks[i], &x));
    return x;
}

/* ---- a writer ---- */

static ckpt_store *open_writer(const char *root)
{
    struct ckpt_store_opts o = CKPT_STORE_OPTS_INIT;
    ckpt_store *st = NULL;
    o.root = root;
    o.rank = 0;
    o.nranks = 1;
    o.rec_keys = ckpt_rec_keys; /* the hooks' records */
    o.commit_every = 0; /* commits only on checkpoint: the test decides */
    o.commit_ms = 0;
    o.map_size = (size_t)1 << 20; /* small, so that the map grows */
    int rc = ckpt_store_open(&st, &o);
    if (rc)
        fprintf(stderr, "open: %s\n", ckpt_errmsg());
    assert_int_equal(rc, 0);
    return st;
}

static uint64_t put_cont(ckpt_store *st, const char *name)
{
    uint8_t buf[512];
    size_t len;
    uint64_t id;
    assert_int_equal(ckpt_store_next_id(&id, st), 0);
    struct ckpt_cont c = {id, name, ""};
    assert_int_equal(ckpt_rec_cont_encode(&len, buf, sizeof buf, &c), 0);
    assert_int_equal(ckpt_store_put_cont(st, id, name, strlen(name), buf, len), 0);
    return id;
}

/* A new object `name` (time step ts, 1-D of 100) of cont, put with the
 * keys' container key_cont (cont unless a test wants them to disagree);
 * its id. */
static uint64_t put_obj_keyed(ckpt_store *st, uint64_t cont, const char *name, int32_t ts,
                              uint64_t key_cont)
{
    uint8_t buf[4096];
    size_t len;
    uint64_t id;
    struct ckpt_obj o;
    assert_int_equal(ckpt_store_next_id(&id, st), 0);
    memset(&o, 0, sizeof o);
    o.obj_id = id;
    o.cont_id = cont;
    o.obj_name = name;
    o.app_name = "live";
    o.data_location = "";
    o.tags = "";
    o.time_step = ts;
    o.ndim = 1;
    o.dims[0] = 100;
    assert_int_equal(ckpt_rec_obj_encode(&len, buf, sizeof buf, &o), 0);
    assert_int_equal(ckpt_store_put_obj(st, id, name, strlen(name), ts, key_cont, buf, len), 0);
    return id;
}

static uint64_t put_obj(ckpt_store *st, uint64_t cont, const char *name, int32_t ts)
{
    return put_obj_keyed(st, cont, name, ts, cont);
}

/* kvtag t on object id */
static void put_tag(ckpt_store *st, uint64_t id, const struct ckpt_kvtag *t)
{
    uint8_t buf[4096];
    size_t len;
    assert_int_equal(ckpt_rec_kvtag_encode(&len, buf, sizeof buf, t), 0);
    assert_int_equal(ckpt_store_put_kvtag(st, id, t->name, strlen(t->name), buf, len), 0);
}

/* Objects obj<from>..obj<to-1> in cont, each with a kvtag "Group" = i and
 * a padding tag (so that the map has to grow), every 10th with a region. */
static void put_objects(ckpt_store *st, uint64_t cont, int from, int to)
{
    static char pad[3000];
    memset(pad, 'p', sizeof pad - 1);
    for (int i = from; i < to; i++) {
        char name[32];
        uint8_t buf[4096];
        size_t len;
        int32_t v = i;
        snprintf(name, sizeof name, "obj%d", i);
        uint64_t id = put_obj(st, cont, name, 0);
        struct ckpt_kvtag t = {"Group", 2 /* PDC_INT */, sizeof v, &v};
        put_tag(st, id, &t);
        struct ckpt_kvtag p = {"pad", 16 /* PDC_STRING */, (uint32_t)sizeof pad, pad};
        put_tag(st, id, &p);
        assert_int_equal(ckpt_store_cont_add(st, cont, &id, 1), 0);
        if (i % 10 == 0) {
            struct ckpt_region g;
            memset(&g, 0, sizeof g);
            g.obj_id = id;
            g.ndim = 1;
            g.start[0] = 0;
            g.count[0] = 100;
            g.data_size = 800;
            g.unit_size = 8;
            g.storage_location = "/x";
            g.cache_location = "";
            assert_int_equal(ckpt_rec_region_encode(&len, buf, sizeof buf, &g), 0);
            assert_int_equal(ckpt_store_put_region(st, id, 1, g.start, g.count, buf, len), 0);
        }
    }
}

static int64_t stat_objects(struct tu_case *f, const char *root, size_t *map_size, int *clean)
{
    char *out;
    run(f, 0, &out, "stat '%s' --json", root);
    json_object *j = parse(out);
    int64_t n = json_object_get_int64(path(path(j, "total", "databases", "obj"), "entries", NULL, NULL));
    json_object *r0 = json_object_array_get_idx(path(j, "ranks", NULL, NULL), 0);
    if (map_size)
        *map_size = (size_t)json_object_get_uint64(path(r0, "map_size", NULL, NULL));
    if (clean)
        *clean = json_object_get_boolean(path(r0, "clean", NULL, NULL));
    json_object_put(j);
    free(out);
    return n;
}

/* dump --db obj: number of lines; every line a record of the obj db */
static int64_t dump_objects(struct tu_case *f, const char *root)
{
    char *out, *save = NULL;
    int64_t n = 0;
    run(f, 0, &out, "dump '%s' --db obj", root);
    for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        json_object *j = parse(l);
        assert_string_equal(json_object_get_string(path(j, "db", NULL, NULL)), "obj");
        assert_int_equal(json_object_get_uint64(path(j, "key", "id", NULL)),
                         json_object_get_uint64(path(j, "value", "obj_id", NULL)));
        json_object_put(j);
        n++;
    }
    free(out);
    return n;
}

/* verify: exit 0 and the count of objects on the OK line */
static int64_t verify_objects(struct tu_case *f, const char *root)
{
    char *out;
    long long n = -1;
    run(f, 0, &out, "verify '%s'", root);
    assert_int_equal(sscanf(out, "verified %lld objects,", &n), 1);
    assert_non_null(strstr(out, " in 1 ranks: OK\n"));
    free(out);
    return n;
}

static void live_stat_dump_verify(void **state)
{
    struct tu_case *f = *state;
    ckpt_store *st = open_writer(f->root);
    struct ckpt_store_info info;
    size_t map = 0;
    int clean = 1;
    uint64_t cont = put_cont(st, "live-cont");
    put_objects(st, cont, 0, 100);
    assert_int_equal(ckpt_store_checkpoint(st), 0);

    assert_int_equal(stat_objects(f, f->root, &map, &clean), 100);
    assert_int_equal(clean, 0); /* open for writing */
    assert_int_equal(ckpt_store_info(&info, st), 0);
    assert_int_equal(map, info.map_size);
    assert_int_equal(dump_objects(f, f->root), 100);
    assert_int_equal(verify_objects(f, f->root), 100);

    /* staged but not committed: invisible */
    put_objects(st, cont, 100, 150);
    assert_int_equal(stat_objects(f, f->root, NULL, NULL), 100);
    assert_int_equal(dump_objects(f, f->root), 100);

    /* committed, map grown several times past its 1 MiB */
    put_objects(st, cont, 150, 2000);
    assert_int_equal(ckpt_store_checkpoint(st), 0);
    assert_int_equal(ckpt_store_info(&info, st), 0);
    assert_true(info.map_size > ((size_t)1 << 20));
    assert_int_equal(stat_objects(f, f->root, &map, NULL), 2000);
    assert_int_equal(map, info.map_size);
    assert_int_equal(dump_objects(f, f->root), 2000);
    assert_int_equal(verify_objects(f, f->root), 2000);

    /* get and find while the writer is open */
    char *out;
    run(f, 0, &out, "find '%s' --tag Group --value 1999", f->root);
    assert_non_null(strstr(out, "\"name\":\"obj1999\""));
    free(out);
    run(f, 0, &out, "get '%s' --name obj1500", f->root);
    json_object *g = parse(out);
    assert_string_equal(json_object_get_string(path(g, "container", "name", NULL)), "live-cont");
    assert_int_equal(json_object_array_length(path(g, "regions", NULL, NULL)), 1);
    json_object_put(g);
    free(out);

    assert_int_equal(ckpt_store_close(st), 0);
    assert_int_equal(stat_objects(f, f->root, NULL, &clean), 2000);
    assert_int_equal(clean, 1);
}

static void live_copy(void **state)
{
    struct tu_case *f = *state;
    ckpt_store *st = open_writer(f->root);
    char dest[700], dest2[700], *out;
    uint64_t cont = put_cont(st, "live-cont");
    put_objects(st, cont, 0, 500);
    assert_int_equal(ckpt_store_checkpoint(st), 0);
    put_objects(st, cont, 500, 600); /* staged only: not in the copy */

    snprintf(dest, sizeof dest, "%s/copy", f->dir);
    snprintf(dest2, sizeof dest2, "%s/compact", f->dir);
    run(f, 0, &out, "copy '%s' '%s'", f->root, dest);
    assert_non_null(strstr(out, "rank 0: copied "));
    free(out);
    run(f, 0, &out, "copy '%s' '%s' --compact", f->root, dest2);
    assert_non_null(strstr(out, ", compacted)"));
    free(out);
    /* never over a store */
    run(f, 1, &out, "copy '%s' '%s'", f->root, dest);
    free(out);

    assert_int_equal(verify_objects(f, dest), 500);
    assert_int_equal(verify_objects(f, dest2), 500);
    assert_int_equal(stat_objects(f, dest, NULL, NULL), 500);
    assert_int_equal(stat_objects(f, dest2, NULL, NULL), 500);
    assert_int_equal(ckpt_store_close(st), 0);
    assert_int_equal(stat_objects(f, f->root, NULL, NULL), 600);

    /* the copy is a store: it opens for writing as rank 0 */
    struct ckpt_store_opts o = CKPT_STORE_OPTS_INIT;
    o.root = dest2;
    o.create = 0;
    assert_int_equal(ckpt_store_open(&st, &o), 0);
    assert_int_equal(ckpt_store_close(st), 0);
}

/* Names longer than the 448 bytes a key holds whole: keys carry a prefix
 * and a hash; dump shows them as such, get/find/verify use the full name. */
static void live_long_names(void **state)
{
    struct tu_case *f = *state;
    ckpt_store *st = open_writer(f->root);
    static char oname[1001], tname[601];
    int32_t v = 7;
    char *out, *save = NULL;
    memset(oname, 'o', sizeof oname - 1);
    memset(tname, 't', sizeof tname - 1);
    uint64_t cont = put_cont(st, "live-cont");
    put_objects(st, cont, 0, 10);
    uint64_t id = put_obj(st, cont, oname, 3);
    struct ckpt_kvtag t = {tname, 2, sizeof v, &v};
    put_tag(st, id, &t);
    assert_int_equal(ckpt_store_cont_add(st, cont, &id, 1), 0);
    assert_int_equal(ckpt_store_checkpoint(st), 0);

    run(f, 0, &out, "dump '%s' --db obj_name --prefix '%s'", f->root, oname);
    json_object *j = parse(out);
    assert_true(json_object_get_boolean(path(j, "key", "hashed", NULL)));
    assert_int_equal(strlen(json_object_get_string(path(j, "key", "name", NULL))), 448);
    assert_int_equal(json_object_get_int(path(j, "key", "time_step", NULL)), 3);
    assert_int_equal(json_object_get_uint64(path(j, "value", "id", NULL)), id);
    json_object_put(j);
    free(out);

    run(f, 0, &out, "get '%s' --name '%s' --time-step 3", f->root, oname);
    j = parse(out);
    assert_int_equal(strlen(json_object_get_string(path(j, "object", "obj_name", NULL))), 1000);
    json_object *tags = path(j, "kvtags", NULL, NULL);
    assert_int_equal(json_object_array_length(tags), 1);
    assert_string_equal(json_object_get_string(path(json_object_array_get_idx(tags, 0), "name", NULL,
                                                    NULL)),
                        tname);
    json_object_put(j);
    free(out);

    run(f, 0, &out, "find '%s' --tag '%s' --value 7", f->root, tname);
    int lines = 0;
    for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        lines++;
    assert_int_equal(lines, 1);
    free(out);
    /* a name sharing the 448-byte prefix but not the hash finds nothing */
    tname[599] = 'u';
    run(f, 0, &out, "find '%s' --tag '%s'", f->root, tname);
    assert_string_equal(out, "");
    free(out);
    assert_int_equal(verify_objects(f, f->root), 11);
    assert_int_equal(ckpt_store_close(st), 0);
}

struct writer {
    ckpt_store *st;
    uint64_t cont;
    atomic_int stop; /* set by the main thread (volatile is not a fence: TSan) */
    int next;
    int err;
};

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    while (!atomic_load(&w->stop) && w->next < 40000) {
        put_objects(w->st, w->cont, w->next, w->next + 50);
        w->next += 50;
        if (ckpt_store_checkpoint(w->st) != 0) {
            w->err = 1;
            break;
        }
        usleep(10000); /* keep writing for as long as the readers run */
    }
    return NULL;
}

static void live_concurrent(void **state)
{
    struct tu_case *f = *state;
    struct writer w;
    pthread_t t;
    char dest[700], dest2[700], *out;
    memset(&w, 0, sizeof w);
    w.st = open_writer(f->root);
    w.cont = put_cont(w.st, "live-cont");
    put_objects(w.st, w.cont, 0, 50);
    assert_int_equal(ckpt_store_checkpoint(w.st), 0);
    w.next = 50;
    assert_int_equal(pthread_create(&t, NULL, writer_main, &w), 0);

    snprintf(dest, sizeof dest, "%s/copy", f->dir);
    snprintf(dest2, sizeof dest2, "%s/compact", f->dir);
    for (int i = 0; i < 3; i++) {
        int64_t n = stat_objects(f, f->root, NULL, NULL);
        assert_true(n >= 50 && n % 50 == 0); /* whole commits only */
        n = verify_objects(f, f->root);
        assert_true(n >= 50 && n % 50 == 0);
        n = dump_objects(f, f->root);
        assert_true(n >= 50 && n % 50 == 0);
    }
    run(f, 0, &out, "copy '%s' '%s'", f->root, dest);
    free(out);
    run(f, 0, &out, "copy '%s' '%s' --compact", f->root, dest2);
    free(out);
    atomic_store(&w.stop, 1);
    pthread_join(t, NULL);
    assert_int_equal(w.err, 0);
    int64_t total = w.next;
    assert_int_equal(ckpt_store_close(w.st), 0);

    int64_t a = verify_objects(f, dest), b = verify_objects(f, dest2);
    print_message("writer committed %lld objects meanwhile; the copies hold %lld and %lld\n",
                  (long long)total, (long long)a, (long long)b);
    assert_true(a >= 50 && a % 50 == 0 && a <= total);
    assert_true(b >= a && b % 50 == 0 && b <= total);
    assert_int_equal(stat_objects(f, dest, NULL, NULL), a);
    assert_int_equal(stat_objects(f, f->root, NULL, NULL), total);
    assert_int_equal(verify_objects(f, f->root), total);
}

/* Format 5's record keys: dump shows an object's obj_keys entry, and verify
 * finds one that disagrees with its record (a caller that passed another
 * container than its record names). */
static void live_record_keys(void **state)
{
    struct tu_case *f = *state;
    ckpt_store *st = open_writer(f->root);
    uint64_t cont = put_cont(st, "c");
    uint64_t good = put_obj(st, cont, "good", 3);
    assert_int_equal(ckpt_store_checkpoint(st), 0);
    char *out;
    run(f, 0, &out, "dump '%s' --db obj_keys --prefix %llu", f->root, (unsigned long long)good);
    json_object *j = parse(out);
    assert_string_equal(json_object_get_string(path(j, "value", "name", NULL)), "good");
    assert_int_equal(json_object_get_int64(path(j, "value", "time_step", NULL)), 3);
    assert_int_equal(json_object_get_uint64(path(j, "value", "cont_id", NULL)), cont);
    json_object_put(j);
    free(out);
    assert_int_equal(verify_objects(f, f->root), 1);

    /* a put whose keys are not its record's */
    uint64_t id = put_obj_keyed(st, cont, "bad", 0, 999);
    assert_int_equal(ckpt_store_checkpoint(st), 0);
    run(f, 1, &out, "verify '%s'", f->root);
    char want[256];
    snprintf(want, sizeof want, "rank 0: obj: id %llu: its obj_keys entry says name \"bad\" ts 0 "
             "cont_id 999, the record name \"bad\" ts 0 cont_id %llu\n", (unsigned long long)id,
             (unsigned long long)cont);
    assert_non_null(strstr(out, want));
    free(out);
    ckpt_store_close(st);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_inspect_live CKPT-INSPECT\n");
        return 2;
    }
    g_inspect = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(live_stat_dump_verify, setup, teardown),
        cmocka_unit_test_setup_teardown(live_copy, setup, teardown),
        cmocka_unit_test_setup_teardown(live_long_names, setup, teardown),
        cmocka_unit_test_setup_teardown(live_concurrent, setup, teardown),
        cmocka_unit_test_setup_teardown(live_record_keys, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
