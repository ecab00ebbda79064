// The fastest the P4 rows can go into feedsync's schema through SQLite: one prepared statement
// reused for every row, one transaction, WAL, synchronous=NORMAL, nothing else. scripts/bench
// compiles and runs it to show what "350 k items/s" asks of SQLite on the machine at hand.
//
//     sqlite-ceiling DATABASE ITEMS      (the schema must already be applied, with feed 1)
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void check(int rc, sqlite3 *db) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE) {
        fprintf(stderr, "sqlite: %s\n", sqlite3_errmsg(db));
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) return 64;
    long items = atol(argv[2]);
    sqlite3 *db;
    check(sqlite3_open(argv[1], &db), db);
    check(sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; BEGIN", 0, 0, 0), db);
    sqlite3_stmt *insert;
    check(sqlite3_prepare_v2(db,
        "INSERT INTO item (feed_id, key, band, seq, title, link, published, summary, stored_at) "
        "VALUES (1, ?, 0, ?, ?, ?, '2024-05-07T09:30:00Z', ?, 1700000000.0)", -1, &insert, 0), db);
    char key[32], title[32], link[64], summary[64];
    for (long seq = 0, n = items; n > 0; seq++, n--) {
        int k = snprintf(key, sizeof key, "item-%ld", n);
        int t = snprintf(title, sizeof title, "Item %ld", n);
        int l = snprintf(link, sizeof link, "https://example.com/items/%ld", n);
        int s = snprintf(summary, sizeof summary, "Summary of item %ld.", n);
        sqlite3_bind_text(insert, 1, key, k, SQLITE_STATIC);
        sqlite3_bind_int64(insert, 2, seq);
        sqlite3_bind_text(insert, 3, title, t, SQLITE_STATIC);
        sqlite3_bind_text(insert, 4, link, l, SQLITE_STATIC);
        sqlite3_bind_text(insert, 5, summary, s, SQLITE_STATIC);
        check(sqlite3_step(insert), db);
        sqlite3_reset(insert);
    }
    sqlite3_finalize(insert);
    check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db);
    check(sqlite3_close(db), db);
    return 0;
}
