#ifndef FEEDSYNC_SYSTEM_H
#define FEEDSYNC_SYSTEM_H

// C calls Swift cannot make: glibc's that its Glibc module leaves out (they need _GNU_SOURCE),
// and SQLite's variadic sqlite3_config.

/// syncfs(2): makes everything written to the filesystem holding `fd` durable; 0 or -1 and errno.
int fs_syncfs(int fd);

/// sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0): SQLite stops counting its memory, which takes a
/// process-wide mutex on every allocation. Works only before SQLite's first use in the process
/// (SQLITE_MISUSE after). Returns SQLite's result code.
int fs_sqlite_without_memory_statistics(void);

/// sqlite3_config(SQLITE_CONFIG_URI, 1): file names starting with `file:` are URIs, so a store
/// on a read-only medium can be opened with `immutable=1`. Same rule as above.
int fs_sqlite_with_uri_names(void);

#endif
