// The floor of P2: the fastest its items can go into feedsync's store through SQLite. The rows
// sfeed made of the document (its TSV), each stored as feedsync stores an item (title, link, key,
// summary, content) and indexed for search in the same FTS5 table (the migrations' schema) with
// the same text (the title; the content's plain text, its first 32 768 characters), 250 items a
// transaction as a pull of a long document commits them (Sync.partSize: the items, then their
// index rows), WAL, synchronous=NORMAL, one prepared statement per table. No XML is read and the
// plain text is made by dropping tags, so this is less work than a pull: what SQLite alone needs
// for what P2 stores. scripts/bench runs it beside P2 and checks that both store the same items
// and index the same words.
//
//     sqlite-ceiling-p2 DATABASE TSV [SETTINGS [AFTER]]
//
// The schema must already be applied, with feed 1. SETTINGS is SQL run first (FTS5's and SQLite's
// settings, for the grid of BENCHMARKS.md), AFTER is SQL run once all is stored.
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(int rc, sqlite3 *db) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "sqlite: %s\n", sqlite3_errmsg(db));
        exit(1);
    }
}

// sfeed escapes \n, \t and \\ in its content field: undone in place.
static size_t unescape(char *text) {
    size_t out = 0;
    for (size_t in = 0; text[in]; in++) {
        if (text[in] == '\\' && text[in + 1]) {
            char next = text[++in];
            text[out++] = next == 'n' ? '\n' : next == 't' ? '\t' : next;
        } else {
            text[out++] = text[in];
        }
    }
    text[out] = 0;
    return out;
}

// Tags dropped and runs of whitespace made one space; past SearchText.bodyCharacters characters
// (UTF-8 continuation bytes are not characters), cut at the last space before them, as feedsync cuts.
static size_t plain(const char *html, char *out) {
    const size_t limit = 32 * 1024;
    size_t n = 0, characters = 0;
    int inTag = 0, space = 0;
    for (const char *c = html; *c; c++) {
        if (*c == '<') { inTag = 1; space = n > 0; continue; }
        if (inTag) { if (*c == '>') inTag = 0; continue; }
        if (*c == ' ' || *c == '\n' || *c == '\t' || *c == '\r') { space = n > 0; continue; }
        if (space) { out[n++] = ' '; characters++; }
        space = 0;
        if ((*c & 0xC0) != 0x80 && ++characters > limit) {
            while (n > 0 && out[n - 1] != ' ') n--;
            if (n > 0) n--;
            break;
        }
        out[n++] = *c;
    }
    out[n] = 0;
    return n;
}

typedef struct {
    char *line;
    const char *key, *title, *link, *content, *text;
    size_t contentLength, textLength;
} Item;

int main(int argc, char **argv) {
    if (argc < 3 || argc > 5) return 64;
    FILE *tsv = fopen(argv[2], "r");
    if (!tsv) return 66;
    sqlite3 *db;
    check(sqlite3_open(argv[1], &db), db);
    check(sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL", 0, 0, 0), db);
    if (argc > 3) check(sqlite3_exec(db, argv[3], 0, 0, 0), db);
    sqlite3_stmt *insert, *index;
    check(sqlite3_prepare_v2(db,
        "INSERT INTO item (feed_id, key, band, seq, title, link, summary, content, stored_at) "
        "VALUES (1, ?, 0, ?, ?, ?, ?, ?, 1700000000.0)", -1, &insert, 0), db);
    check(sqlite3_prepare_v2(db, "INSERT INTO item_search (rowid, title, body) VALUES (?, ?, ?)", -1, &index, 0),
          db);
    enum { part = 250 };
    Item items[part];
    long seq = 0;
    for (int done = 0; !done;) {
        // A part's items are read first, then stored, then indexed: as feedsync commits a part.
        int count = 0;
        size_t capacity = 0;
        char *line = NULL;
        while (count < part) {
            if (getline(&line, &capacity, tsv) <= 0) { done = 1; free(line); break; }
            // timestamp, title, link, content, content-type, id, ...
            char *field[6] = {0};
            char *rest = line;
            for (int i = 0; i < 6 && rest; i++) {
                field[i] = rest;
                rest = strchr(rest, '\t');
                if (rest) *rest++ = 0;
            }
            if (!field[3]) continue;
            Item *item = &items[count++];
            item->line = line;
            item->contentLength = unescape(field[3]);
            char *text = malloc(item->contentLength + 1);
            item->textLength = plain(field[3], text);
            item->text = text;
            item->key = field[5] && *field[5] ? field[5] : field[2];
            item->title = field[1];
            item->link = field[2];
            item->content = field[3];
            line = NULL;
            capacity = 0;
        }
        if (count == 0) break;
        check(sqlite3_exec(db, "BEGIN", 0, 0, 0), db);
        sqlite3_int64 first = 0;
        for (int i = 0; i < count; i++) {
            Item *item = &items[i];
            sqlite3_bind_text(insert, 1, item->key, -1, SQLITE_STATIC);
            sqlite3_bind_int64(insert, 2, seq++);
            sqlite3_bind_text(insert, 3, item->title, -1, SQLITE_STATIC);
            sqlite3_bind_text(insert, 4, item->link, -1, SQLITE_STATIC);
            sqlite3_bind_text(insert, 5, item->text, item->textLength < 280 ? (int)item->textLength : 280,
                              SQLITE_STATIC);
            sqlite3_bind_text(insert, 6, item->content, (int)item->contentLength, SQLITE_STATIC);
            check(sqlite3_step(insert), db);
            sqlite3_reset(insert);
            if (i == 0) first = sqlite3_last_insert_rowid(db);
        }
        for (int i = 0; i < count; i++) {
            sqlite3_bind_int64(index, 1, first + i);
            sqlite3_bind_text(index, 2, items[i].title, -1, SQLITE_STATIC);
            sqlite3_bind_text(index, 3, items[i].text, (int)items[i].textLength, SQLITE_STATIC);
            check(sqlite3_step(index), db);
            sqlite3_reset(index);
            free((void *)items[i].text);
            free(items[i].line);
        }
        check(sqlite3_exec(db, "COMMIT", 0, 0, 0), db);
    }
    if (argc > 4) check(sqlite3_exec(db, argv[4], 0, 0, 0), db);
    sqlite3_finalize(insert);
    sqlite3_finalize(index);
    check(sqlite3_close(db), db);
    printf("%ld items\n", seq);
    return 0;
}
