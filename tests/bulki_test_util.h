/*
 * bulki_test_util.h - helpers shared by the BULKI codec tests: loading the
 * test vectors (tests/data/bulki/NAME.bin + NAME.json), decoding to the
 * JSON form, and assertions that print symbolic error names and the first
 * differing byte. The PRNG, exact-size copies and files are the shared
 * ones (tests/common/test_util.h).
 */
#ifndef PDC_CKPT_BULKI_TEST_UTIL_H
#define PDC_CKPT_BULKI_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bulki.h"
#include "bulki_json.h"
#include "test_util.h"

/* One test vector: NAME.bin (bytes written by PDC) and NAME.json. */
struct tu_vector {
    char *name;         /* NAME, without extension */
    int entity;         /* 1 for entity_* (one top-level entity) */
    uint8_t *bin;       /* exact-size heap copy of NAME.bin */
    size_t bin_len;
    json_object *json;  /* parsed NAME.json (NULL if it failed to parse) */
};

/* Vector directory: argv[1] if given, else the compile-time default
 * (BULKI_TEST_VECTORS, set by tests/CMakeLists.txt). */
const char *tu_vector_dir(int argc, char **argv);

/* Load every NAME.bin in dir with its NAME.json, sorted by name. Returns
 * the count (0 if the directory cannot be read). *orphans gets the number
 * of .bin files without a .json or .json files without a .bin. */
size_t tu_load_vectors(const char *dir, struct tu_vector **out, size_t *orphans);
void tu_free_vectors(struct tu_vector *v, size_t n);

/* Decode buf as a top-level BULKI (entity = 0) or entity (entity = 1). */
int tu_decode(const uint8_t *buf, size_t len, int entity, size_t *err_off);
/* Decode and convert to the JSON form. */
int tu_decode_json(json_object **out, const uint8_t *buf, size_t len, int entity,
                   size_t *err_off);
/* Serialize j to JSON text and parse it back (NULL on failure). */
json_object *tu_json_text_roundtrip(json_object *j);

/* Hex dump of the first difference between two buffers, for messages. */
void tu_print_diff(const uint8_t *got, size_t got_len, const uint8_t *want, size_t want_len);

/* Assert an int return code equals a BULKI_E* code, printing names. */
#define assert_bulki_rc(rc, want)                                                   \
    do {                                                                           \
        int tu_rc_ = (rc), tu_want_ = (want);                                      \
        if (tu_rc_ != tu_want_) {                                                  \
            print_error("%s:%d: got %s (%d), expected %s (%d)\n", __FILE__,        \
                        __LINE__, bulki_errname(tu_rc_), tu_rc_,                   \
                        bulki_errname(tu_want_), tu_want_);                        \
            fail();                                                                \
        }                                                                          \
    } while (0)

/* Assert two byte buffers are identical, printing the first difference. */
#define assert_bytes_equal(got, got_len, want, want_len)                            \
    do {                                                                           \
        size_t tu_gl_ = (got_len), tu_wl_ = (want_len);                            \
        if (tu_gl_ != tu_wl_ || memcmp((got), (want), tu_gl_) != 0) {              \
            print_error("%s:%d: bytes differ\n", __FILE__, __LINE__);              \
            tu_print_diff((got), tu_gl_, (want), tu_wl_);                          \
            fail();                                                                \
        }                                                                          \
    } while (0)

#endif /* PDC_CKPT_BULKI_TEST_UTIL_H */
