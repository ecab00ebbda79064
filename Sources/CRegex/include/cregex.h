// RE2 for Swift: a rule's or view's pattern compiled once and matched against an item's text.
// RE2 matches in time linear in the text whatever the pattern (no backtracking), and its memory is
// capped: a pattern from the user runs over text from strangers (docs/architecture.md, Rules).
#ifndef FEEDSYNC_CREGEX_H
#define FEEDSYNC_CREGEX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fs_regex fs_regex;

/// Compiles `pattern` (RE2's syntax, UTF-8), case-insensitive when `caseless`; NULL when RE2
/// refuses it, with RE2's reason copied into `error` (at most `error_size` bytes, terminated).
fs_regex *fs_regex_compile(const char *pattern, size_t length, int caseless, char *error, size_t error_size);

/// 1 when the pattern matches anywhere in `text`, else 0.
int fs_regex_matches(const fs_regex *regex, const char *text, size_t length);

void fs_regex_free(fs_regex *regex);

typedef struct fs_regex_set fs_regex_set;

/// Compiles `count` patterns into one set matched in a single pass over a text (RE2::Set), each
/// case-insensitive unless it says `(?-i)`; NULL when RE2 refuses one of them.
fs_regex_set *fs_regex_set_compile(const char *const *patterns, const size_t *lengths, int count);

/// Sets `matched[i]` to 1 for each pattern i found anywhere in `text`, 0 for the others (`count`
/// of them); 0 on success, -1 when RE2 could not tell (its memory cap reached): ask each alone.
int fs_regex_set_match(const fs_regex_set *set, const char *text, size_t length, unsigned char *matched, int count);

void fs_regex_set_free(fs_regex_set *set);

#ifdef __cplusplus
}
#endif

#endif
