#define _GNU_SOURCE
#include <unistd.h>

#include "system.h"

int fs_syncfs(int fd) { return syncfs(fd); }
