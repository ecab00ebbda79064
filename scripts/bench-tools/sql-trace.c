// P5's and P8's floor: what a feedsync view asks of SQLite, exactly. Preloaded (LD_PRELOAD), it
// stands in front of libsqlite3's sqlite3_step and notes each run of a statement (its text with
// the arguments bound, from its first step) and how many steps the view took of it: a view reads
// a page's rows and stops, so running its statements to their end would be other work. At exit it
// writes them, in the order they started, to the file SQL_TRACE_FILE names: the step count, 0x1f,
// the text, 0x1e. SQLite's own statements (FTS5's) pass through here too; the bench drops them.
// bench-tools/sql-replay.c runs such a file. scripts/bench builds both with gcc.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

enum { most = 8192 };
static struct { sqlite3_stmt *statement; char *sql; long steps; } runs[most];
static int count;

static void write_runs(void) {
    const char *path = getenv("SQL_TRACE_FILE");
    FILE *out = path ? fopen(path, "w") : NULL;
    if (!out) return;
    for (int i = 0; i < count; i++) fprintf(out, "%ld\x1f%s\x1e", runs[i].steps, runs[i].sql);
    fclose(out);
}

int sqlite3_step(sqlite3_stmt *statement) {
    static int (*step)(sqlite3_stmt *);
    if (!step) {
        step = (int (*)(sqlite3_stmt *))dlsym(RTLD_NEXT, "sqlite3_step");
        atexit(write_runs);
    }
    if (!sqlite3_stmt_busy(statement) && count < most) {  // the first step of a run
        char *sql = sqlite3_expanded_sql(statement);
        runs[count].statement = statement;
        runs[count].sql = sql ? sql : "";
        runs[count].steps = 0;
        count++;
    }
    for (int i = count - 1; i >= 0; i--) {  // the latest run of this statement
        if (runs[i].statement == statement) {
            runs[i].steps++;
            break;
        }
    }
    return step(statement);
}
