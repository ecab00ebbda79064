#include "cregex.h"

#include <re2/re2.h>

#include <cstring>
#include <new>

struct fs_regex {
    re2::RE2 re;
    fs_regex(re2::StringPiece pattern, const re2::RE2::Options &options) : re(pattern, options) {}
};

fs_regex *fs_regex_compile(const char *pattern, size_t length, int caseless, char *error, size_t error_size) {
    re2::RE2::Options options;
    options.set_case_sensitive(!caseless);
    options.set_log_errors(false);
    options.set_never_capture(true);
    // The DFA's memory: past it RE2 falls back to its NFA, slower but still linear.
    options.set_max_mem(8 << 20);
    auto *regex = new (std::nothrow) fs_regex(re2::StringPiece(pattern, length), options);
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
