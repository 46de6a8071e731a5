/*
 * fuzz_records.c - libFuzzer target for the record decoders of
 * server_hooks/records.c (ckpt_rec_{obj,kvtag,cont,region}_decode), the
 * code that reads every record of a store at restart.
 *
 * The same bytes go to all four decoders. A failure must be CKPT_E_RECORD
 * with an offset (when one is reported) inside the record. A success must
 * hand out sane views (strings NUL-terminated inside the record or the
 * empty literal, ndim in range, arrays inside the record), re-encode with
 * the matching encoder (the length query and the encode agree), and decode
 * again to the same fields (for a kvtag: the same type, size and value
 * bytes); encoding that second decode gives the same bytes again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_hooks.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *g_rec;
static size_t g_len;

/* A decoded string: the empty string, or NUL-terminated inside the record. */
static void check_str(const char *s)
{
    FZ_CHECK(s != NULL);
    if (*s == 0)
        return;
    const uint8_t *p = (const uint8_t *)s;
    FZ_CHECK(g_rec != NULL && p >= g_rec && p < g_rec + g_len);
    FZ_CHECK(memchr(p, 0, (size_t)(g_rec + g_len - p)) != NULL);
}

/* n bytes at p lie inside the record (n = 0: anything goes). */
static void check_span(const void *p, size_t n)
{
    if (n == 0)
        return;
    const uint8_t *b = p;
    FZ_CHECK(b != NULL && g_rec != NULL && b >= g_rec && n <= (size_t)(g_rec + g_len - b));
}

static void check_fail(int rc, size_t off, size_t size)
{
    FZ_CHECK(rc == CKPT_E_RECORD);
    FZ_CHECK(off == SIZE_MAX || off <= size); /* SIZE_MAX: not reported */
}

static int str_eq(const char *a, const char *b)
{
    return strcmp(a, b) == 0;
}

/* Encode with an exact-size buffer from the length query. */
#define ENCODE(fn, rec, out, outlen)                                           \
    do {                                                                       \
        size_t need_ = 0, got_ = 0;                                            \
        FZ_CHECK(fn(&need_, NULL, 0, (rec)) == 0);                             \
        (out) = malloc(need_ ? need_ : 1);                                     \
        FZ_CHECK((out) != NULL);                                               \
        if (need_ > 0)                                                         \
            FZ_CHECK(fn(&got_, (out), need_ - 1, (rec)) == CKPT_E_NOSPACE);    \
        FZ_CHECK(fn(&got_, (out), need_, (rec)) == 0 && got_ == need_);        \
        (outlen) = got_;                                                       \
    } while (0)

/* Decode the input with decoder fn into a (and into c without an offset:
 * the same result); a failure is checked and leaves the fuzz function. On
 * success the input is the record check_str and check_span look in. */
#define DECODE_OR_LEAVE(fn, a, c, data, size)                                  \
    do {                                                                       \
        size_t off_ = SIZE_MAX;                                                \
        int rc_ = fn(&(a), (data), (size), &off_);                             \
        FZ_CHECK(fn(&(c), (data), (size), NULL) == rc_);                       \
        if (rc_ != 0) {                                                        \
            check_fail(rc_, off_, (size));                                     \
            return;                                                            \
        }                                                                      \
        g_rec = (data);                                                        \
        g_len = (size);                                                        \
    } while (0)

/* a encodes (encoder enc) and decodes again (decoder dec) into b, for
 * which `same` must hold; b encodes to the same bytes again. */
#define ROUND_TRIP(enc, dec, a, b, same)                                       \
    do {                                                                       \
        uint8_t *e1_, *e2_;                                                    \
        size_t l1_, l2_;                                                       \
        ENCODE(enc, &(a), e1_, l1_);                                           \
        FZ_CHECK(dec(&(b), e1_, l1_, NULL) == 0);                              \
        FZ_CHECK(same);                                                        \
        ENCODE(enc, &(b), e2_, l2_);                                           \
        FZ_CHECK(l2_ == l1_ && memcmp(e2_, e1_, l1_) == 0);                    \
        free(e2_);                                                             \
        free(e1_);                                                             \
    } while (0)

/* ---- objects ---- */

static int obj_eq(const struct ckpt_obj *a, const struct ckpt_obj *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (uint32_t i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return 0;
    return a->obj_id == b->obj_id && a->cont_id == b->cont_id &&
           str_eq(a->obj_name, b->obj_name) && str_eq(a->app_name, b->app_name) &&
           str_eq(a->data_location, b->data_location) && str_eq(a->tags, b->tags) &&
           a->time_step == b->time_step && a->user_id == b->user_id &&
           a->data_type == b->data_type && a->transform_state == b->transform_state &&
           a->create_time == b->create_time && a->last_modified_time == b->last_modified_time &&
           a->data_server_id == b->data_server_id && a->region_partition == b->region_partition &&
           a->consistency == b->consistency;
}

static void fuzz_obj(const uint8_t *data, size_t size)
{
    struct ckpt_obj a, b, c;
    DECODE_OR_LEAVE(ckpt_rec_obj_decode, a, c, data, size);
    check_str(a.obj_name);
    check_str(a.app_name);
    check_str(a.data_location);
    check_str(a.tags);
    FZ_CHECK(a.ndim <= CKPT_MAX_DIM);
    for (uint32_t i = a.ndim; i < CKPT_MAX_DIM; i++)
        FZ_CHECK(a.dims[i] == 0);

    ROUND_TRIP(ckpt_rec_obj_encode, ckpt_rec_obj_decode, a, b, obj_eq(&a, &b));
}

/* ---- kvtags ---- */

/* b, decoded from the encoding of a, is a (a's name: `given` when the
 * record held it, else b has none); b then takes a's name, to encode */
static int kvtag_same(const struct ckpt_kvtag *a, struct ckpt_kvtag *b, const char *given)
{
    int name_ok = a->name == given ? str_eq(a->name, b->name) : b->name == NULL;
    b->name = a->name;
    return name_ok && a->type == b->type && a->size == b->size &&
           (a->size == 0 || memcmp(a->value, b->value, a->size) == 0);
}

static void fuzz_kvtag(const uint8_t *data, size_t size)
{
    struct ckpt_kvtag a, b, c;
    DECODE_OR_LEAVE(ckpt_rec_kvtag_decode, a, c, data, size);
    if (a.name != NULL)
        check_str(a.name);
    check_span(a.value, a.size);
    FZ_CHECK(a.value != NULL);

    /* a record without "name" is a short-named tag's: name it so it
     * encodes; a short name stays out of the record again */
    const char *given = a.name;
    if (a.name == NULL || strlen(a.name) <= CKPT_NAME_INLINE_MAX)
        a.name = "fz";
    ROUND_TRIP(ckpt_rec_kvtag_encode, ckpt_rec_kvtag_decode, a, b, kvtag_same(&a, &b, given));
}

/* ---- containers ---- */

static void fuzz_cont(const uint8_t *data, size_t size)
{
    struct ckpt_cont a, b, c;
    DECODE_OR_LEAVE(ckpt_rec_cont_decode, a, c, data, size);
    check_str(a.cont_name);
    check_str(a.tags);

    ROUND_TRIP(ckpt_rec_cont_encode, ckpt_rec_cont_decode, a, b,
               a.cont_id == b.cont_id && str_eq(a.cont_name, b.cont_name) &&
                   str_eq(a.tags, b.tags));
}

/* ---- regions ---- */

static int region_eq(const struct ckpt_region *a, const struct ckpt_region *b)
{
    if (a->ndim != b->ndim || a->has_hist != b->has_hist)
        return 0;
    for (uint32_t i = 0; i < a->ndim; i++)
        if (a->start[i] != b->start[i] || a->count[i] != b->count[i])
            return 0;
    if (a->has_hist) {
        const struct ckpt_hist *x = &a->hist, *y = &b->hist;
        size_t nb = (size_t)x->nbin;
        if (x->dtype != y->dtype || x->nbin != y->nbin ||
            memcmp(&x->incr, &y->incr, sizeof x->incr) != 0)
            return 0;
        /* bit patterns, so that NaNs compare equal to themselves */
        if (nb > 0 && (memcmp(x->range, y->range, 2 * nb * sizeof(double)) != 0 ||
                       memcmp(x->bin, y->bin, nb * sizeof(uint64_t)) != 0))
            return 0;
    }
    return a->obj_id == b->obj_id && a->data_size == b->data_size &&
           a->unit_size == b->unit_size && a->data_loc_type == b->data_loc_type &&
           str_eq(a->storage_location, b->storage_location) && a->offset == b->offset &&
           str_eq(a->cache_location, b->cache_location) && a->cache_offset == b->cache_offset;
}

static void fuzz_region(const uint8_t *data, size_t size)
{
    struct ckpt_region a, b, c;
    DECODE_OR_LEAVE(ckpt_rec_region_decode, a, c, data, size);
    check_str(a.storage_location);
    check_str(a.cache_location);
    FZ_CHECK(a.ndim >= 1 && a.ndim <= CKPT_MAX_DIM);
    FZ_CHECK(a.has_hist == 0 || a.has_hist == 1);
    if (a.has_hist) {
        FZ_CHECK(a.hist.nbin >= 0);
        size_t nb = (size_t)a.hist.nbin;
        FZ_CHECK(nb <= size);
        check_span(a.hist.range, 2 * nb * sizeof(double));
        check_span(a.hist.bin, nb * sizeof(uint64_t));
        for (size_t i = 0; i < nb; i++) {
            /* the unaligned-safe accessors read inside the record */
            volatile double r0 = ckpt_hist_range(&a.hist, 2 * i);
            volatile double r1 = ckpt_hist_range(&a.hist, 2 * i + 1);
            volatile uint64_t b0 = ckpt_hist_bin(&a.hist, i);
            (void)r0;
            (void)r1;
            (void)b0;
        }
    }

    ROUND_TRIP(ckpt_rec_region_encode, ckpt_rec_region_decode, a, b, region_eq(&a, &b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_obj(data, size);
    fuzz_kvtag(data, size);
    fuzz_cont(data, size);
    fuzz_region(data, size);
    return 0;
}
