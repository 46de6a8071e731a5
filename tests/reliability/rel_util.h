/*
 * rel_util.h - helpers of the reliability tests (tests/reliability/):
 *
 *  - a deterministic data set written through the hooks (containers,
 *    objects, kvtags, regions, memberships) and a checker that says how
 *    much of it a store holds, record by record;
 *  - damage done to a store on disk, as it happens in the field: a
 *    truncated data.mdb, a bit flipped inside a stored record, a missing
 *    lock file or rank directory, a meta record of a newer format version,
 *    another program's LMDB file, an interrupted creation;
 *  - running a function in a forked child, so that a crash (SIGSEGV,
 *    SIGBUS, an abort) is reported as what it is instead of killing the
 *    test, and running a program (ckpt-inspect) with its output captured.
 *
 * Nothing here uses cmocka's assertions (they must not run in a forked
 * child): functions return 0 / -1 and say why in `why`.
 */
#ifndef PDC_CKPT_REL_UTIL_H
#define PDC_CKPT_REL_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ckpt_hooks.h"
#include "test_util.h"

/* ---- the data set ---- */

/* Object i of rank r: name "rel-obj-<r>-<i>" (time step 0), data location
 * "REL-LOC-<r>-<i>" (the string the bit-flip damage searches for: it occurs
 * in the object record only, never in a key), one kvtag "rel-tag" whose
 * value is the string "rel-val-<r>-<i>", one region (start i, count 1) and
 * a membership in the rank's container "rel-cont-<r>". */
#define REL_TAG "rel-tag"
void rel_obj_name(char *buf, size_t n, int rank, long i);
void rel_obj_loc(char *buf, size_t n, int rank, long i);
void rel_tag_val(char *buf, size_t n, int rank, long i);

/* The rank's container (created on first use) and objects first..first+n-1,
 * each as 4 hook calls (object, kvtag, region, membership). ids[i] (if not
 * NULL, indexed from `first`) receives the object ids. A hook error from a
 * failed commit (CKPT_E_NOSPACE, CKPT_E_IO: the mutation is staged anyway)
 * does not stop it: every object is written and the first such error is
 * returned at the end. Any other error stops it and is returned (the
 * message is in ckpt_errmsg()). */
int rel_write_objs(ckpt_hooks *h, int rank, long first, long n, uint64_t *cont_id, uint64_t *ids);
/* A store at root of nranks ranks, each opened with opts_for(root, rank)
 * and holding objects 0..n-1 of rel_write_objs (their ids into
 * ids[rank * n + i]), then closed. 0, or -1 said on stderr. */
int rel_write_store(const char *root, int nranks, long n,
                    struct ckpt_hooks_opts (*opts_for)(const char *root, int rank), uint64_t *ids);

/* What a store holds of objects 0..n-1 of rank r (map lookups by name, then
 * the kvtag, region and membership of each). */
struct rel_census {
    long objs;          /* objects whose record and every companion are there and right */
    long missing;       /* objects not there at all (name unknown) */
    long bad;           /* objects there but wrong or not decodable */
    int first_bad_rc;   /* the error of the first bad one */
    long first_bad;     /* its index, -1 if none */
    long prefix;        /* leading objects present (0..prefix-1 all there) */
    int gap;            /* 1 if an object is present after a missing one */
    char why[512];      /* first problem */
};
int rel_census(struct rel_census *c, ckpt_hooks *h, int rank, long n);

/* ---- damage ---- */

long rel_file_size(const char *path);
/* Offsets of every occurrence of needle in the file (at most max). */
int rel_find_all(const char *path, const void *needle, size_t nlen, long *offs, int max);
/* Flip bit `bit` of the byte at off. -1 on I/O errors. */
int rel_flip_bit(const char *path, long off, int bit);
/* Flip bit 0 of the NUL that ends string s inside a record, in every copy
 * of the record in root/rank-<r>/data.mdb (stale copies in free pages
 * included, so the live one is hit whichever it is). The string's bytes
 * stay, so the damage is inside the BULKI record, not in LMDB's B-tree.
 * Use a string that occurs in record values only (rel_obj_loc,
 * rel_tag_val), never in a key. Returns the number of copies flipped (0:
 * not found), -1 on I/O errors. */
int rel_flip_after(const char *root, int rank, const char *s, char *why, size_t n);
/* Seeded random page damage of root/rank-<r>/data.mdb (LMDB pages of
 * REL_PAGE bytes): REL_DAMAGE_GARBAGE overwrites one whole page, chosen by
 * the seed among all pages of the file (meta pages included), with seeded
 * garbage; REL_DAMAGE_HEADER flips 3 seeded bits in the 16-byte header of
 * a seeded page (page number, flags, lower/upper bounds). The same seed
 * damages the same way. Returns the page number, -1 on I/O errors. */
#define REL_PAGE 4096
enum { REL_DAMAGE_GARBAGE = 0, REL_DAMAGE_HEADER = 1 };
long rel_damage_page(const char *root, int rank, int mode, uint64_t seed, char *why, size_t n);
/* The number of the leaf page of database `db` of ROOT/rank-RANK that
 * holds the first key at or after key (LMDB's own search, read-only), or
 * -1 with why. */
long rel_leaf_page(const char *root, int rank, const char *db, const void *key, size_t klen,
                   char *why, size_t n);
/* The number of the page of DUPSORT database `db` of ROOT/rank-RANK that
 * holds item under key (MDB_GET_BOTH), 0 if the item sits in a sub-page
 * of the key's own leaf, or -1 with why. */
long rel_dup_page(const char *root, int rank, const char *db, const void *key, size_t klen,
                  const void *item, size_t ilen, char *why, size_t n);
/* Replace the meta record of root/rank-<r> (raw LMDB) with one of format
 * version `version` (magic, version and a field this build does not know,
 * as a newer pdc-ckpt would write). */
int rel_set_meta_version(const char *root, int rank, uint32_t version, char *why, size_t n);
/* Make root/rank-<r> another program's LMDB environment (named databases
 * "users" and "sessions" with a few entries; with meta_db, one called
 * "meta" too, holding no pdc-ckpt record). */
int rel_make_foreign(const char *root, int rank, int meta_db, char *why, size_t n);
/* An LMDB environment with nothing in it: what a writer killed between
 * LMDB's environment setup and the store's first commit leaves. */
int rel_make_empty_env(const char *root, int rank, char *why, size_t n);

/* ---- processes and files ---- */

/* write(2) all n bytes (0, or -1); read(2) up to n bytes, until end of
 * file or an error (the count read). Both retry on EINTR. */
int rel_write_all(int fd, const void *p, size_t n);
size_t rel_read_all(int fd, void *p, size_t n);

/* Result of rel_in_child. */
struct rel_outcome {
    int crashed;        /* the child died of signal `sig` or exited abnormally */
    int sig;
    int status;         /* its exit status when it did not crash */
    int rc;             /* what fn returned */
    long v[4];          /* values fn reported */
    char msg[1024];     /* what fn wrote there (an error message) */
};
typedef int (*rel_fn)(void *arg, struct rel_outcome *out);
/* Run fn(arg, out) in a forked child and bring its outcome back. */
void rel_in_child(struct rel_outcome *out, rel_fn fn, void *arg);
/* rel_census into *c, reported in out: v = {complete objects, missing,
 * bad}, msg = its first problem. Returns rel_census's result. */
int rel_census_out(struct rel_outcome *out, struct rel_census *c, ckpt_hooks *h, int rank, long n);
/* rel_in_child's two halves, for a child that does something else (an
 * exec): rel_fork_piped zeroes out, flushes stdio, makes the pipe p (the
 * child writes p[1]) and forks: the child's pid, 0 in the child, or -1
 * with out->crashed and out->msg set (no descriptor left open).
 * rel_collect, in the parent: reads the child's outcome from p[0] into out,
 * closes both ends, waits for pid (its wait status into *status); returns
 * the bytes read. */
pid_t rel_fork_piped(struct rel_outcome *out, int p[2]);
size_t rel_collect(struct rel_outcome *out, pid_t pid, int p[2], int *status);

/* Run argv[0] with argv (no shell), stdin from /dev/null, stdout and stderr
 * both into out (NUL-terminated, cut at cap). Returns the exit status, or
 * 128 + signal. */
int rel_run(char *const argv[], char *out, size_t cap);
/* The same as user (and group) uid, when uid >= 0 (root only); 126 when
 * the privileges cannot be dropped. */
int rel_run_as(long uid, char *const argv[], char *out, size_t cap);
/* rel_run_as with argv given as prog, args..., NULL (at most 30). */
int rel_run_va(long uid, char *out, size_t cap, const char *prog, va_list args);

/* cp -a src dst (dst must not exist). 0 or -1. (rm -rf, mkdtemp: test_util.h) */
int rel_copytree(const char *src, const char *dst);

/* The info of rank 0 of the store at root, read-only: 0 or a CKPT_E_* code. */
int rel_info_ro(struct ckpt_store_info *info, const char *root);

#endif
