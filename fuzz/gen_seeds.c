/*
 * gen_seeds.c - writes the generated part of the fuzz seed corpora:
 *
 *   OUTDIR/records/  records made with the ckpt_rec_*_encode encoders:
 *                    objects, kvtags of every value shape, containers,
 *                    regions with and without a histogram
 *   OUTDIR/bulki/    BULKI shapes the PDC test vectors do not have:
 *                    every base type as an array, PDC_BULKI arrays, nested
 *                    PDC_BULKI_ENT, NaNs and infinities, deep nesting, and
 *                    overlong (non-minimal) varints
 *
 * fuzz/corpus/ holds the output of one run (plus the PDC test vectors);
 * ctest also runs it into the build directory, so the replay tests cover
 * what the current encoders write.
 *
 *   fuzz-gen-seeds OUTDIR
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bulki.h"
#include "ckpt_hooks.h"

static const char *g_out;
static int g_failed;

static void write_file(const char *sub, const char *name, const void *buf, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", g_out, sub, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        g_failed = 1;
    }
}

static void mkdir_p(const char *sub)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s%s", g_out, sub[0] ? "/" : "", sub);
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        exit(1);
    }
}

/* ---- records ---- */

static uint8_t g_buf[1 << 16];

#define EMIT_REC(fn, name, rec)                                                \
    do {                                                                       \
        size_t len_ = 0;                                                       \
        if (fn(&len_, g_buf, sizeof g_buf, (rec)) != 0) {                      \
            fprintf(stderr, "%s: encode failed\n", (name));                    \
            g_failed = 1;                                                      \
        } else {                                                               \
            write_file("records", (name), g_buf, len_);                        \
        }                                                                      \
    } while (0)

static void gen_records(void)
{
    /* objects */
    struct ckpt_obj o = {0};
    o.obj_name = "o";
    EMIT_REC(ckpt_rec_obj_encode, "obj_minimal.bin", &o);

    o = (struct ckpt_obj){.obj_id = 0x100000002ull, .cont_id = 7, .obj_name = "field/temperature",
                          .app_name = "vpic", .data_location = "/lustre/run1/t.h5",
                          .tags = "step=3,kind=float", .time_step = 42, .user_id = 1000,
                          .data_type = 3, .transform_state = 1, .create_time = 1700000000,
                          .last_modified_time = 1700000123, .data_server_id = 5,
                          .region_partition = 2, .consistency = 1, .ndim = 3,
                          .dims = {1024, 512, 8}};
    EMIT_REC(ckpt_rec_obj_encode, "obj_full.bin", &o);
    o.ndim = CKPT_MAX_DIM;
    o.dims[3] = UINT64_MAX;
    o.time_step = INT32_MIN;
    o.user_id = -1;
    o.create_time = INT64_MIN;
    o.last_modified_time = INT64_MAX;
    o.data_server_id = UINT32_MAX;
    o.region_partition = 255;
    o.obj_name = "\xc3\xa9t\xc3\xa9 \x01\x7f";
    EMIT_REC(ckpt_rec_obj_encode, "obj_limits.bin", &o);

    /* kvtags: string, scalar, array, bool, odd-sized bytes, empty, bad type */
    static const char str[] = "hello";
    static const int32_t i32 = -7;
    static const double dbl[3] = {1.5, -0.0, 1e300};
    static const uint8_t bools[3] = {1, 0, 1};
    static const uint8_t bytes[5] = {1, 2, 3, 4, 5};
    static const uint8_t notbool[2] = {0, 2};
    struct ckpt_kvtag t = {"units", BULKI_T_STRING, sizeof str, str};
    EMIT_REC(ckpt_rec_kvtag_encode, "kvtag_string.bin", &t);
    t = (struct ckpt_kvtag){"offset", BULKI_T_INT32, sizeof i32, &i32};
    EMIT_REC(ckpt_rec_kvtag_encode, "kvtag_int32.bin", &t);
    t = (struct ckpt_kvtag){"range", BULKI_T_DOUBLE, sizeof dbl, dbl};
    EMIT_REC(ckpt_rec_kvtag_encode, "kvtag_double_array.bin", &t);
    t = (struct ckpt_kvtag){"flags", BULKI_T_BOOLEAN, sizeof bools, bools};
    EMIT_REC(ckpt_rec_kvtag_encode, "kvtag_bool_array.bin", &t);
    t = (struct ckpt_kvtag){"notbool", BULKI_T_BOOLEAN, sizeof notbool, notbool};
    EMIT_REC(ckpt_rec_kvtag_encode, "kvtag_bool_raw.bin", &t);
    t = (struct ckpt_kvtag){"raw", BULKI_T_INT64, sizeof bytes, bytes};
    EMIT_REC(ckpt_rec_kvtag_encode, "kvtag_odd_bytes.bin", &t);
    t = (struct ckpt_kvtag){"empty", BULKI_T_INT32, 0, bytes};
    EMIT_REC(ckpt_rec_kvtag_encode, "kvtag_empty.bin", &t);
    t = (struct ckpt_kvtag){"custom", -3, 2, bytes};
    EMIT_REC(ckpt_rec_kvtag_encode, "kvtag_bad_type.bin", &t);
    t = (struct ckpt_kvtag){"nonul", BULKI_T_STRING, 3, "abc"};
    EMIT_REC(ckpt_rec_kvtag_encode, "kvtag_string_nonul.bin", &t);

    /* containers */
    struct ckpt_cont c = {9, "c", NULL};
    EMIT_REC(ckpt_rec_cont_encode, "cont_minimal.bin", &c);
    c = (struct ckpt_cont){UINT64_MAX, "experiment-2024/run_17", "owner=alice"};
    EMIT_REC(ckpt_rec_cont_encode, "cont_full.bin", &c);

    /* regions */
    struct ckpt_region g = {.obj_id = 3, .ndim = 1, .start = {0}, .count = {100},
                            .data_size = 800, .unit_size = 8};
    EMIT_REC(ckpt_rec_region_encode, "region_minimal.bin", &g);
    static const double range[6] = {0.0, 1.0, 1.0, 2.5, -INFINITY, NAN};
    static const uint64_t bins[3] = {10, 0, UINT64_MAX};
    g = (struct ckpt_region){.obj_id = 0x200000001ull, .ndim = 3, .start = {0, 16, 32},
                             .count = {8, 8, 8}, .data_size = 4096, .unit_size = 8,
                             .data_loc_type = 2, .storage_location = "/data/r.bin",
                             .offset = 65536, .cache_location = "/tmp/cache",
                             .cache_offset = 12, .has_hist = 1,
                             .hist = {.dtype = 2, .nbin = 3, .range = range, .bin = bins,
                                      .incr = 0.5}};
    EMIT_REC(ckpt_rec_region_encode, "region_hist.bin", &g);
    g.hist.nbin = 0;
    g.ndim = CKPT_MAX_DIM;
    g.start[3] = UINT64_MAX;
    g.count[3] = 1;
    EMIT_REC(ckpt_rec_region_encode, "region_hist_empty.bin", &g);
}

/* ---- extra BULKI shapes ---- */

#define KEY(s) BULKI_V_STRN(s, sizeof(s) - 1)

static size_t emit_doc(const char *name, const bulki_doc *d)
{
    size_t len = 0;
    if (bulki_encode_doc(&len, g_buf, sizeof g_buf, d) != 0) {
        fprintf(stderr, "%s: encode failed\n", name);
        g_failed = 1;
        return 0;
    }
    write_file("bulki", name, g_buf, len);
    return len;
}

static void emit_value(const char *name, const bulki_value *v)
{
    size_t len = 0;
    if (bulki_encode_value(&len, g_buf, sizeof g_buf, v) != 0) {
        fprintf(stderr, "%s: encode failed\n", name);
        g_failed = 1;
        return;
    }
    write_file("bulki", name, g_buf, len);
}

/* A copy of g_buf[0..len) with the varint at `at` (one byte) rewritten in
 * `extra` more bytes than needed. */
static void emit_overlong(const char *name, size_t len, size_t at, unsigned extra)
{
    uint8_t out[4096];
    if (len + extra > sizeof out || at >= len || (g_buf[at] & 0x80)) {
        fprintf(stderr, "%s: bad overlong splice\n", name);
        g_failed = 1;
        return;
    }
    memcpy(out, g_buf, at);
    out[at] = (uint8_t)(g_buf[at] | 0x80);
    for (unsigned i = 1; i < extra; i++)
        out[at + i] = 0x80;
    out[at + extra] = 0x00;
    memcpy(out + at + extra + 1, g_buf + at + 1, len - at - 1);
    write_file("bulki", name, out, len + extra);
}

static void gen_bulki(void)
{
    /* every base type as an array */
    static const int16_t s16[3] = {-1, 0, 32767};
    static const int32_t s32[2] = {INT32_MIN, 1};
    static const uint32_t u32[2] = {0, UINT32_MAX};
    static const int64_t s64[2] = {INT64_MIN, -2};
    static const uint64_t u64[2] = {UINT64_MAX, 1ull << 63};
    static const int8_t s8[4] = {-128, -1, 0, 127};
    static const uint8_t u8[3] = {0, 128, 255};
    static const uint16_t u16[2] = {0, 65535};
    static const float f32[4] = {1.5f, -0.0f, 3.4e38f, 1e-45f};
    static const double f64[4] = {-2.25, 5e-324, 1.7976931348623157e308, 0.1};
    static const uint8_t bl[3] = {0, 1, 1};
    static const char ch[3] = {'a', 0, 'z'};
    static const uint64_t ptrs[1] = {0xdeadbeefull};
    const bulki_pair arrays[] = {
        {KEY("short"), BULKI_V_ARRAY(BULKI_T_SHORT, s16, 3)},
        {KEY("int"), BULKI_V_ARRAY(BULKI_T_INT, s32, 2)},
        {KEY("uint"), BULKI_V_ARRAY(BULKI_T_UINT, u32, 2)},
        {KEY("long"), BULKI_V_ARRAY(BULKI_T_LONG, s64, 2)},
        {KEY("int8"), BULKI_V_ARRAY(BULKI_T_INT8, s8, 4)},
        {KEY("uint8"), BULKI_V_ARRAY(BULKI_T_UINT8, u8, 3)},
        {KEY("int16"), BULKI_V_ARRAY(BULKI_T_INT16, s16, 3)},
        {KEY("uint16"), BULKI_V_ARRAY(BULKI_T_UINT16, u16, 2)},
        {KEY("int32"), BULKI_V_ARRAY(BULKI_T_INT32, s32, 2)},
        {KEY("uint32"), BULKI_V_ARRAY(BULKI_T_UINT32, u32, 2)},
        {KEY("int64"), BULKI_V_ARRAY(BULKI_T_INT64, s64, 2)},
        {KEY("uint64"), BULKI_V_ARRAY(BULKI_T_UINT64, u64, 2)},
        {KEY("float"), BULKI_V_ARRAY(BULKI_T_FLOAT, f32, 4)},
        {KEY("double"), BULKI_V_ARRAY(BULKI_T_DOUBLE, f64, 4)},
        {KEY("char"), BULKI_V_ARRAY(BULKI_T_CHAR, ch, 3)},
        {KEY("bool"), BULKI_V_ARRAY(BULKI_T_BOOLEAN, bl, 3)},
        {KEY("void_ptr"), BULKI_V_ARRAY(BULKI_T_VOID_PTR, ptrs, 1)},
        {KEY("size_t"), BULKI_V_ARRAY(BULKI_T_SIZE_T, u64, 2)},
        {KEY("empty"), BULKI_V_ARRAY(BULKI_T_UINT64, u64, 0)},
    };
    const bulki_doc da = {sizeof arrays / sizeof arrays[0], arrays};
    emit_doc("gen_all_arrays.bin", &da);

    /* non-finite floats: infinities, the default NaN, NaNs with payloads */
    uint32_t fb[5] = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u};
    uint64_t db[4] = {0x7ff0000000000000ull, 0x7ff8000000000000ull, 0xfff8000000000abcull,
                      0x7ff0000000000001ull};
    float ff[5];
    double dd[4];
    memcpy(ff, fb, sizeof ff);
    memcpy(dd, db, sizeof dd);
    const bulki_pair nans[] = {
        {KEY("f"), BULKI_V_ARRAY(BULKI_T_FLOAT, ff, 5)},
        {KEY("d"), BULKI_V_ARRAY(BULKI_T_DOUBLE, dd, 4)},
        {KEY("snan"), BULKI_V_ITEM(BULKI_T_DOUBLE, &dd[3])},
    };
    const bulki_doc dn = {3, nans};
    emit_doc("gen_nonfinite.bin", &dn);

    /* PDC_BULKI arrays (with an empty BULKI) and nested PDC_BULKI_ENT */
    static const int32_t one = 1;
    const bulki_pair inner[] = {{KEY("x"), BULKI_V_ITEM(BULKI_T_INT32, &one)}};
    const bulki_doc docs[3] = {{1, inner}, {0, NULL}, {1, inner}};
    const bulki_value leaf[2] = {BULKI_V_STRN("leaf", 4), BULKI_V_ITEM(BULKI_T_INT32, &one)};
    const bulki_value mid[3] = {BULKI_V_ENTS(leaf, 2), BULKI_V_DOC(&docs[0]),
                                BULKI_V_ENTS(leaf, 0)};
    const bulki_pair nest[] = {
        {KEY("docs"), {.type = BULKI_T_BULKI, .cls = BULKI_ARRAY, .count = 3, .u.doc = docs}},
        {KEY("nodocs"), {.type = BULKI_T_BULKI, .cls = BULKI_ARRAY, .count = 0, .u.doc = docs}},
        {KEY("ents"), BULKI_V_ENTS(mid, 3)},
        {BULKI_V_ITEM(BULKI_T_INT32, &one), KEY("non-string key")},
        {KEY("x"), KEY("duplicate key")},
        {KEY(""), KEY("")},
    };
    const bulki_doc dnest = {sizeof nest / sizeof nest[0], nest};
    emit_doc("gen_nested_arrays.bin", &dnest);
    emit_value("gen_value_ents.bin", &BULKI_V_ENTS(mid, 3));
    emit_value("gen_value_bool.bin", &BULKI_V_ITEM(BULKI_T_BOOLEAN, &bl[1]));

    /* nesting at the depth limit: BULKI items inside BULKI items */
    enum { DEEP = BULKI_MAX_DEPTH };
    static bulki_doc chain[DEEP];
    static bulki_pair links[DEEP];
    for (int i = DEEP - 1; i >= 0; i--) {
        links[i].key = KEY("d");
        links[i].value = i == DEEP - 1 ? BULKI_V_ITEM(BULKI_T_INT32, &one)
                                       : BULKI_V_DOC(&chain[i + 1]);
        chain[i] = (bulki_doc){1, &links[i]};
    }
    emit_doc("gen_deep.bin", &chain[0]);
    /* the same with one-element PDC_BULKI arrays (5 JSON levels per BULKI
     * level, the deepest JSON form) */
    for (int i = 0; i < DEEP - 1; i++)
        links[i].value = (bulki_value){.type = BULKI_T_BULKI, .cls = BULKI_ARRAY, .count = 1,
                                       .u.doc = &chain[i + 1]};
    emit_doc("gen_deep_arrays.bin", &chain[0]);

    /* overlong varints (the reader accepts them, the writer never emits
     * them): the size and the count of an entity, and the last offset of a
     * BULKI (the only BULKI varint whose stretching moves no later offset) */
    emit_value("gen_overlong_src.bin", &BULKI_V_ITEM(BULKI_T_INT32, &one));
    emit_overlong("gen_overlong_entity_size.bin", 7, 0, 1);
    emit_overlong("gen_overlong_entity_count.bin", 7, 2, 9);
    const bulki_pair small[] = {{KEY("k"), BULKI_V_ITEM(BULKI_T_UINT8, &u8[1])}};
    const bulki_doc ds = {1, small};
    size_t len = emit_doc("gen_overlong_src_doc.bin", &ds);
    if (len > 0)
        emit_overlong("gen_overlong_doc_offset.bin", len, len - 1, 2);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 1;
    }
    g_out = argv[1];
    mkdir_p("");
    mkdir_p("records");
    mkdir_p("bulki");
    gen_records();
    gen_bulki();
    return g_failed;
}
