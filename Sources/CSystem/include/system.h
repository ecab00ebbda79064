#ifndef FEEDSYNC_SYSTEM_H
#define FEEDSYNC_SYSTEM_H

// glibc calls that Swift's Glibc module leaves out because they need _GNU_SOURCE.

/// syncfs(2): makes everything written to the filesystem holding `fd` durable; 0 or -1 and errno.
int fs_syncfs(int fd);

#endif
