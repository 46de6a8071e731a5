/*
 * fs.c - filesystem helpers shared by the store, the hooks and the tools
 * (ckpt_fs.h).
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ckpt_fs.h"

int ckpt_fs_mkdirs(const char *path)
{
    char buf[4096];
    struct stat sb;
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return ENAMETOOLONG;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                return errno;
            buf[i] = c;
        }
    }
    if (stat(path, &sb) != 0)
        return errno;
    return S_ISDIR(sb.st_mode) ? 0 : ENOTDIR;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    return flag == FTW_DP ? rmdir(p) : unlink(p);
}

int ckpt_fs_rmtree(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return errno == ENOENT ? 0 : errno;
    if (!S_ISDIR(sb.st_mode))
        return unlink(path) == 0 ? 0 : errno;
    return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : (errno ? errno : EIO);
}

int ckpt_fs_fsync(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int rc = 0;
    if (fd < 0)
        return errno;
    if (fsync(fd) != 0)
        rc = errno;
    close(fd);
    return rc;
}
