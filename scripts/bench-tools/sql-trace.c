// P5's and P8's floor: what a feedsync view asks of SQLite, exactly. Preloaded (LD_PRELOAD), it
// stands in front of libsqlite3's sqlite3_step and notes each run of a statement (its text with
// the arguments bound, from its first step) and how many steps the view took of it: a view reads
// a page's rows and stops, so running its statements to their end would be other work. At exit it
// writes them, in the order they started, to the file SQL_TRACE_FILE names: the step count, 0x1f,
// the text, 0x1e; and beside it, in PATH.times, when each run started, so that P14 can keep the
// statements a key caused. SQLite's own statements (FTS5's) pass through here too; the bench drops
// them. bench-tools/sql-replay.c runs such a file. scripts/bench builds both with gcc.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { most = 65536 };
static struct { sqlite3_stmt *statement; char *sql; long steps; double started; } runs[most];
static int count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;  // a pool's connections step on many threads

static void write_runs(void) {
    const char *path = getenv("SQL_TRACE_FILE");
    FILE *out = path ? fopen(path, "w") : NULL;
    if (!out) return;
    for (int i = 0; i < count; i++) fprintf(out, "%ld\x1f%s\x1e", runs[i].steps, runs[i].sql);
    fclose(out);
    // Beside it, PATH.times: when each run started (CLOCK_MONOTONIC, seconds), a line each.
    char times[4096];
    snprintf(times, sizeof times, "%s.times", path);
    if (!(out = fopen(times, "w"))) return;
    for (int i = 0; i < count; i++) fprintf(out, "%.6f\n", runs[i].started);
    fclose(out);
}

int sqlite3_step(sqlite3_stmt *statement) {
    static int (*step)(sqlite3_stmt *);
    if (!step) {
        step = (int (*)(sqlite3_stmt *))dlsym(RTLD_NEXT, "sqlite3_step");
        atexit(write_runs);
    }
    pthread_mutex_lock(&lock);
    if (!sqlite3_stmt_busy(statement) && count < most) {  // the first step of a run
        char *sql = sqlite3_expanded_sql(statement);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        runs[count].statement = statement;
        runs[count].sql = sql ? sql : "";
        runs[count].steps = 0;
        runs[count].started = now.tv_sec + now.tv_nsec / 1e9;
        count++;
    }
    for (int i = count - 1; i >= 0; i--) {  // the latest run of this statement
        if (runs[i].statement == statement) {
            runs[i].steps++;
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return step(statement);
}
