/*
 * inspect.h - shared parts of ckpt-inspect (docs/TOOLS.md): the store root
 * and its ranks, error reporting, key decoding and the JSON forms of
 * records. Every record goes through the library's decoders
 * (ckpt_rec_*_decode, bulki_decode_doc, bulki_json_from_doc); every key
 * through the store's key helpers.
 */
#ifndef PDC_CKPT_INSPECT_H
#define PDC_CKPT_INSPECT_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "bulki.h"
#include "bulki_json.h" /* bulki_json_str/bytes: every string of the JSON output */
#include "ckpt_hooks.h"
#include "ckpt_store.h"

#define PROG "ckpt-inspect"
#ifndef CKPT_INSPECT_VERSION
#define CKPT_INSPECT_VERSION "0.0.0"
#endif

/* Exit codes. */
#define EXIT_OK 0
#define EXIT_FAIL 1  /* an error, a problem found, or nothing found */
#define EXIT_USAGE 2 /* bad arguments */

/* ---- the store root and its ranks ---- */

struct rank_ent {
    int rank;
    ckpt_store *st;  /* open read-only, or NULL */
    int tried;       /* an open was attempted */
    int open_rc;     /* code of a failed open (0 if it opened) */
    char *open_err;  /* message of a failed open */
    int abandoned;   /* reading it faulted: never touched again */
};

struct inspect_root {
    const char *path;
    struct rank_ent *ranks; /* sorted by rank */
    size_t n;
};

/* Find every ROOT/rank-<N> directory. Prints the error and returns -1 when
 * ROOT cannot be read or holds no rank directory (unless allow_empty). */
int root_scan(struct inspect_root *r, const char *path, int allow_empty);
struct rank_ent *root_find(struct inspect_root *r, int rank);
/* Open a rank read-only (once; retried while a writer grows the map).
 * Returns 0 or the store's error code; with report set, a failure is
 * printed as "ckpt-inspect: PATH: message". */
int root_open(struct inspect_root *r, struct rank_ent *e, int report);
/* A re-homing (restart on another rank count) left ROOT/.rehome behind:
 * 0 no, 1 yes (rolled back at the next restart), 2 yes, with its
 * COMPLETE mark (rolled forward at the next restart). */
int root_rehome_state(const char *path);
/* Faults. LMDB reads the store through a memory map; a truncated or
 * overwritten data.mdb can make those reads raise SIGBUS or SIGSEGV.
 * guard_run(fn, arg) runs fn so that such a signal returns here with its
 * number (0 if fn returned normally). Whatever fn was doing is abandoned:
 * the rank it was reading must not be touched again (rank_fault() reports
 * it and marks it so). Not nestable. */
int guard_run(void (*fn)(void *), void *arg);
/* "ckpt-inspect: ROOT/rank-N/data.mdb: reading ... crashed with SIGBUS
 * ..." on stderr, the message kept in e->open_err, e abandoned. */
void rank_fault(struct inspect_root *r, struct rank_ent *e, int sig);
/* The process's exit status. After a fault, memory held by the
 * interrupted library calls cannot be released: flush and _exit(). */
int inspect_exit(int status);
/* The caller is done with rank e for now. Each LMDB environment holds 2-3
 * file descriptors, so a store of thousands of ranks cannot have them all
 * open: the first ranks opened stay open as long as they fit in a third
 * of the descriptors the process may open (RLIMIT_NOFILE, less 64 for
 * everything else), so that a second pass over a small store does not
 * open them again; beyond that, a released rank is closed, and a later
 * root_open opens it again. A rank that failed to open stays failed (not
 * retried, not reported twice); an abandoned one is left alone. */
void root_release(struct inspect_root *r, struct rank_ent *e);
/* Entries of ROOT that belong to no rank of a store of nranks ranks
 * (ckpt_root_strays; nranks <= 0: unknown, rank numbers not judged):
 * "stray": [{"name", "why"}] added to jr when it is not NULL, else one
 * line each on stdout ("stray: NAME: why") and what to remove. Returns
 * how many. */
int root_strays(const struct inspect_root *r, int nranks, json_object *jr);
/* Close every open rank, in reverse order. */
void root_close(struct inspect_root *r);

/* ---- errors ---- */

#if defined(__GNUC__)
#define INSPECT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define INSPECT_PRINTF(a, b)
#endif
/* "ckpt-inspect: PATH: message" on stderr. */
void errp(const char *path, const char *fmt, ...) INSPECT_PRINTF(2, 3);
void verrp(const char *path, const char *fmt, va_list ap);
/* The store's message of the last failed call (ckpt_errmsg), as
 * "ckpt-inspect: PATH: message"; path is left out when the message already
 * starts with it. */
void err_store(const char *path, int rc);
/* The last store message, or ckpt_strerror(rc) if there is none. */
const char *store_msg(int rc);
/* Forget the last store message (so that a later one is fresh). */
void store_msg_clear(void);

/* ---- argument parsing ---- */
int parse_u64(const char *s, uint64_t *out);
int parse_i64(const char *s, int64_t *out);
int parse_i32(const char *s, int32_t *out);

/* ---- keys ---- */

/* A key decoded with the store's key helpers. */
struct dkey {
    uint64_t id;             /* obj, cont: id; kvtag, kvtag_name: owner;
                              * cont_obj: container; region: object */
    uint64_t id2;            /* cont_obj: member object; pdc_server: the table's tag */
    const uint8_t *name;     /* name bytes (a prefix when hashed) */
    size_t nlen;
    size_t namekey_len;      /* bytes of the name key in the key */
    int hashed;              /* long name: prefix + hash */
    uint64_t hash;
    int32_t ts;              /* obj_name */
    uint32_t ndim;           /* region */
    uint64_t start[CKPT_REGION_MAXDIM], count[CKPT_REGION_MAXDIM];
};
/* 0 if key[0..klen) is a well-formed key of db, -1 if it is not, -2 if
 * db is a database this build does not know (shown as hex). */
int key_decode(struct dkey *d, int db, const void *key, size_t klen);
/* The value of an id_home entry: the record's home rank (4 bytes,
 * big-endian). 0 or -1 if it is not 4 bytes. */
int id_home_decode(const void *val, size_t len, uint32_t *home);
/* Bytes as a JSON hex string. */
json_object *hex_json(const void *data, size_t len);
/* The decoded key as a JSON object ({"hex": ...} when malformed). */
json_object *key_json(int db, const void *key, size_t klen);
/* A transfer region record (database pdc_server) as JSON. */
json_object *xfer_json(const struct ckpt_xfer_region *x);
/* The key as text for messages: `id 1000000001`, `name "obj3" ts 0`,
 * ...; `hex 00ab..` when malformed. */
void key_text(char *buf, size_t n, int db, const void *key, size_t klen);
/* errp(path, "DB: KEY: what") for the record of db at key k */
void err_key(const char *path, int db, const ckpt_val *k, const char *what);
void hex_text(char *buf, size_t n, const void *data, size_t len);
/* A name for messages: quoted, escaped, shortened. */
void name_text(char *buf, size_t n, const void *name, size_t len, int hashed);

/* ---- records as JSON ("friendly form", docs/TOOLS.md) ---- */
json_object *jnum_u64(uint64_t v);
json_object *jnum_i64(int64_t v);
json_object *jnum_u64_array(const uint64_t *v, size_t n); /* a JSON array of numbers */
json_object *obj_json(const struct ckpt_obj *o);
json_object *cont_json(const struct ckpt_cont *c);
json_object *kvtag_json(const struct ckpt_kvtag *t);
json_object *region_json(const struct ckpt_region *g);
/* A kvtag's value per its PDC type: number, string, array of numbers, or
 * NULL with *hex set when the bytes do not fit the type. */
json_object *tag_value_json(const struct ckpt_kvtag *t, int *raw_bytes);
/* Name of a PDC type code ("PDC_INT"); NULL if unknown. */
const char *pdc_type_name(int type);
/* A BULKI as a plain JSON object: string keys -> values (numbers, strings,
 * arrays, nested objects). NULL if it has non-string keys. */
json_object *bulki_plain_json(const bulki_map *m);
/* Why a record does not decode: "BULKI: ... at byte N" or "not a valid
 * object record (near byte N)". */
void record_error(char *buf, size_t n, int db, const void *data, size_t len);
/* Decode a record of db (obj, kvtag, cont, region) and return its friendly
 * JSON; NULL and a message in err when it does not decode. */
json_object *record_json(int db, const void *key, size_t klen, const void *data, size_t len,
                         char *err, size_t errn);

/* Print one JSON value on one line / pretty. */
void print_json_line(json_object *j);
/* print_json_line, then j is released */
void emit_json_line(json_object *j);
void print_json_pretty(json_object *j);
/* fflush stdout; prints the error and returns EXIT_FAIL if writing failed. */
int finish_stdout(void);

/* ISO 8601 UTC of a Unix time in ms: 2024-05-01T12:00:00.123Z */
void iso8601_ms(char *buf, size_t n, int64_t ms);

/* ---- subcommands: argc/argv start at the subcommand's name ---- */
int cmd_stat(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_find(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_copy(int argc, char **argv);
int cmd_import_legacy(int argc, char **argv);

void usage(FILE *f);
/* Every subcommand takes -h/--help: the usage on stdout, exit 0. */
#define HELP_OPT {"help", no_argument, 0, 'h'}
int cmd_help(void);
/* Bad usage: "ckpt-inspect: CMD: message", then the usage, on stderr;
 * returns EXIT_USAGE. */
int usage_err(const char *cmd, const char *fmt, ...) INSPECT_PRINTF(2, 3);
/* Operands after the options must be `want` (at least `want` when
 * at_least): EXIT_OK, or usage_err naming what is missing or extra. */
int check_operands(int argc, char **argv, int want, int at_least, const char *what);
/* The arguments of `stat` and `verify`: ROOT [--json] [-h]. -1 to go on
 * (*as_json set), else the exit status (help given, or bad usage). */
int parse_root_json(int argc, char **argv, int *as_json);

#endif
