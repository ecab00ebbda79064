// P5's and P8's floor, its second part: opens the store (argv[1]) as feedsync does, reads its
// schema, and runs the statements a file (argv[2], written by bench-tools/sql-trace.c) holds, each
// stepped as many times as the view stepped it. With no file, only the open: scripts/bench takes
// the difference of the two runs as the view's own SQLite time.
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    sqlite3 *database;
    if (argc < 2 || sqlite3_open_v2(argv[1], &database, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
        sqlite3_exec(database, "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL) != SQLITE_OK)
        return 1;
    if (argc > 2) {
        FILE *in = fopen(argv[2], "r");
        if (!in) return 1;
        // The whole file (a terminal session's statements run to megabytes).
        if (fseek(in, 0, SEEK_END) != 0) return 1;
        long size = ftell(in);
        rewind(in);
        char *text = size >= 0 ? malloc((size_t)size + 1) : NULL;
        if (!text) return 1;
        size_t length = fread(text, 1, (size_t)size, in);
        text[length] = 0;
        fclose(in);
        for (char *run = text; *run; ) {
            char *separator = strchr(run, 0x1f), *end = strchr(run, 0x1e);
            if (!separator || !end) return 1;
            *separator = 0;
            *end = 0;
            long steps = atol(run);
            sqlite3_stmt *statement;
            if (sqlite3_prepare_v2(database, separator + 1, -1, &statement, NULL) != SQLITE_OK) {
                fprintf(stderr, "%s: %s\n", sqlite3_errmsg(database), separator + 1);
                return 1;
            }
            for (long step = 0; step < steps && sqlite3_step(statement) == SQLITE_ROW; step++) {}
            sqlite3_finalize(statement);
            run = end + 1;
        }
    }
    return sqlite3_close(database) == SQLITE_OK ? 0 : 1;
}
