/*
 * tagidx_delta.h - format 3's tag-index delta (kvtag_delta), shared by
 * its writer (tagidx_delta.c: the log, its chunks, the scan at open) and
 * its readers (tagidx.c: the merge and the reads' overlay).
 *
 * A commit does not write kvtag_name. It logs each tag-index put and delete
 * (st->dbuf) and appends them to kvtag_delta as chunks: key a sequence
 * number (8 bytes BE, ascending), value
 *     count (4 bytes BE), then count entries: op (1 byte: 1 put, 2 delete),
 *     key length (2 bytes BE, 9 .. CKPT_NAMEKEY_MAX + 8), the logical key.
 * Appending touches only kvtag_delta's last pages, where writing
 * kvtag_name directly rewrote one leaf per tag name per commit: at 10K
 * objects x 100 kvtags about 120 pages a commit, all of which close had to
 * write. The background thread merges the oldest chunks into kvtag_name in
 * a transaction of its own (ckpt_tagidx_merge), sorted, so each name's leaf
 * is rewritten once per merge rather than once per commit. A read of the
 * tag index overlays the chunks not yet merged (struct ckpt_tagidx_view),
 * so every reader sees exactly the logical index of format 2.
 */
#ifndef PDC_CKPT_TAGIDX_DELTA_H
#define PDC_CKPT_TAGIDX_DELTA_H

#include <string.h>

#include "store_int.h"

#define DELTA_CHUNK_MAX ((size_t)32 << 10)
#define DELTA_KEY_MIN 9u
#define DELTA_KEY_MAX (CKPT_NAMEKEY_MAX + 8u)

/* One delta entry. */
struct dent {
    const uint8_t *key;
    uint32_t seq; /* position in the delta: later wins */
    uint16_t klen;
    uint8_t op;
};

/* byte order, a prefix first */
static inline int ckpt_tagidx_key_cmp(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
    int c = memcmp(a, b, la < lb ? la : lb);
    return c ? c : (la > lb) - (la < lb);
}

/* Check a chunk and append its entries to *ents (grown as needed; ents
 * NULL: only check them); *n is the count so far. 0, ENOMEM, or
 * MDB_CORRUPTED with where = what is wrong. */
int ckpt_delta_chunk_entries(int csum, struct dent **ents, size_t *n, size_t *cap,
                             const MDB_val *key, const MDB_val *val, char *where, size_t wlen);
/* Sort by key, then keep only each key's last entry; returns the count. */
size_t ckpt_delta_collapse(struct dent *e, size_t n);

#endif
