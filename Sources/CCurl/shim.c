#include "shim.h"

#include <dlfcn.h>
#include <stdio.h>

// libcurl's functions, found with dlsym; the variadic ones keep their variadic type so each call
// passes its argument exactly as a direct call would.
static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
    CURLMcode (*multi_wakeup)(CURLM *);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
} curl;

const char *fs_curl_load(void) {
    static char failure[512];
    void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(failure, sizeof failure, "%s", dlerror());
        return failure;
    }
#define FIND(field, symbol)                                                                  \
    if (!(*(void **)&curl.field = dlsym(library, symbol))) {                                 \
        snprintf(failure, sizeof failure, "libcurl.so.4 has no %s", symbol);                 \
        return failure;                                                                      \
    }
    FIND(global_init, "curl_global_init")
    FIND(easy_init, "curl_easy_init")
    FIND(easy_setopt, "curl_easy_setopt")
    FIND(easy_getinfo, "curl_easy_getinfo")
    FIND(easy_cleanup, "curl_easy_cleanup")
    FIND(easy_reset, "curl_easy_reset")
    FIND(easy_strerror, "curl_easy_strerror")
    FIND(multi_init, "curl_multi_init")
    FIND(multi_setopt, "curl_multi_setopt")
    FIND(multi_add_handle, "curl_multi_add_handle")
    FIND(multi_remove_handle, "curl_multi_remove_handle")
    FIND(multi_perform, "curl_multi_perform")
    FIND(multi_poll, "curl_multi_poll")
    FIND(multi_wakeup, "curl_multi_wakeup")
    FIND(multi_cleanup, "curl_multi_cleanup")
    FIND(multi_info_read, "curl_multi_info_read")
    FIND(slist_append, "curl_slist_append")
    FIND(slist_free_all, "curl_slist_free_all")
#undef FIND
    if (curl.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return "curl_global_init failed";
    return NULL;
}

CURLcode fs_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl.easy_setopt(h, o, v); }
CURLcode fs_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) { return curl.easy_setopt(h, o, v); }
CURLcode fs_easy_setopt_string(CURL *h, CURLoption o, const char *v) { return curl.easy_setopt(h, o, v); }
CURLcode fs_easy_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl.easy_setopt(h, o, v); }
CURLcode fs_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl.easy_setopt(h, o, v); }
CURLcode fs_easy_setopt_write_callback(CURL *h, CURLoption o, curl_write_callback v) {
    return curl.easy_setopt(h, o, v);
}

CURLcode fs_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl.easy_getinfo(h, i, v); }
CURLcode fs_easy_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl.easy_getinfo(h, i, v); }
CURLcode fs_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v) { return curl.easy_getinfo(h, i, v); }
CURLcode fs_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) { return curl.easy_getinfo(h, i, v); }

CURL *fs_easy_init(void) { return curl.easy_init(); }
void fs_easy_cleanup(CURL *h) { curl.easy_cleanup(h); }
void fs_easy_reset(CURL *h) { curl.easy_reset(h); }
const char *fs_easy_strerror(CURLcode code) { return curl.easy_strerror(code); }

CURLM *fs_multi_init(void) { return curl.multi_init(); }
CURLMcode fs_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl.multi_setopt(m, o, v); }
CURLMcode fs_multi_add_handle(CURLM *m, CURL *h) { return curl.multi_add_handle(m, h); }
CURLMcode fs_multi_remove_handle(CURLM *m, CURL *h) { return curl.multi_remove_handle(m, h); }
CURLMcode fs_multi_perform(CURLM *m, int *running) { return curl.multi_perform(m, running); }
CURLMcode fs_multi_poll(CURLM *m, int timeout_ms) { return curl.multi_poll(m, NULL, 0, timeout_ms, NULL); }
CURLMcode fs_multi_wakeup(CURLM *m) { return curl.multi_wakeup(m); }
CURLMcode fs_multi_cleanup(CURLM *m) { return curl.multi_cleanup(m); }
CURLMsg *fs_multi_info_read(CURLM *m, int *queued) { return curl.multi_info_read(m, queued); }

struct curl_slist *fs_slist_append(struct curl_slist *list, const char *line) { return curl.slist_append(list, line); }
void fs_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }
