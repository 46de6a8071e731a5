/*
 * bulki_json.c - conversion between BULKI bytes and the JSON form of
 * docs/BULKI.md, on top of the codec's views (decode) and description structs
 * (encode). Used by tools/bulki and by the codec tests.
 */
#include "bulki_json.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bulki_host_is_little(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* ------------------------------------------------------------------ */
/* Number formatting                                                   */
/* ------------------------------------------------------------------ */

static void ensure_point(char *buf, size_t n)
{
    if (strpbrk(buf, ".eEn") == NULL && strlen(buf) + 2 < n)
        strcat(buf, ".0");
}

void bulki_json_fmt_double(char *buf, size_t n, double v)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    ensure_point(buf, n);
}

void bulki_json_fmt_float(char *buf, size_t n, float v)
{
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, n, "%.*g", prec, (double)v);
        if (strtof(buf, NULL) == v)
            break;
    }
    ensure_point(buf, n);
}

/* A float element as JSON. Non-finite values have no JSON literal: they
 * become "Infinity", "-Infinity", "NaN" (the default quiet NaN), or
 * "NaN:0x<bits>" for any other NaN, so every bit pattern reads back. */
static json_object *json_float(const bulki_ent *e, uint64_t i, int *rc)
{
    char buf[40];
    double v = 0;
    uint64_t bits = 0;
    int is_float = e->type == BULKI_T_FLOAT;
    *rc = bulki_ent_elem_f64(&v, e, i);
    if (*rc)
        return NULL;
    memcpy(&bits, e->payload + i * (is_float ? 4 : 8), is_float ? 4 : 8);
    if (!bulki_host_is_little())
        bits = is_float ? __builtin_bswap32((uint32_t)bits) : __builtin_bswap64(bits);
    if (isnan(v) && bits != (is_float ? 0x7fc00000ull : 0x7ff8000000000000ull)) {
        snprintf(buf, sizeof buf, is_float ? "NaN:0x%08llx" : "NaN:0x%016llx",
                 (unsigned long long)bits);
        return json_object_new_string(buf);
    }
    return bulki_json_f64(v, is_float);
}

json_object *bulki_json_f64(double v, int is_float)
{
    char buf[40];
    if (isnan(v))
        return json_object_new_string("NaN");
    if (isinf(v))
        return json_object_new_string(v > 0 ? "Infinity" : "-Infinity");
    if (is_float)
        bulki_json_fmt_float(buf, sizeof buf, (float)v);
    else
        bulki_json_fmt_double(buf, sizeof buf, v);
    return json_object_new_double_s(v, buf);
}

/* ------------------------------------------------------------------ */
/* Decode: views -> JSON                                               */
/* ------------------------------------------------------------------ */

static json_object *elem_json(const bulki_ent *e, uint64_t i, int *rc)
{
    const struct bulki_type_info *ti = bulki_type_info(e->type);
    int64_t s;
    uint64_t u;
    switch (ti->kind) {
    case BULKI_KIND_SIGNED:
        *rc = bulki_ent_elem_i64(&s, e, i);
        return *rc ? NULL : json_object_new_int64(s);
    case BULKI_KIND_UNSIGNED:
        *rc = bulki_ent_elem_u64(&u, e, i);
        return *rc ? NULL : json_object_new_uint64(u);
    case BULKI_KIND_BOOL:
        *rc = bulki_ent_elem_u64(&u, e, i);
        return *rc ? NULL : json_object_new_boolean(u != 0);
    case BULKI_KIND_FLOAT:
        return json_float(e, i, rc);
    default:
        *rc = BULKI_E_TYPE;
        return NULL;
    }
}

static json_object *value_json(const bulki_ent *e, int *rc);

/* ------------------------------------------------------------------ */
/* Strings that are not UTF-8, and integers json-c would clamp          */
/* ------------------------------------------------------------------ */

int bulki_json_utf8_valid(const void *s, size_t n)
{
    const uint8_t *p = s, *end = p + n;
    while (p < end) {
        uint8_t c = *p;
        size_t len;
        uint32_t cp, min;
        if (c < 0x80) {
            p++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
            cp = c & 0x1f;
            min = 0x80;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            cp = c & 0x0f;
            min = 0x800;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            cp = c & 0x07;
            min = 0x10000;
        } else {
            return 0; /* a continuation byte, 0xc0/0xc1 or 0xf5.. */
        }
        if ((size_t)(end - p) < len)
            return 0;
        for (size_t i = 1; i < len; i++) {
            if ((p[i] & 0xc0) != 0x80)
                return 0;
            cp = (cp << 6) | (p[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        p += len;
    }
    return 1;
}

json_object *bulki_json_bytes(const void *s, size_t n)
{
    static const char hx[] = "0123456789abcdef";
    const uint8_t *p = s;
    json_object *o;
    char *b;
    if (n > INT_MAX / 2 - 1)
        return NULL;
    if (bulki_json_utf8_valid(s, n))
        return json_object_new_string_len(n ? (const char *)s : "", (int)n);
    if ((b = malloc(2 * n + 1)) == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        b[2 * i] = hx[p[i] >> 4];
        b[2 * i + 1] = hx[p[i] & 15];
    }
    b[2 * n] = 0;
    o = json_object_new_object();
    if (o != NULL)
        json_object_object_add(o, "hex", json_object_new_string_len(b, (int)(2 * n)));
    free(b);
    return o;
}

json_object *bulki_json_str(const char *s)
{
    return bulki_json_bytes(s ? s : "", s ? strlen(s) : 0);
}

/* A scanner over JSON text that already parsed: tracks the path and
 * compares every integer literal's digits with the 64-bit bounds. */
struct iscan {
    const char *p, *end;
    char path[512];
    char *err;
    size_t errlen;
};

/* Blanks, and the comments json-c accepts (C and C++ style). */
static void is_ws(struct iscan *s)
{
    for (;;) {
        while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
            s->p++;
        if (s->end - s->p < 2 || s->p[0] != '/' || (s->p[1] != '*' && s->p[1] != '/'))
            return;
        if (s->p[1] == '/') {
            while (s->p < s->end && *s->p != '\n')
                s->p++;
        } else {
            s->p += 2;
            while (s->end - s->p >= 2 && !(s->p[0] == '*' && s->p[1] == '/'))
                s->p++;
            s->p = s->end - s->p >= 2 ? s->p + 2 : s->end;
        }
    }
}

/* Skip a string; its raw text (without quotes) in *a, *n. */
static int is_string(struct iscan *s, const char **a, size_t *n)
{
    if (s->p >= s->end || *s->p != '"')
        return -1;
    *a = ++s->p;
    while (s->p < s->end && *s->p != '"')
        s->p += *s->p == '\\' && s->end - s->p >= 2 ? 2 : 1;
    if (s->p >= s->end)
        return -1;
    *n = (size_t)(s->p - *a);
    s->p++;
    return 0;
}

/* digits (no sign, no leading zeros but "0") > bound's digits? */
static int digits_exceed(const char *d, size_t n, const char *bound)
{
    size_t bn = strlen(bound);
    return n != bn ? n > bn : memcmp(d, bound, n) > 0;
}

static int is_value(struct iscan *s, int depth);

/* After a member or an element: past its ',' and the blanks around it. */
static void is_next(struct iscan *s)
{
    is_ws(s);
    if (s->p < s->end && *s->p == ',') {
        s->p++;
        is_ws(s);
    }
}

static int is_number(struct iscan *s)
{
    const char *a = s->p, *d;
    int neg = 0, integer = 1;
    if (s->p < s->end && *s->p == '-') {
        neg = 1;
        s->p++;
    }
    d = s->p;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
        s->p++;
    size_t nd = (size_t)(s->p - d);
    while (s->p < s->end && (*s->p == '.' || *s->p == 'e' || *s->p == 'E' || *s->p == '+' ||
                             *s->p == '-' || (*s->p >= '0' && *s->p <= '9'))) {
        integer = 0;
        s->p++;
    }
    if (integer && digits_exceed(d, nd, neg ? "9223372036854775808" : "18446744073709551615")) {
        int len = (int)(s->p - a);
        snprintf(s->err, s->errlen, "%s: %.*s%s is out of range: no BULKI integer type holds it "
                 "(PDC_UINT64 and PDC_SIZE_T go up to 2^64-1, PDC_INT64 down to -2^63; a float "
                 "type needs a '.' or an exponent)", s->path, len > 40 ? 40 : len, a,
                 len > 40 ? "..." : "");
        return -1;
    }
    return 0;
}

static int is_value(struct iscan *s, int depth)
{
    size_t plen = strlen(s->path);
    int rc = 0;
    is_ws(s);
    if (s->p >= s->end || depth > 4096)
        return 0; /* not our business: the parser accepted it */
    if (*s->p == '{') {
        s->p++;
        is_ws(s);
        while (rc == 0 && s->p < s->end && *s->p != '}') {
            const char *k;
            size_t kn;
            if (is_string(s, &k, &kn) != 0)
                return 0;
            snprintf(s->path + plen, sizeof s->path - plen, ".%.*s", (int)kn, k);
            is_ws(s);
            if (s->p < s->end && *s->p == ':')
                s->p++;
            const char *at = s->p;
            rc = is_value(s, depth + 1);
            if (s->p == at && s->p < s->end)
                s->p++;
            s->path[plen] = 0;
            is_next(s);
        }
        if (s->p < s->end)
            s->p++;
    } else if (*s->p == '[') {
        size_t i = 0;
        s->p++;
        is_ws(s);
        while (rc == 0 && s->p < s->end && *s->p != ']') {
            const char *at = s->p;
            snprintf(s->path + plen, sizeof s->path - plen, "[%zu]", i++);
            rc = is_value(s, depth + 1);
            if (s->p == at)
                s->p++; /* never stall on text this scanner does not know */
            s->path[plen] = 0;
            is_next(s);
        }
        if (s->p < s->end)
            s->p++;
    } else if (*s->p == '"') {
        const char *a;
        size_t n;
        is_string(s, &a, &n);
    } else if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9')) {
        rc = is_number(s);
    } else {
        /* true, false, null, and what json-c accepts beyond JSON (NaN,
         * comments, ...): skipped up to the next separator */
        while (s->p < s->end && *s->p != ',' && *s->p != ']' && *s->p != '}' && *s->p != ' ' &&
               *s->p != '\t' && *s->p != '\n' && *s->p != '\r')
            s->p++;
    }
    return rc;
}

int bulki_json_check_integers(const char *text, size_t len, char *err, size_t errlen)
{
    char dummy[1];
    struct iscan s = {text, text + len, "$", err ? err : dummy, err ? errlen : sizeof dummy};
    return is_value(&s, 0);
}

static json_object *doc_json(const bulki_map *m, int *rc)
{
    json_object *root = json_object_new_object();
    json_object *pairs = json_object_new_array();
    bulki_map_iter it;
    bulki_ent k, v;
    int r;

    json_object_object_add(root, "bulki", pairs);
    bulki_map_iter_init(&it, m);
    while ((r = bulki_map_next(&k, &v, &it)) == 1) {
        json_object *pair = json_object_new_object();
        json_object_array_add(pairs, pair);
        json_object *jk = value_json(&k, rc);
        if (jk == NULL)
            goto fail;
        json_object_object_add(pair, "key", jk);
        json_object *jv = value_json(&v, rc);
        if (jv == NULL)
            goto fail;
        json_object_object_add(pair, "value", jv);
    }
    if (r < 0) {
        *rc = r;
        goto fail;
    }
    return root;
fail:
    json_object_put(root);
    return NULL;
}

static json_object *value_json(const bulki_ent *e, int *rc)
{
    const struct bulki_type_info *ti = bulki_type_info(e->type);
    json_object *o = json_object_new_object();
    json_object *val = NULL;

    json_object_object_add(o, "type", json_object_new_string(ti->name));
    json_object_object_add(o, "class",
                           json_object_new_string(e->cls == BULKI_ITEM ? "item" : "array"));
    *rc = 0;
    if (e->type == BULKI_T_STRING) {
        val = bulki_json_bytes(e->payload, e->payload_len);
    } else if (e->type == BULKI_T_BULKI) {
        if (e->cls == BULKI_ITEM) {
            bulki_map m;
            if ((*rc = bulki_ent_doc(&m, e, 0)) == 0)
                val = doc_json(&m, rc);
        } else {
            val = json_object_new_array();
            for (uint64_t i = 0; i < e->count; i++) {
                bulki_map m;
                json_object *d = NULL;
                if ((*rc = bulki_ent_doc(&m, e, i)) == 0)
                    d = doc_json(&m, rc);
                if (d == NULL)
                    break;
                json_object_array_add(val, d);
            }
        }
    } else if (e->type == BULKI_T_BULKI_ENT) {
        /* walk the children in one pass (bulki_ent_at is linear in i) */
        val = json_object_new_array();
        bulki_ent child;
        for (uint64_t i = 0; i < e->count; i++) {
            *rc = bulki_ent_at(&child, e, i);
            if (*rc != 0)
                break;
            json_object *c = value_json(&child, rc);
            if (c == NULL)
                break;
            json_object_array_add(val, c);
        }
    } else if (e->cls == BULKI_ITEM) {
        val = elem_json(e, 0, rc);
    } else {
        val = json_object_new_array();
        for (uint64_t i = 0; i < e->count; i++) {
            json_object *x = elem_json(e, i, rc);
            if (x == NULL)
                break;
            json_object_array_add(val, x);
        }
    }
    if (*rc != 0 || val == NULL) {
        json_object_put(val);
        json_object_put(o);
        if (*rc == 0)
            *rc = BULKI_E_INVAL;
        return NULL;
    }
    json_object_object_add(o, "value", val);
    return o;
}

int bulki_json_from_doc(json_object **out, const bulki_map *m)
{
    int rc = 0;
    *out = doc_json(m, &rc);
    return *out ? 0 : (rc ? rc : BULKI_E_INVAL);
}

int bulki_json_from_value(json_object **out, const bulki_ent *e)
{
    int rc = 0;
    *out = value_json(e, &rc);
    return *out ? 0 : (rc ? rc : BULKI_E_INVAL);
}

/* ------------------------------------------------------------------ */
/* Encode: JSON -> description tree -> bytes                           */
/* ------------------------------------------------------------------ */

/* Every allocation made while building the description is recorded here
 * so that one call frees them all. */
struct arena {
    void **ptrs;
    size_t n, cap;
    char *err;
    size_t errlen;
    int failed;
};

static void *arena_alloc(struct arena *a, size_t size)
{
    if (a->n == a->cap) {
        size_t ncap = a->cap ? a->cap * 2 : 64;
        void **np = realloc(a->ptrs, ncap * sizeof *np);
        if (np == NULL)
            return NULL;
        a->ptrs = np;
        a->cap = ncap;
    }
    void *p = calloc(1, size ? size : 1);
    if (p != NULL)
        a->ptrs[a->n++] = p;
    return p;
}

static void arena_free(struct arena *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->ptrs[i]);
    free(a->ptrs);
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int jerr(struct arena *a, const char *path, const char *fmt, ...)
{
    if (!a->failed && a->err && a->errlen) {
        int n = snprintf(a->err, a->errlen, "%s: ", path);
        if (n >= 0 && (size_t)n < a->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(a->err + n, a->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    a->failed = 1;
    return BULKI_E_INVAL;
}

/* Read a JSON integer as sign + magnitude bits. Returns 0, or -1 if the
 * JSON value is not an integer. */
static int json_integer(json_object *j, int *neg, uint64_t *mag)
{
    if (!json_object_is_type(j, json_type_int))
        return -1;
    int64_t s = json_object_get_int64(j);
    if (s == INT64_MAX) {
        *neg = 0;
        *mag = json_object_get_uint64(j);
    } else if (s < 0) {
        *neg = 1;
        *mag = (uint64_t)0 - (uint64_t)s;
    } else {
        *neg = 0;
        *mag = (uint64_t)s;
    }
    return 0;
}

static int json_number(json_object *j, double *d)
{
    if (json_object_is_type(j, json_type_double) || json_object_is_type(j, json_type_int)) {
        int neg;
        uint64_t mag;
        if (json_integer(j, &neg, &mag) == 0)
            *d = neg ? -(double)mag : (double)mag;
        else
            *d = json_object_get_double(j);
        return 0;
    }
    if (json_object_is_type(j, json_type_string)) {
        const char *s = json_object_get_string(j);
        if (strcmp(s, "NaN") == 0) {
            *d = NAN;
            return 0;
        }
        if (strcmp(s, "Infinity") == 0) {
            *d = INFINITY;
            return 0;
        }
        if (strcmp(s, "-Infinity") == 0) {
            *d = -INFINITY;
            return 0;
        }
    }
    return -1;
}

/* Store one JSON number of a base type into dst (host order). */
static int put_elem(struct arena *a, const char *path, const struct bulki_type_info *ti,
                    json_object *j, uint8_t *dst)
{
    int neg;
    uint64_t mag;
    double d;

    switch (ti->kind) {
    case BULKI_KIND_BOOL:
        if (json_object_is_type(j, json_type_boolean)) {
            dst[0] = json_object_get_boolean(j) ? 1 : 0;
            return 0;
        }
        if (json_integer(j, &neg, &mag) == 0 && !neg && mag <= 1) {
            dst[0] = (uint8_t)mag;
            return 0;
        }
        return jerr(a, path, "%s needs true or false", ti->name);
    case BULKI_KIND_FLOAT:
        if (json_object_is_type(j, json_type_string) &&
            strncmp(json_object_get_string(j), "NaN:0x", 6) == 0) {
            /* a NaN with its exact bits */
            char *end;
            errno = 0;
            unsigned long long b = strtoull(json_object_get_string(j) + 6, &end, 16);
            if (errno || *end || (ti->width == 4 && b > 0xffffffffull))
                return jerr(a, path, "bad NaN bit pattern \"%s\"", json_object_get_string(j));
            if (ti->width == 4) {
                uint32_t b32 = (uint32_t)b;
                memcpy(dst, &b32, 4);
            } else {
                uint64_t b64 = b;
                memcpy(dst, &b64, 8);
            }
            return 0;
        }
        if (json_number(j, &d) != 0)
            return jerr(a, path, "%s needs a number", ti->name);
        if (ti->width == 4) {
            float f = (float)d;
            if (isfinite(d) && !isfinite(f))
                return jerr(a, path, "%g is out of range for %s", d, ti->name);
            memcpy(dst, &f, 4);
        } else {
            memcpy(dst, &d, 8);
        }
        return 0;
    case BULKI_KIND_SIGNED:
    case BULKI_KIND_UNSIGNED: {
        if (json_integer(j, &neg, &mag) != 0)
            return jerr(a, path, "%s needs an integer", ti->name);
        unsigned bits = ti->width * 8u;
        uint64_t v;
        if (ti->kind == BULKI_KIND_UNSIGNED) {
            uint64_t max = bits == 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
            if (neg || mag > max)
                return jerr(a, path, "value out of range for %s", ti->name);
            v = mag;
        } else {
            uint64_t lim = (uint64_t)1 << (bits - 1); /* |min| */
            if ((neg && mag > lim) || (!neg && mag > lim - 1))
                return jerr(a, path, "value out of range for %s", ti->name);
            v = neg ? (uint64_t)0 - mag : mag;
        }
        /* host-order store of the low `width` bytes */
        switch (ti->width) {
        case 1: { uint8_t x = (uint8_t)v; memcpy(dst, &x, 1); break; }
        case 2: { uint16_t x = (uint16_t)v; memcpy(dst, &x, 2); break; }
        case 4: { uint32_t x = (uint32_t)v; memcpy(dst, &x, 4); break; }
        default: memcpy(dst, &v, 8); break;
        }
        return 0;
    }
    default:
        return jerr(a, path, "internal: not a numeric type");
    }
}

static int build_doc(struct arena *a, const char *path, json_object *j, bulki_doc *d, int depth);

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int build_value(struct arena *a, const char *path, json_object *j, bulki_value *v,
                       int depth)
{
    char sub[512];
    json_object *jt, *jc, *jv;

    if (depth > BULKI_MAX_DEPTH)
        return jerr(a, path, "nested deeper than %d levels", BULKI_MAX_DEPTH);
    if (!json_object_is_type(j, json_type_object))
        return jerr(a, path, "an entity must be an object with type, class and value");
    if (!json_object_object_get_ex(j, "type", &jt) || !json_object_is_type(jt, json_type_string))
        return jerr(a, path, "missing \"type\" string");
    if (!json_object_object_get_ex(j, "class", &jc) || !json_object_is_type(jc, json_type_string))
        return jerr(a, path, "missing \"class\" string");
    if (!json_object_object_get_ex(j, "value", &jv))
        return jerr(a, path, "missing \"value\"");
    unsigned code = bulki_type_by_name(json_object_get_string(jt));
    const struct bulki_type_info *ti = bulki_type_info(code);
    if (ti == NULL)
        return jerr(a, path, "unknown type \"%s\"", json_object_get_string(jt));
    const char *cls = json_object_get_string(jc);
    if (strcmp(cls, "item") == 0)
        v->cls = BULKI_ITEM;
    else if (strcmp(cls, "array") == 0)
        v->cls = BULKI_ARRAY;
    else
        return jerr(a, path, "class must be \"item\" or \"array\", not \"%s\"", cls);
    v->type = (uint8_t)code;

    if (ti->kind == BULKI_KIND_STRING) {
        if (v->cls == BULKI_ARRAY)
            return jerr(a, path, "string arrays are not part of BULKI v0.1");
        v->count = 1;
        if (json_object_is_type(jv, json_type_object)) {
            /* {"hex": ...}: bytes that are not UTF-8 (bulki_json_bytes) */
            json_object *jh;
            const char *h;
            size_t hn;
            uint8_t *b;
            if (!json_object_object_get_ex(jv, "hex", &jh) || json_object_object_length(jv) != 1 ||
                !json_object_is_type(jh, json_type_string))
                return jerr(a, path, "PDC_STRING needs a string value or {\"hex\": \"...\"}");
            h = json_object_get_string(jh);
            hn = (size_t)json_object_get_string_len(jh);
            if (hn % 2 != 0 || (b = arena_alloc(a, hn / 2 + 1)) == NULL)
                return jerr(a, path, hn % 2 ? "hex: odd number of digits" : "out of memory");
            for (size_t i = 0; i < hn / 2; i++) {
                int hi = hexval(h[2 * i]), lo = hexval(h[2 * i + 1]);
                if (hi < 0 || lo < 0)
                    return jerr(a, path, "hex: \"%c%c\" at digit %zu is not hex", h[2 * i],
                                h[2 * i + 1], 2 * i);
                b[i] = (uint8_t)(hi << 4 | lo);
            }
            v->len = hn / 2;
            v->u.data = b;
        } else if (json_object_is_type(jv, json_type_string)) {
            v->len = (size_t)json_object_get_string_len(jv);
            v->u.data = json_object_get_string(jv);
        } else {
            return jerr(a, path, "PDC_STRING needs a string value or {\"hex\": \"...\"}");
        }
        if (memchr(v->u.data, 0, v->len) != NULL)
            return jerr(a, path, "PDC_STRING cannot hold a NUL character");
        return 0;
    }
    if (code == BULKI_T_BULKI && v->cls == BULKI_ITEM) {
        bulki_doc *d = arena_alloc(a, sizeof *d);
        if (d == NULL)
            return jerr(a, path, "out of memory");
        v->count = 1;
        v->u.doc = d;
        snprintf(sub, sizeof sub, "%s.value", path);
        return build_doc(a, sub, jv, d, depth + 1);
    }
    if (code == BULKI_T_BULKI_ENT && v->cls == BULKI_ITEM)
        return jerr(a, path, "PDC_BULKI_ENT must be an array");
    if (v->cls == BULKI_ITEM) {
        uint8_t *buf = arena_alloc(a, 8);
        if (buf == NULL)
            return jerr(a, path, "out of memory");
        v->count = 1;
        v->u.data = buf;
        snprintf(sub, sizeof sub, "%s.value", path);
        return put_elem(a, sub, ti, jv, buf);
    }
    if (!json_object_is_type(jv, json_type_array))
        return jerr(a, path, "an array entity needs a JSON array value");
    size_t n = json_object_array_length(jv);
    v->count = n;
    if (code == BULKI_T_BULKI) {
        bulki_doc *docs = arena_alloc(a, n * sizeof *docs);
        if (docs == NULL)
            return jerr(a, path, "out of memory");
        v->u.doc = docs;
        for (size_t i = 0; i < n; i++) {
            snprintf(sub, sizeof sub, "%s.value[%zu]", path, i);
            int rc = build_doc(a, sub, json_object_array_get_idx(jv, i), &docs[i], depth + 1);
            if (rc)
                return rc;
        }
        return 0;
    }
    if (code == BULKI_T_BULKI_ENT) {
        bulki_value *ents = arena_alloc(a, n * sizeof *ents);
        if (ents == NULL)
            return jerr(a, path, "out of memory");
        v->u.ents = ents;
        for (size_t i = 0; i < n; i++) {
            snprintf(sub, sizeof sub, "%s.value[%zu]", path, i);
            int rc = build_value(a, sub, json_object_array_get_idx(jv, i), &ents[i], depth + 1);
            if (rc)
                return rc;
        }
        return 0;
    }
    uint8_t *buf = arena_alloc(a, n * ti->width);
    if (buf == NULL)
        return jerr(a, path, "out of memory");
    v->u.data = buf;
    for (size_t i = 0; i < n; i++) {
        snprintf(sub, sizeof sub, "%s.value[%zu]", path, i);
        int rc = put_elem(a, sub, ti, json_object_array_get_idx(jv, i), buf + i * ti->width);
        if (rc)
            return rc;
    }
    return 0;
}

static int build_doc(struct arena *a, const char *path, json_object *j, bulki_doc *d, int depth)
{
    char sub[512];
    json_object *jp;
    if (depth > BULKI_MAX_DEPTH)
        return jerr(a, path, "nested deeper than %d levels", BULKI_MAX_DEPTH);
    if (!json_object_is_type(j, json_type_object) || !json_object_object_get_ex(j, "bulki", &jp) ||
        !json_object_is_type(jp, json_type_array))
        return jerr(a, path, "a BULKI must be {\"bulki\": [pairs...]}");
    size_t n = json_object_array_length(jp);
    bulki_pair *pairs = arena_alloc(a, n * sizeof *pairs);
    if (pairs == NULL)
        return jerr(a, path, "out of memory");
    d->npairs = n;
    d->pairs = pairs;
    for (size_t i = 0; i < n; i++) {
        json_object *p = json_object_array_get_idx(jp, i), *jk, *jv;
        snprintf(sub, sizeof sub, "%s.bulki[%zu]", path, i);
        if (!json_object_is_type(p, json_type_object) || !json_object_object_get_ex(p, "key", &jk) ||
            !json_object_object_get_ex(p, "value", &jv))
            return jerr(a, sub, "a pair must be {\"key\": ENTITY, \"value\": ENTITY}");
        char sub2[600];
        snprintf(sub2, sizeof sub2, "%s.key", sub);
        int rc = build_value(a, sub2, jk, &pairs[i].key, depth);
        if (rc)
            return rc;
        snprintf(sub2, sizeof sub2, "%s.value", sub);
        rc = build_value(a, sub2, jv, &pairs[i].value, depth);
        if (rc)
            return rc;
    }
    return 0;
}

int bulki_json_encode(uint8_t **out, size_t *len, json_object *root, char *errbuf,
                      size_t errlen)
{
    struct arena a = {NULL, 0, 0, errbuf, errlen, 0};
    bulki_doc doc;
    bulki_value val;
    json_object *tmp;
    int is_doc = json_object_is_type(root, json_type_object) &&
                 json_object_object_get_ex(root, "bulki", &tmp);
    int rc;
    size_t n = 0, w = 0;
    uint8_t *buf = NULL;

    *out = NULL;
    *len = 0;
    rc = is_doc ? build_doc(&a, "$", root, &doc, 1) : build_value(&a, "$", root, &val, 0);
    if (rc == 0)
        rc = is_doc ? bulki_doc_encoded_len(&n, &doc) : bulki_value_encoded_len(&n, &val);
    if (rc == 0 && (buf = malloc(n ? n : 1)) == NULL)
        rc = jerr(&a, "$", "out of memory");
    if (rc == 0)
        rc = is_doc ? bulki_encode_doc(&w, buf, n, &doc) : bulki_encode_value(&w, buf, n, &val);
    if (rc != 0 && !a.failed && errbuf && errlen)
        snprintf(errbuf, errlen, "$: %s", bulki_strerror(rc));
    arena_free(&a);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    *out = buf;
    *len = w;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Equality                                                            */
/* ------------------------------------------------------------------ */

int bulki_json_equal(json_object *a, json_object *b)
{
    json_type ta = json_object_get_type(a), tb = json_object_get_type(b);
    int na = ta == json_type_int || ta == json_type_double;
    int nb = tb == json_type_int || tb == json_type_double;
    if (na && nb) {
        int sa, sb;
        uint64_t ma, mb;
        if (json_integer(a, &sa, &ma) == 0 && json_integer(b, &sb, &mb) == 0)
            return sa == sb && ma == mb;
        double da, db;
        json_number(a, &da);
        json_number(b, &db);
        return da == db || (isnan(da) && isnan(db));
    }
    if (ta != tb)
        return 0;
    switch (ta) {
    case json_type_null:
        return 1;
    case json_type_boolean:
        return json_object_get_boolean(a) == json_object_get_boolean(b);
    case json_type_string:
        return json_object_get_string_len(a) == json_object_get_string_len(b) &&
               memcmp(json_object_get_string(a), json_object_get_string(b),
                      (size_t)json_object_get_string_len(a)) == 0;
    case json_type_array: {
        size_t n = json_object_array_length(a);
        if (n != json_object_array_length(b))
            return 0;
        for (size_t i = 0; i < n; i++)
            if (!bulki_json_equal(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i)))
                return 0;
        return 1;
    }
    case json_type_object: {
        if (json_object_object_length(a) != json_object_object_length(b))
            return 0;
        json_object_object_foreach(a, key, va)
        {
            json_object *vb;
            if (!json_object_object_get_ex(b, key, &vb) || !bulki_json_equal(va, vb))
                return 0;
        }
        return 1;
    }
    default:
        return 0;
    }
}
