#ifndef FEEDSYNC_SYSTEM_H
#define FEEDSYNC_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

// C calls Swift cannot make: glibc's that its Glibc module leaves out (they need _GNU_SOURCE),
// SQLite's variadic sqlite3_config, and xxHash (Debian's libxxhash0, which apt itself needs; it
// ships no header without the -dev package, so its one prototype is declared in system.c).

/// openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode): a file with no name in the folder
/// `dirfd`, which `fs_link_open_file` names once it is whole. -1 and errno (EOPNOTSUPP, EISDIR or
/// EINVAL where the file system has no such files).
int fs_open_tmpfile(int dirfd, unsigned int mode);

/// Gives the open file `fd` (from `fs_open_tmpfile`) the name `name` in the folder `dirfd`:
/// linkat through /proc/self/fd, which needs no privilege (AT_EMPTY_PATH does). 0, or -1 and
/// errno (EEXIST when the name is taken).
int fs_link_open_file(int fd, int dirfd, const char *name);

/// XXH3's 64-bit hash of `length` bytes: a picture's checksum, about 30 GB/s.
uint64_t fs_hash64(const void *bytes, size_t length);

/// The same hash of bytes that arrive in pieces: a state to `fs_hash64_add` them to (NULL when
/// out of memory), whose `fs_hash64_digest` equals `fs_hash64` of them all; `fs_hash64_free` ends it.
void *fs_hash64_start(void);
void fs_hash64_add(void *state, const void *bytes, size_t length);
uint64_t fs_hash64_digest(const void *state);
void fs_hash64_free(void *state);

/// sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0): SQLite stops counting its memory, which takes a
/// process-wide mutex on every allocation. Works only before SQLite's first use in the process
/// (SQLITE_MISUSE after). Returns SQLite's result code.
int fs_sqlite_without_memory_statistics(void);

/// sqlite3_config(SQLITE_CONFIG_URI, 1): file names starting with `file:` are URIs, so a store
/// on a read-only medium can be opened with `immutable=1`. Same rule as above.
int fs_sqlite_with_uri_names(void);

/// Takes the terminal `fd` for a full-screen program: saves its mode, makes it raw, writes `enter`,
/// and holds standard error in an unnamed file. From then on the terminal is given back whole
/// (`leave` written, the mode restored, standard error replayed) however the process ends: by
/// fs_terminal_leave, by SIGTERM, SIGHUP, SIGINT or SIGQUIT, or a crash (SIGSEGV, SIGBUS, SIGFPE,
/// SIGILL, SIGTRAP, SIGABRT), each then ending the process as it would have (its earlier handler
/// runs). SIGTSTP gives it back and stops; continued, the terminal is taken again and `c` written
/// to `wake_fd`; SIGWINCH writes `w` there. 0, or -1 and errno.
int fs_terminal_enter(int fd, const char *enter, const char *leave, int wake_fd);

/// Gives the terminal back now and removes the handlers.
void fs_terminal_leave(void);

/// Gives the terminal back for a while (a browser, a pager) and takes it again.
void fs_terminal_suspend(void);
void fs_terminal_resume(void);

#endif
