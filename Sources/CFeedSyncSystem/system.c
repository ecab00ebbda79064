#define _GNU_SOURCE
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <unistd.h>

#include "system.h"

// libxxhash.so.0's own entry points (xxhash.h: XXH3_64bits, and its streaming state, opaque here).
extern uint64_t XXH3_64bits(const void *input, size_t length);
extern void *XXH3_createState(void);
extern int XXH3_freeState(void *state);
extern int XXH3_64bits_reset(void *state);
extern int XXH3_64bits_update(void *state, const void *input, size_t length);
extern uint64_t XXH3_64bits_digest(const void *state);

int fs_open_tmpfile(int dirfd, unsigned int mode) { return openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode); }

int fs_link_open_file(int fd, int dirfd, const char *name) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return linkat(AT_FDCWD, path, dirfd, name, AT_SYMLINK_FOLLOW);
}

uint64_t fs_hash64(const void *bytes, size_t length) { return XXH3_64bits(bytes, length); }

void *fs_hash64_start(void) {
    void *state = XXH3_createState();
    if (state && XXH3_64bits_reset(state) != 0) {
        XXH3_freeState(state);
        return NULL;
    }
    return state;
}

void fs_hash64_add(void *state, const void *bytes, size_t length) { XXH3_64bits_update(state, bytes, length); }

uint64_t fs_hash64_digest(const void *state) { return XXH3_64bits_digest(state); }

void fs_hash64_free(void *state) { XXH3_freeState(state); }

int fs_sqlite_without_memory_statistics(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

int fs_sqlite_with_uri_names(void) { return sqlite3_config(SQLITE_CONFIG_URI, 1); }
