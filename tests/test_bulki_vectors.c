/*
 * test_bulki_vectors.c - the codec against the PDC-written test vectors.
 *
 * The vector directory is enumerated at run time, so a new NAME.bin +
 * NAME.json pair is picked up without touching this file. For each vector:
 *   decode_matches_json/NAME    NAME.bin decodes, and its JSON form equals
 *                               NAME.json (also after a JSON text round trip)
 *   encode_matches_bin/NAME     NAME.json encodes to exactly NAME.bin, and so
 *                               does the JSON form decoded from NAME.bin
 * plus vector_set_is_complete: at least 11 vectors, every .bin has a .json
 * and every .json a .bin (an empty or half-copied directory cannot pass).
 *
 * Usage: test_bulki_vectors [VECTOR_DIR]
 */
#include "bulki_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_VECTORS 11

static struct tu_vector *g_vec;
static size_t g_nvec, g_orphans;
static const char *g_dir;

static void vector_set_is_complete(void **state)
{
    (void)state;
    if (g_nvec < MIN_VECTORS)
        print_error("found %zu vectors in %s, expected at least %d\n", g_nvec, g_dir,
                    MIN_VECTORS);
    assert_true(g_nvec >= MIN_VECTORS);
    assert_int_equal(g_orphans, 0);
    size_t entities = 0;
    for (size_t i = 0; i < g_nvec; i++)
        entities += (size_t)g_vec[i].entity;
    /* both kinds of top-level value are represented */
    assert_true(entities > 0);
    assert_true(entities < g_nvec);
}

static void decode_matches_json(void **state)
{
    const struct tu_vector *v = *state;
    json_object *got = NULL, *again;
    size_t off = 0;

    assert_non_null(v->bin);
    assert_non_null(v->json);
    int rc = tu_decode_json(&got, v->bin, v->bin_len, v->entity, &off);
    if (rc != 0)
        print_error("%s.bin: %s at byte %zu\n", v->name, bulki_errname(rc), off);
    assert_bulki_rc(rc, BULKI_OK);
    if (!bulki_json_equal(got, v->json)) {
        print_error("%s.bin decodes to\n%s\nexpected\n%s\n", v->name,
                    json_object_to_json_string_ext(got, JSON_C_TO_STRING_PRETTY),
                    json_object_to_json_string_ext(v->json, JSON_C_TO_STRING_PRETTY));
        fail();
    }
    /* the printed form reads back to the same content */
    again = tu_json_text_roundtrip(got);
    assert_non_null(again);
    assert_true(bulki_json_equal(again, v->json));
    json_object_put(again);
    json_object_put(got);
}

static void encode_matches_bin(void **state)
{
    const struct tu_vector *v = *state;
    char err[512] = "";
    uint8_t *out = NULL;
    size_t len = 0;
    json_object *decoded = NULL;

    assert_non_null(v->bin);
    assert_non_null(v->json);
    int rc = bulki_json_encode(&out, &len, v->json, err, sizeof err);
    if (rc != 0)
        print_error("%s.json: %s\n", v->name, err);
    assert_bulki_rc(rc, BULKI_OK);
    assert_bytes_equal(out, len, v->bin, v->bin_len);
    free(out);

    /* decode -> JSON form -> encode is the identity on these bytes */
    assert_bulki_rc(tu_decode_json(&decoded, v->bin, v->bin_len, v->entity, NULL), BULKI_OK);
    rc = bulki_json_encode(&out, &len, decoded, err, sizeof err);
    assert_bulki_rc(rc, BULKI_OK);
    assert_bytes_equal(out, len, v->bin, v->bin_len);
    free(out);
    json_object_put(decoded);
}

int main(int argc, char **argv)
{
    g_dir = tu_vector_dir(argc, argv);
    g_nvec = tu_load_vectors(g_dir, &g_vec, &g_orphans);

    size_t ntests = 1 + 2 * g_nvec;
    struct CMUnitTest *tests = calloc(ntests, sizeof *tests);
    char **names = calloc(ntests, sizeof *names);
    assert_non_null(tests);
    assert_non_null(names);
    tests[0] = (struct CMUnitTest){"vector_set_is_complete", vector_set_is_complete, NULL,
                                   NULL, NULL};
    for (size_t i = 0; i < g_nvec; i++) {
        static const char *const kinds[2] = {"decode_matches_json", "encode_matches_bin"};
        for (size_t k = 0; k < 2; k++) {
            size_t t = 1 + 2 * i + k;
            size_t n = strlen(kinds[k]) + strlen(g_vec[i].name) + 2;
            names[t] = malloc(n);
            assert_non_null(names[t]);
            snprintf(names[t], n, "%s/%s", kinds[k], g_vec[i].name);
            tests[t] = (struct CMUnitTest){names[t],
                                           k == 0 ? decode_matches_json : encode_matches_bin,
                                           NULL, NULL, &g_vec[i]};
        }
    }
    int failed = _cmocka_run_group_tests("bulki_vectors", tests, ntests, NULL, NULL);
    for (size_t t = 0; t < ntests; t++)
        free(names[t]);
    free(names);
    free(tests);
    tu_free_vectors(g_vec, g_nvec);
    return failed;
}
