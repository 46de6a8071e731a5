/*
 * bulki_json.h - the JSON form of BULKI content (docs/BULKI.md, "JSON form"),
 * for the tools and the tests. Unlike the codec this module allocates
 * (json-c objects and the description tree built from them).
 *
 *   BULKI  := {"bulki": [{"key": ENTITY, "value": ENTITY}, ...]}
 *   ENTITY := {"type": "PDC_<NAME>", "class": "item"|"array", "value": V}
 *
 * Integers are exact over the full 64-bit ranges, floats print in the
 * shortest form that reads back to the same bits (always with a '.' or an
 * exponent), and non-finite floats print as the strings "Infinity",
 * "-Infinity", "NaN" (the default quiet NaN) or "NaN:0x<hex bits>" (any
 * other NaN), which encode accepts back bit for bit.
 */
#ifndef PDC_CKPT_BULKI_JSON_H
#define PDC_CKPT_BULKI_JSON_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "bulki.h"

/* Decoded view -> new json-c object (caller json_object_put()s it).
 * Returns 0 or a negative BULKI_E* code (only on views that fail to walk,
 * or BULKI_E_INVAL when out of memory). */
int bulki_json_from_doc(json_object **out, const bulki_map *m);
int bulki_json_from_value(json_object **out, const bulki_ent *e);

/* JSON content -> freshly malloc'd encoded bytes (*out, *len; free()).
 * A top-level object with "bulki" encodes as a BULKI, anything else as one
 * entity. On error returns a negative BULKI_E* code and writes a message
 * naming the JSON path of the problem into errbuf. */
int bulki_json_encode(uint8_t **out, size_t *len, json_object *root, char *errbuf,
                      size_t errlen);

/* Shortest "%.Ng" text that reads back to the same value ("1.0", "-2.25",
 * "6.02e+23"); buf needs 32 bytes. */
void bulki_json_fmt_double(char *buf, size_t n, double v);
void bulki_json_fmt_float(char *buf, size_t n, float v);
/* A number as JSON, a float's shortest form when is_float: non-finite
 * values as the strings "Infinity", "-Infinity" or "NaN". */
json_object *bulki_json_f64(double v, int is_float);

/*
 * Strings that are not valid UTF-8. JSON text is UTF-8, so bytes that are
 * not (a name written by a program that did not care, a prefix cut inside
 * a multi-byte character) cannot be a JSON string as they are, and
 * replacing or escaping them one by one would alias some valid text. Every
 * JSON output of the tools therefore uses one rule:
 *
 *   valid UTF-8 (RFC 3629: shortest forms, no surrogates, at most
 *   U+10FFFF; NUL included, printed as \u0000)  -> a JSON string;
 *   anything else                               -> {"hex": "<every byte as
 *                                                  two lowercase hex digits>"}
 *
 * A reader tells the two apart by the JSON type alone. `bulki encode`
 * accepts the {"hex": ...} form back for PDC_STRING values.
 */
/* 1 if s[0..n) is valid UTF-8, else 0. */
int bulki_json_utf8_valid(const void *s, size_t n);
/* s[0..n) as a JSON string, or {"hex": ...} when it is not valid UTF-8;
 * NULL only when out of memory. bulki_json_str(s) is the same for a
 * NUL-terminated s (NULL: ""). */
json_object *bulki_json_bytes(const void *s, size_t n);
json_object *bulki_json_str(const char *s);

/* Integer literals in JSON text that no BULKI integer type can hold, i.e.
 * outside [-2^63, 2^64-1] (json-c would silently clamp them to the
 * nearest bound). Returns 0, or -1 with "PATH: literal is out of range"
 * in err, PATH the element's JSON path as the encoder names it
 * ("$.bulki[0].value.value[2]"). Call it on text that parsed. */
int bulki_json_check_integers(const char *text, size_t len, char *err, size_t errlen);

/* Deep equality of two JSON trees where numbers compare by value (an
 * integer 1 equals a double 1.0, int64 and uint64 compare exactly). */
int bulki_json_equal(json_object *a, json_object *b);

#endif /* PDC_CKPT_BULKI_JSON_H */
