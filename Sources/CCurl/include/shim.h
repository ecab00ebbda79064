// libcurl for Swift: typed wrappers over its variadic calls, which Swift cannot call directly, and
// the library itself loaded on first use (fs_curl_load) rather than at start-up. Commands that
// never touch the network (list, status) then do not pay for loading libcurl and the TLS, LDAP
// and Kerberos libraries it pulls in: about 5 ms of every start on the benchmark machine.
#ifndef FEEDSYNC_CCURL_SHIM_H
#define FEEDSYNC_CCURL_SHIM_H

#include <curl/curl.h>

/// Loads libcurl and runs curl_global_init; NULL on success, else what failed. Call once, before
/// any other function here.
const char *fs_curl_load(void);

CURLcode fs_easy_setopt_long(CURL *h, CURLoption o, long v);
CURLcode fs_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v);
CURLcode fs_easy_setopt_string(CURL *h, CURLoption o, const char *v);
CURLcode fs_easy_setopt_pointer(CURL *h, CURLoption o, void *v);
CURLcode fs_easy_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v);
CURLcode fs_easy_setopt_write_callback(CURL *h, CURLoption o, curl_write_callback v);

CURLcode fs_easy_getinfo_long(CURL *h, CURLINFO i, long *v);
CURLcode fs_easy_getinfo_string(CURL *h, CURLINFO i, char **v);
CURLcode fs_easy_getinfo_pointer(CURL *h, CURLINFO i, void **v);
CURLcode fs_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v);

CURL *fs_easy_init(void);
void fs_easy_cleanup(CURL *h);
void fs_easy_reset(CURL *h);
const char *fs_easy_strerror(CURLcode code);

CURLM *fs_multi_init(void);
CURLMcode fs_multi_setopt_long(CURLM *m, CURLMoption o, long v);
CURLMcode fs_multi_add_handle(CURLM *m, CURL *h);
CURLMcode fs_multi_remove_handle(CURLM *m, CURL *h);
CURLMcode fs_multi_perform(CURLM *m, int *running);
CURLMcode fs_multi_poll(CURLM *m, int timeout_ms);
CURLMcode fs_multi_wakeup(CURLM *m);
CURLMcode fs_multi_cleanup(CURLM *m);
CURLMsg *fs_multi_info_read(CURLM *m, int *queued);

struct curl_slist *fs_slist_append(struct curl_slist *list, const char *line);
void fs_slist_free_all(struct curl_slist *list);

/// The result of a finished transfer; CURLMsg keeps it in an anonymous union.
static inline CURLcode fs_msg_result(const CURLMsg *m) { return m->data.result; }

#endif
