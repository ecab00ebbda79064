#define _GNU_SOURCE
#include <sqlite3.h>
#include <unistd.h>

#include "system.h"

int fs_syncfs(int fd) { return syncfs(fd); }

int fs_sqlite_without_memory_statistics(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

int fs_sqlite_with_uri_names(void) { return sqlite3_config(SQLITE_CONFIG_URI, 1); }
