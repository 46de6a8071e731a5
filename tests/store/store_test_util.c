/*
 * store_test_util.c - see store_test_util.h.
 */
#include "store_test_util.h"

#include "ckpt_hooks.h" /* ckpt_rec_keys */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int stu_setup(void **state)
{
    return tu_case_new(state, "store-test");
}

int stu_teardown(void **state)
{
    return tu_case_free(state);
}

const char *stu_dir(void **state)
{
    return ((struct tu_case *)*state)->dir;
}

void stu_path(char *out, size_t cap, const char *dir, const char *sub)
{
    int n = snprintf(out, cap, "%s/%s", dir, sub);
    assert_true(n > 0 && (size_t)n < cap);
}

struct ckpt_store_opts stu_opts(const char *root)
{
    struct ckpt_store_opts o = CKPT_STORE_OPTS_INIT;
    o.root = root;
    o.rec_keys = ckpt_rec_keys; /* the records the tests write are the hooks' */
    return o;
}

ckpt_store *stu_open(const struct ckpt_store_opts *o)
{
    ckpt_store *st = NULL;
    int rc = ckpt_store_open(&st, o);
    if (rc != 0)
        print_error("ckpt_store_open(%s, rank %d of %d, ro %d): %s: %s\n", o->root, o->rank,
                    o->nranks, o->readonly, ckpt_errname(rc), ckpt_errmsg());
    assert_int_equal(rc, 0);
    assert_non_null(st);
    return st;
}

void stu_close(ckpt_store *st)
{
    int rc = ckpt_store_close(st);
    stu_assert_rc(rc, 0, st);
}

struct ckpt_store_info stu_info(ckpt_store *st)
{
    struct ckpt_store_info info;
    memset(&info, 0, sizeof info);
    stu_assert_rc(ckpt_store_info(&info, st), 0, st);
    return info;
}

void stu_assert_rc_impl(int rc, int want, const ckpt_store *st, const char *expr,
                        const char *file, int line)
{
    if (rc == want)
        return;
    print_error("%s:%d: %s returned %d (%s), expected %d (%s); message: %s\n", file, line, expr, rc,
                ckpt_errname(rc), want, ckpt_errname(want), ckpt_errmsg());
    fail_msg("unexpected return code");
}

/* ---- records ---- */

static const char *pad_bytes(size_t n)
{
    static char pad[8192];
    assert_true(n <= sizeof pad);
    if (pad[0] == 0)
        memset(pad, 'p', sizeof pad);
    return pad;
}

size_t stu_obj_rec(void *buf, size_t cap, const char *name, size_t nlen, int32_t ts,
                   uint64_t cont_id, uint64_t seq, size_t pad)
{
    bulki_pair pairs[5];
    size_t np = 0, len = 0;
    pairs[np++] = (bulki_pair){BULKI_V_STRN("obj_name", 8), BULKI_V_STRN(name, nlen)};
    pairs[np++] = (bulki_pair){BULKI_V_STRN("time_step", 9), BULKI_V_ITEM(BULKI_T_INT32, &ts)};
    if (cont_id != 0)
        pairs[np++] = (bulki_pair){BULKI_V_STRN("cont_id", 7), BULKI_V_ITEM(BULKI_T_UINT64, &cont_id)};
    pairs[np++] = (bulki_pair){BULKI_V_STRN("seq", 3), BULKI_V_ITEM(BULKI_T_UINT64, &seq)};
    if (pad > 0)
        pairs[np++] = (bulki_pair){BULKI_V_STRN("pad", 3), BULKI_V_STRN(pad_bytes(pad), pad)};
    const bulki_doc doc = {np, pairs};
    int rc = bulki_encode_doc(&len, buf, cap, &doc);
    assert_int_equal(rc, 0);
    return len;
}

size_t stu_cont_rec(void *buf, size_t cap, const char *name, size_t nlen, uint64_t seq)
{
    const bulki_pair pairs[] = {
        {BULKI_V_STRN("cont_name", 9), BULKI_V_STRN(name, nlen)},
        {BULKI_V_STRN("seq", 3), BULKI_V_ITEM(BULKI_T_UINT64, &seq)},
    };
    const bulki_doc doc = {2, pairs};
    size_t len = 0;
    int rc = bulki_encode_doc(&len, buf, cap, &doc);
    assert_int_equal(rc, 0);
    return len;
}

size_t stu_kvtag_rec(void *buf, size_t cap, const char *name, size_t nlen, const char *value)
{
    const bulki_pair pairs[] = {
        {BULKI_V_STRN("name", 4), BULKI_V_STRN(name, nlen)},
        {BULKI_V_STRN("value", 5), BULKI_V_STRN(value, strlen(value))},
    };
    const bulki_doc doc = {2, pairs};
    size_t len = 0;
    int rc = bulki_encode_doc(&len, buf, cap, &doc);
    assert_int_equal(rc, 0);
    return len;
}

static int rec_field(bulki_ent *e, const ckpt_val *rec, const char *field)
{
    bulki_map m;
    int rc = bulki_decode_doc(&m, rec->data, rec->len, NULL);
    return rc ? rc : bulki_map_get(e, &m, field);
}

int stu_rec_str(const ckpt_val *rec, const char *field, const char **s, size_t *len)
{
    bulki_ent e;
    int rc = rec_field(&e, rec, field);
    return rc ? rc : bulki_ent_str(s, len, &e);
}

int stu_rec_u64(const ckpt_val *rec, const char *field, uint64_t *v)
{
    bulki_ent e;
    int rc = rec_field(&e, rec, field);
    return rc ? rc : bulki_ent_u64(v, &e);
}

int stu_rec_i64(const ckpt_val *rec, const char *field, int64_t *v)
{
    bulki_ent e;
    int rc = rec_field(&e, rec, field);
    return rc ? rc : bulki_ent_i64(v, &e);
}

/* ---- iteration ---- */

static uint8_t *dup_bytes(const void *p, size_t n)
{
    uint8_t *d = tu_dup(p, n);
    assert_non_null(d);
    return d;
}

int stu_collect(const ckpt_val *key, const ckpt_val *val, void *payload)
{
    struct stu_list *l = payload;
    if (l->n == l->cap) {
        size_t ncap = l->cap ? l->cap * 2 : 64;
        struct stu_ent *ne = realloc(l->e, ncap * sizeof *ne);
        assert_non_null(ne);
        l->e = ne;
        l->cap = ncap;
    }
    l->e[l->n].key = dup_bytes(key->data, key->len);
    l->e[l->n].klen = key->len;
    l->e[l->n].val = dup_bytes(val->data, val->len);
    l->e[l->n].vlen = val->len;
    l->n++;
    return 0;
}

void stu_list_free(struct stu_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->e[i].key);
        free(l->e[i].val);
    }
    free(l->e);
    memset(l, 0, sizeof *l);
}

void stu_assert_ascending(const struct stu_list *l)
{
    for (size_t i = 1; i < l->n; i++) {
        const struct stu_ent *a = &l->e[i - 1], *b = &l->e[i];
        size_t m = a->klen < b->klen ? a->klen : b->klen;
        int c = memcmp(a->key, b->key, m);
        if (c > 0 || (c == 0 && a->klen >= b->klen))
            fail_msg("keys %zu and %zu are not in ascending order", i - 1, i);
    }
}

void stu_collect_db(struct stu_list *out, ckpt_store *st, int db, const void *prefix, size_t plen)
{
    ckpt_rtxn *tx;
    memset(out, 0, sizeof *out);
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_iter(tx, db, prefix, plen, stu_collect, out), 0, st);
    ckpt_rtxn_end(tx);
}

uint64_t stu_count(ckpt_store *st, int db)
{
    ckpt_rtxn *tx;
    uint64_t n = 0;
    stu_assert_rc(ckpt_rtxn_begin(&tx, st), 0, st);
    stu_assert_rc(ckpt_db_stat(&n, NULL, tx, db), 0, st);
    ckpt_rtxn_end(tx);
    return n;
}

/* ---- misc ---- */

char *stu_name(size_t len, unsigned seed)
{
    char *s = malloc(len + 1);
    uint64_t r = seed;
    assert_non_null(s);
    for (size_t i = 0; i < len; i++)
        s[i] = (char)('a' + tu_rand(&r) % 26);
    s[len] = 0;
    return s;
}

void stu_sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

uint64_t stu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
