/*
 * bulki_test_util.c - see bulki_test_util.h.
 */
#include "bulki_test_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef BULKI_TEST_VECTORS
#error "BULKI_TEST_VECTORS must name the test vector directory"
#endif

const char *tu_vector_dir(int argc, char **argv)
{
    return argc > 1 ? argv[1] : BULKI_TEST_VECTORS;
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n > m && strcmp(s + n - m, suf) == 0;
}

static int cmp_vector(const void *a, const void *b)
{
    return strcmp(((const struct tu_vector *)a)->name, ((const struct tu_vector *)b)->name);
}

static char *path_join(const char *dir, const char *name, const char *ext)
{
    size_t n = strlen(dir) + strlen(name) + strlen(ext) + 2;
    char *p = malloc(n);
    if (p != NULL)
        snprintf(p, n, "%s/%s%s", dir, name, ext);
    return p;
}

/* dir/NAME.EXT exists */
static int file_exists(const char *dir, const char *name, const char *ext)
{
    char *p = path_join(dir, name, ext);
    int yes = p != NULL && tu_exists(p);
    free(p);
    return yes;
}

size_t tu_load_vectors(const char *dir, struct tu_vector **out, size_t *orphans)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    struct tu_vector *v = NULL;
    size_t n = 0, cap = 0;

    *out = NULL;
    *orphans = 0;
    if (d == NULL) {
        fprintf(stderr, "cannot open test vector directory %s\n", dir);
        return 0;
    }
    while ((de = readdir(d)) != NULL) {
        if (has_suffix(de->d_name, ".json")) {
            size_t l = strlen(de->d_name) - 5;
            char *stem = malloc(l + 1);
            memcpy(stem, de->d_name, l);
            stem[l] = 0;
            if (!file_exists(dir, stem, ".bin")) {
                fprintf(stderr, "%s/%s has no .bin\n", dir, de->d_name);
                (*orphans)++;
            }
            free(stem);
            continue;
        }
        if (!has_suffix(de->d_name, ".bin"))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            v = realloc(v, cap * sizeof *v);
            assert_non_null(v);
        }
        struct tu_vector *t = &v[n++];
        size_t l = strlen(de->d_name) - 4;
        t->name = malloc(l + 1);
        memcpy(t->name, de->d_name, l);
        t->name[l] = 0;
        t->entity = strncmp(t->name, "entity_", 7) == 0;
        char *bp = path_join(dir, t->name, ".bin");
        char *jp = path_join(dir, t->name, ".json");
        t->bin = tu_read_file(bp, &t->bin_len);
        t->json = json_object_from_file(jp);
        if (t->bin == NULL || t->json == NULL) {
            fprintf(stderr, "%s: cannot read %s\n", t->name, t->bin ? jp : bp);
            (*orphans)++;
        }
        free(bp);
        free(jp);
    }
    closedir(d);
    if (n > 0)
        qsort(v, n, sizeof *v, cmp_vector);
    *out = v;
    return n;
}

void tu_free_vectors(struct tu_vector *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].bin);
        json_object_put(v[i].json);
    }
    free(v);
}

int tu_decode(const uint8_t *buf, size_t len, int entity, size_t *err_off)
{
    if (entity) {
        bulki_ent e;
        return bulki_decode_value(&e, buf, len, err_off);
    }
    bulki_map m;
    return bulki_decode_doc(&m, buf, len, err_off);
}

int tu_decode_json(json_object **out, const uint8_t *buf, size_t len, int entity,
                   size_t *err_off)
{
    int rc;
    *out = NULL;
    if (entity) {
        bulki_ent e;
        rc = bulki_decode_value(&e, buf, len, err_off);
        return rc ? rc : bulki_json_from_value(out, &e);
    }
    bulki_map m;
    rc = bulki_decode_doc(&m, buf, len, err_off);
    return rc ? rc : bulki_json_from_doc(out, &m);
}

json_object *tu_json_text_roundtrip(json_object *j)
{
    size_t n = 0;
    const char *s = json_object_to_json_string_length(j, JSON_C_TO_STRING_PLAIN, &n);
    /* json-c's default nesting limit (32) is below what BULKI allows: each
     * BULKI level is 4 JSON levels (object, pair list, pair, entity) */
    json_tokener *tok = json_tokener_new_ex(4 * BULKI_MAX_DEPTH + 16);
    json_object *r = json_tokener_parse_ex(tok, s, (int)n);
    if (json_tokener_get_error(tok) != json_tokener_success) {
        json_object_put(r);
        r = NULL;
    }
    json_tokener_free(tok);
    return r;
}

void tu_print_diff(const uint8_t *got, size_t got_len, const uint8_t *want, size_t want_len)
{
    size_t i = 0, n = got_len < want_len ? got_len : want_len;
    while (i < n && got[i] == want[i])
        i++;
    print_error("  lengths: got %zu, expected %zu; first difference at byte %zu\n", got_len,
                want_len, i);
    size_t from = i > 8 ? i - 8 : 0;
    print_error("  got:     ");
    for (size_t k = from; k < got_len && k < i + 8; k++)
        print_error("%s%02x", k == i ? "[" : " ", got[k]);
    print_error("\n  expected:");
    for (size_t k = from; k < want_len && k < i + 8; k++)
        print_error("%s%02x", k == i ? "[" : " ", want[k]);
    print_error("\n");
}
