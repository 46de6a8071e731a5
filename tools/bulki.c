/*
 * bulki - decode BULKI bytes to the JSON form of docs/BULKI.md, or encode that
 * JSON form to BULKI bytes. It is how the wire format is checked from
 * outside: every byte goes through the codec in codec/.
 *
 *   bulki decode [--entity] FILE      JSON on stdout; exit 0
 *   bulki encode JSONFILE OUTFILE     write the bytes; exit 0
 *
 * Errors: one line on stderr, "bulki: FILE: ...", exit 1. Usage: exit 2.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bulki_json.h"

#define PROG "bulki"
#define VERSION "0.1.0"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " PROG " decode [--entity] FILE\n"
            "       " PROG " encode JSONFILE OUTFILE\n"
            "       " PROG " -V | -h | --help      (COMMAND -h: this help too)\n"
            "decode prints the BULKI in FILE (or, with --entity, one top-level\n"
            "entity) as JSON; encode writes the bytes of a JSON BULKI or entity.\n"
            "Exit status: 0 ok, 1 error, 2 bad usage.\n");
}

/* Read a whole file; NULL and errno on failure. */
static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;
    if (f == NULL)
        return NULL;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 4096;
            uint8_t *nb = realloc(buf, ncap);
            if (nb == NULL) {
                free(buf);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            buf = nb;
            cap = ncap;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    *len = n;
    return buf;
}

static int cmd_decode(int entity, const char *path)
{
    size_t len = 0, off = 0;
    uint8_t *buf = slurp(path, &len);
    json_object *j = NULL;
    int rc;

    if (buf == NULL) {
        fprintf(stderr, PROG ": %s: %s\n", path, strerror(errno));
        return 1;
    }
    if (entity) {
        bulki_ent e;
        rc = bulki_decode_value(&e, buf, len, &off);
        if (rc == 0)
            rc = bulki_json_from_value(&j, &e);
    } else {
        bulki_map m;
        rc = bulki_decode_doc(&m, buf, len, &off);
        if (rc == 0)
            rc = bulki_json_from_doc(&j, &m);
    }
    if (rc != 0) {
        fprintf(stderr, PROG ": %s: byte %zu of %zu: %s (%s)\n", path, off, len,
                bulki_strerror(rc), bulki_errname(rc));
        free(buf);
        return 1;
    }
    puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
                                               JSON_C_TO_STRING_SPACED |
                                               JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(j);
    free(buf);
    if (fflush(stdout) != 0) {
        fprintf(stderr, PROG ": stdout: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}

/* Parse a whole JSON file, allowing the nesting BULKI allows: one BULKI
 * level takes up to 5 JSON levels (an entity, its value array, a BULKI,
 * its "bulki" array, a pair), so allow 8 per level. */
static json_object *parse_json(const char *path, char *err, size_t errlen)
{
    size_t len = 0;
    uint8_t *buf = slurp(path, &len);
    json_object *root = NULL;
    if (buf == NULL) {
        snprintf(err, errlen, "%s", strerror(errno));
        return NULL;
    }
    json_tokener *tok = json_tokener_new_ex(8 * BULKI_MAX_DEPTH + 16);
    if (tok == NULL || len > INT_MAX) {
        snprintf(err, errlen, "%s", tok ? "file too large" : strerror(ENOMEM));
    } else {
        root = json_tokener_parse_ex(tok, (const char *)buf, (int)len);
        enum json_tokener_error jerr = json_tokener_get_error(tok);
        size_t at = json_tokener_get_parse_end(tok);
        if (root == NULL && jerr == json_tokener_continue) {
            snprintf(err, errlen, "invalid JSON: the text ends early (byte %zu)", len);
        } else if (root == NULL) {
            snprintf(err, errlen, "invalid JSON at byte %zu: %s", at, json_tokener_error_desc(jerr));
        } else {
            while (at < len && (buf[at] == ' ' || buf[at] == '\n' || buf[at] == '\t' ||
                                buf[at] == '\r'))
                at++;
            if (at < len) {
                snprintf(err, errlen, "invalid JSON at byte %zu: text after the value", at);
                json_object_put(root);
                root = NULL;
            }
        }
    }
    /* json-c clamps integers beyond 64 bits to the nearest bound: refuse
     * them here, where their text still is */
    if (root != NULL && bulki_json_check_integers((const char *)buf, len, err, errlen) != 0) {
        json_object_put(root);
        root = NULL;
    }
    if (tok)
        json_tokener_free(tok);
    free(buf);
    return root;
}

static int cmd_encode(const char *jpath, const char *out)
{
    char err[512] = "";
    uint8_t *bytes = NULL;
    size_t len = 0;
    json_object *root = parse_json(jpath, err, sizeof err);
    if (root == NULL) {
        fprintf(stderr, PROG ": %s: %s\n", jpath, err);
        return 1;
    }
    int rc = bulki_json_encode(&bytes, &len, root, err, sizeof err);
    json_object_put(root);
    if (rc != 0) {
        fprintf(stderr, PROG ": %s: %s\n", jpath, err);
        return 1;
    }
    /* write to a temporary name and rename, so a failed write never
     * leaves a half-written OUTFILE behind */
    size_t plen = strlen(out) + 16;
    char *tmp = malloc(plen);
    if (tmp == NULL) {
        free(bytes);
        fprintf(stderr, PROG ": %s: %s\n", out, strerror(ENOMEM));
        return 1;
    }
    snprintf(tmp, plen, "%s.tmp%ld", out, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int ok = f != NULL && fwrite(bytes, 1, len, f) == len;
    if (f != NULL && fclose(f) != 0)
        ok = 0;
    if (ok && rename(tmp, out) != 0)
        ok = 0;
    if (!ok) {
        fprintf(stderr, PROG ": %s: %s\n", out, strerror(errno));
        unlink(tmp);
    }
    free(tmp);
    free(bytes);
    return ok ? 0 : 1;
}

/* "bulki: MSG" or "bulki: MSG \"ARG\"", then the usage, on stderr: exit 2. */
static int usage_err(const char *msg, const char *arg)
{
    if (arg != NULL)
        fprintf(stderr, PROG ": %s \"%s\"\n", msg, arg);
    else
        fprintf(stderr, PROG ": %s\n", msg);
    usage(stderr);
    return 2;
}

int main(int argc, char **argv)
{
    const char *ops[3];
    int nops = 0, entity = 0, decode, only_operands = 0;
    if (argc < 2)
        return usage_err("a command is needed (decode or encode)", NULL);
    if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
        printf(PROG " %s (BULKI v0.1)\n", VERSION);
        return 0;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "decode") != 0 && strcmp(argv[1], "encode") != 0)
        return usage_err(argv[1][0] == '-' ? "unknown option" : "unknown command", argv[1]);
    decode = strcmp(argv[1], "decode") == 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!only_operands && strcmp(a, "--") == 0) {
            only_operands = 1;
        } else if (!only_operands && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
            usage(stdout);
            return 0;
        } else if (!only_operands && decode && strcmp(a, "--entity") == 0) {
            entity = 1;
        } else if (!only_operands && a[0] == '-' && a[1] != 0) {
            return usage_err(decode ? "decode: unknown option" : "encode: unknown option", a);
        } else if (nops < 3) {
            ops[nops++] = a;
        }
    }
    if (decode && nops != 1)
        return nops == 0 ? usage_err("decode: FILE missing", NULL)
                         : usage_err("decode: unexpected argument", ops[1]);
    if (!decode && nops != 2)
        return nops < 2 ? usage_err("encode: JSONFILE and OUTFILE needed", NULL)
                        : usage_err("encode: unexpected argument", ops[2]);
    return decode ? cmd_decode(entity, ops[0]) : cmd_encode(ops[0], ops[1]);
}
