#include "cregex.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <cstring>
#include <new>
#include <vector>

struct fs_regex {
    re2::RE2 re;
    fs_regex(re2::StringPiece pattern, const re2::RE2::Options &options) : re(pattern, options) {}
};

static re2::RE2::Options options_for(bool caseless) {
    re2::RE2::Options options;
    options.set_case_sensitive(!caseless);
    options.set_log_errors(false);
    options.set_never_capture(true);
    // The DFA's memory: past it RE2 falls back to its NFA, slower but still linear.
    options.set_max_mem(8 << 20);
    return options;
}

fs_regex *fs_regex_compile(const char *pattern, size_t length, int caseless, char *error, size_t error_size) {
    auto *regex = new (std::nothrow) fs_regex(re2::StringPiece(pattern, length), options_for(caseless != 0));
    if (regex == nullptr) {
        if (error_size > 0) std::strncpy(error, "out of memory", error_size - 1), error[error_size - 1] = 0;
        return nullptr;
    }
    if (!regex->re.ok()) {
        if (error_size > 0) {
            std::strncpy(error, regex->re.error().c_str(), error_size - 1);
            error[error_size - 1] = 0;
        }
        delete regex;
        return nullptr;
    }
    return regex;
}

int fs_regex_matches(const fs_regex *regex, const char *text, size_t length) {
    return re2::RE2::PartialMatch(re2::StringPiece(text, length), regex->re) ? 1 : 0;
}

void fs_regex_free(fs_regex *regex) { delete regex; }

struct fs_regex_set {
    re2::RE2::Set set;
    fs_regex_set() : set(options_for(true), re2::RE2::UNANCHORED) {}
};

fs_regex_set *fs_regex_set_compile(const char *const *patterns, const size_t *lengths, int count) {
    auto *made = new (std::nothrow) fs_regex_set();
    if (made == nullptr) return nullptr;
    for (int i = 0; i < count; i++) {
        if (made->set.Add(re2::StringPiece(patterns[i], lengths[i]), nullptr) != i) {
            delete made;
            return nullptr;
        }
    }
    if (!made->set.Compile()) {
        delete made;
        return nullptr;
    }
    return made;
}

int fs_regex_set_match(const fs_regex_set *set, const char *text, size_t length, unsigned char *matched, int count) {
    std::vector<int> found;
    re2::RE2::Set::ErrorInfo error;
    std::memset(matched, 0, count);
    if (!set->set.Match(re2::StringPiece(text, length), &found, &error)) {
        return error.kind == re2::RE2::Set::kNoError ? 0 : -1;
    }
    for (int index : found) {
        if (index >= 0 && index < count) matched[index] = 1;
    }
    return 0;
}

void fs_regex_set_free(fs_regex_set *set) { delete set; }
