/*
 * shim_log.h - the record format of crash_shim.c's log (the power-loss
 * test's recording of a workload's writes and syncs).
 */
#ifndef PDC_CKPT_SHIM_LOG_H
#define PDC_CKPT_SHIM_LOG_H

#include <stdint.h>

#define SHIM_MAGIC 0x53484d31u /* "SHM1" */

enum shim_type {
    SHIM_FILE = 1,       /* file id, payload: its path below the directory (NUL-terminated) */
    SHIM_WRITE = 2,      /* file, off, payload: the bytes written there */
    SHIM_TRUNC = 3,      /* file, off: the new size */
    SHIM_SYNC_BEGIN = 4, /* file, off: the thread's id */
    SHIM_SYNC_END = 5,   /* file, off: the thread's id if the sync returned 0, else 0 */
    SHIM_MARK = 6,       /* off: a value, payload: text (the workload's marker) */
    SHIM_WRITE_DURABLE = 7, /* as SHIM_WRITE, through an O_DSYNC/O_SYNC descriptor:
                            * durable when it returned (that range only) */
    SHIM_READ = 8          /* pread of a tracked file: file, off, len (no payload) */
};

struct shim_rec {
    uint32_t magic;
    uint32_t type;
    uint32_t file;
    uint64_t off;
    uint64_t len; /* payload bytes that follow */
} __attribute__((packed));

#endif
