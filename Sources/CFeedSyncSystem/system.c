#define _GNU_SOURCE
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <unistd.h>

#include "system.h"

// libxxhash.so.0's own entry point (xxhash.h, XXH3_64bits).
extern uint64_t XXH3_64bits(const void *input, size_t length);

int fs_open_tmpfile(int dirfd, unsigned int mode) { return openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode); }

int fs_link_open_file(int fd, int dirfd, const char *name) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW);
}

uint64_t fs_hash64(const void *bytes, size_t length) { return XXH3_64bits(bytes, length); }

int fs_sqlite_without_memory_statistics(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

int fs_sqlite_with_uri_names(void) { return sqlite3_config(SQLITE_CONFIG_URI, 1); }
