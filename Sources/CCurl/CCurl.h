// The libcurl API as Swift sees it. curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are
// C variadic functions, which Swift cannot call, so each is wrapped per argument type here.
#ifndef COURIER_CCURL_H
#define COURIER_CCURL_H

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

static inline CURLcode courier_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode courier_easy_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode courier_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode courier_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode courier_easy_setopt_write_function(CURL *handle, CURLoption option,
                                                          size_t (*function)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(handle, option, function);
}

static inline CURLcode courier_easy_setopt_read_function(CURL *handle,
                                                         size_t (*function)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, function);
}

static inline CURLcode courier_easy_setopt_seek_function(CURL *handle,
                                                         int (*function)(void *, curl_off_t, int)) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, function);
}

static inline CURLcode courier_easy_setopt_xferinfo_function(CURL *handle,
                                                             int (*function)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, function);
}

/// CURLOPT_OPENSOCKETFUNCTION: `function` makes the sockets libcurl connects (an upgrade request's,
/// so that the socket is known and can be handed over).
static inline CURLcode courier_easy_setopt_opensocket_function(CURL *handle,
                                                               curl_socket_t (*function)(void *, curlsocktype, struct curl_sockaddr *)) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, function);
}

/// CURLOPT_CLOSESOCKETFUNCTION: `function` closes the sockets of connections the transfer made
/// (and may keep one that was handed over open).
static inline CURLcode courier_easy_setopt_closesocket_function(CURL *handle, int (*function)(void *, curl_socket_t)) {
    return curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, function);
}

/// CURLOPT_DEBUGFUNCTION: libcurl's trace (what CURLOPT_VERBOSE would print), handed to `function`.
static inline CURLcode courier_easy_setopt_debug_function(CURL *handle,
                                                          int (*function)(CURL *, curl_infotype, char *, size_t, void *)) {
    return curl_easy_setopt(handle, CURLOPT_DEBUGFUNCTION, function);
}

static inline CURLcode courier_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode courier_easy_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode courier_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

/// The socket of a CURLOPT_CONNECT_ONLY connection (CURLINFO_ACTIVESOCKET), or -1.
static inline int courier_easy_active_socket(CURL *handle) {
    curl_socket_t socket = CURL_SOCKET_BAD;
    if (curl_easy_getinfo(handle, CURLINFO_ACTIVESOCKET, &socket) != CURLE_OK) return -1;
    return socket == CURL_SOCKET_BAD ? -1 : (int)socket;
}

static inline CURLcode courier_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLMcode courier_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLMcode courier_multi_setopt_pointer(CURLM *multi, CURLMoption option, void *value) {
    return curl_multi_setopt(multi, option, value);
}

static inline CURLMcode courier_multi_setopt_socket_function(CURLM *multi,
                                                             int (*function)(CURL *, curl_socket_t, int, void *, void *)) {
    return curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, function);
}

/// Runs every transfer of `multi` once and updates the socket callbacks (curl_multi_socket_all:
/// curl_multi_perform plus the socket bookkeeping of the socket interface). libcurl marks it
/// deprecated in favour of curl_multi_socket_action, which cannot reach a transfer that waits for
/// nothing (see CurlFTPDoPhaseNudge.swift), so the warning is silenced here only.
static inline CURLMcode courier_multi_socket_all(CURLM *multi, int *running_handles) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
    return curl_multi_socket_all(multi, running_handles);
#pragma clang diagnostic pop
}

/// curl_multi_socket_action's "no socket, timers only" argument (CURL_SOCKET_TIMEOUT).
static const curl_socket_t courier_socket_timeout = CURL_SOCKET_TIMEOUT;

// ---- The epoll set the multi loop sleeps in (struct epoll_event is packed on x86_64, so Swift
// ---- never sees it: these helpers take and return plain integers).

/// A new epoll set (close-on-exec), or -1.
static inline int courier_epoll_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

/// A new non-blocking eventfd (close-on-exec), or -1.
static inline int courier_eventfd_create(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

/// Adds `fd` to the set (`add` non-zero) or changes its interest: reading and/or writing.
/// Returns 0, or the errno of the failure.
static inline int courier_epoll_watch(int epoll_fd, int fd, int add, int readable, int writable) {
    struct epoll_event event;
    memset(&event, 0, sizeof event);
    event.events = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0);
    event.data.fd = fd;
    if (epoll_ctl(epoll_fd, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event) == 0) return 0;
    // The kernel forgot a closed descriptor, or still knows a reused one: try the other way.
    if ((add && errno == EEXIST) || (!add && errno == ENOENT)) {
        if (epoll_ctl(epoll_fd, add ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event) == 0) return 0;
    }
    return errno;
}

/// Removes `fd` from the set (a descriptor already closed is not an error).
static inline void courier_epoll_unwatch(int epoll_fd, int fd) {
    (void)epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, NULL);
}

/// Waits up to `timeout_ms` (-1: no limit) for at most `capacity` (≤ 64) ready descriptors and
/// writes each one's number to `fds` and its readiness to `masks` as libcurl's CURL_CSELECT_* bits.
/// Returns how many are ready: 0 on time-out or interruption, -1 on another error.
static inline int courier_epoll_wait(int epoll_fd, int *fds, int *masks, int capacity, int timeout_ms) {
    struct epoll_event events[64];
    if (capacity > 64) capacity = 64;
    int count = epoll_wait(epoll_fd, events, capacity, timeout_ms);
    if (count < 0) return errno == EINTR ? 0 : -1;
    for (int i = 0; i < count; i++) {
        uint32_t ready = events[i].events;
        int mask = 0;
        if (ready & (EPOLLIN | EPOLLHUP | EPOLLRDHUP)) mask |= CURL_CSELECT_IN;
        if (ready & EPOLLOUT) mask |= CURL_CSELECT_OUT;
        if (ready & EPOLLERR) mask |= CURL_CSELECT_ERR;
        fds[i] = events[i].data.fd;
        masks[i] = mask;
    }
    return count;
}

/// Adds one to an eventfd's counter (wakes whoever waits for it).
static inline void courier_eventfd_signal(int fd) {
    uint64_t one = 1;
    (void)write(fd, &one, sizeof one);
}

/// Resets an eventfd's counter.
static inline void courier_eventfd_drain(int fd) {
    uint64_t value;
    (void)read(fd, &value, sizeof value);
}

/// The easy handle and result of a finished transfer from curl_multi_info_read, or NULL handle.
static inline CURL *courier_multi_done_handle(CURLMsg *message, CURLcode *result) {
    if (message == NULL || message->msg != CURLMSG_DONE) return NULL;
    *result = message->data.result;
    return message->easy_handle;
}

/// The number of certificates CURLOPT_CERTINFO collected for a transfer.
static inline int courier_certinfo_count(CURL *handle) {
    struct curl_certinfo *info = NULL;
    if (curl_easy_getinfo(handle, CURLINFO_CERTINFO, &info) != CURLE_OK || info == NULL) return 0;
    return info->num_of_certs;
}

/// The PEM text of certificate `index` ("Cert:" entry), or NULL. Valid until the handle is cleaned up.
static inline const char *courier_certinfo_pem(CURL *handle, int index) {
    struct curl_certinfo *info = NULL;
    if (curl_easy_getinfo(handle, CURLINFO_CERTINFO, &info) != CURLE_OK || info == NULL) return NULL;
    if (index < 0 || index >= info->num_of_certs) return NULL;
    for (struct curl_slist *entry = info->certinfo[index]; entry != NULL; entry = entry->next) {
        if (entry->data != NULL && strncmp(entry->data, "Cert:", 5) == 0) return entry->data + 5;
    }
    return NULL;
}

/// SHA-256 of `length` bytes at `data` into `digest` (32 bytes), by the libcrypto libcurl's OpenSSL
/// backend loaded (looked up at run time, as below). Returns 0 when there is no such function.
static inline int courier_sha256(const void *data, size_t length, unsigned char *digest) {
    typedef unsigned char *(*sha256_f)(const unsigned char *, size_t, unsigned char *);
    void *process = dlopen(NULL, RTLD_LAZY);
    if (process == NULL) return 0;
    sha256_f sha256 = (sha256_f)dlsym(process, "SHA256");
    if (sha256 == NULL) return 0;
    sha256((const unsigned char *)data, length, digest);
    return 1;
}

/// The TLS version (0x0303 for TLS 1.2, 0x0304 for 1.3) and IANA cipher-suite number the transfer's
/// connection negotiated; 0 when not known. Call it while the transfer runs (the TLS object belongs to
/// the connection, which is pooled afterwards). libcurl's OpenSSL backend hands out its SSL object;
/// the three OpenSSL functions that read it are looked up at run time in the libssl libcurl loaded,
/// so Courier does not link libssl itself (and any other TLS backend simply reports 0).
static inline void courier_tls_negotiated(CURL *handle, int *version, int *cipher) {
    typedef int (*version_f)(const void *);
    typedef const void *(*cipher_f)(const void *);
    typedef uint16_t (*protocol_id_f)(const void *);
    static int looked_up = 0;
    static version_f ssl_version = NULL;
    static cipher_f current_cipher = NULL;
    static protocol_id_f protocol_id = NULL;
    *version = 0;
    *cipher = 0;
    struct curl_tlssessioninfo *info = NULL;
    if (curl_easy_getinfo(handle, CURLINFO_TLS_SSL_PTR, &info) != CURLE_OK || info == NULL) return;
    if (info->backend != CURLSSLBACKEND_OPENSSL || info->internals == NULL) return;
    if (!looked_up) {
        void *process = dlopen(NULL, RTLD_LAZY);
        if (process != NULL) {
            ssl_version = (version_f)dlsym(process, "SSL_version");
            current_cipher = (cipher_f)dlsym(process, "SSL_get_current_cipher");
            protocol_id = (protocol_id_f)dlsym(process, "SSL_CIPHER_get_protocol_id");
        }
        looked_up = 1;
    }
    if (ssl_version != NULL) *version = ssl_version(info->internals);
    if (current_cipher != NULL && protocol_id != NULL) {
        const void *suite = current_cipher(info->internals);
        if (suite != NULL) *cipher = protocol_id(suite);
    }
}

/// CURLAUTH_* are cast expressions Swift cannot import; these carry their values.
static const long courier_auth_basic = (long)CURLAUTH_BASIC;
static const long courier_auth_digest = (long)CURLAUTH_DIGEST;
static const long courier_auth_ntlm = (long)CURLAUTH_NTLM;
static const long courier_auth_negotiate = (long)CURLAUTH_NEGOTIATE;

/// A libcurl share object that holds TLS sessions, with one mutex per kind of data libcurl may
/// lock (it calls the lock functions from whichever thread uses a handle attached to the share).
typedef struct courier_share {
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
} courier_share;

static inline void courier_share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *user) {
    (void)handle;
    (void)access;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST) { pthread_mutex_lock(&((courier_share *)user)->locks[data]); }
}

static inline void courier_share_unlock(CURL *handle, curl_lock_data data, void *user) {
    (void)handle;
    if ((int)data >= 0 && data < CURL_LOCK_DATA_LAST) { pthread_mutex_unlock(&((courier_share *)user)->locks[data]); }
}

static inline void courier_share_destroy_locks(courier_share *share) {
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) { pthread_mutex_destroy(&share->locks[i]); }
}

/// A new share of TLS sessions (CURL_LOCK_DATA_SSL_SESSION); NULL when libcurl cannot make one.
static inline courier_share *courier_share_new_tls_sessions(void) {
    courier_share *share = calloc(1, sizeof *share);
    if (share == NULL) { return NULL; }
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) { pthread_mutex_init(&share->locks[i], NULL); }
    share->share = curl_share_init();
    if (share->share == NULL
        || curl_share_setopt(share->share, CURLSHOPT_LOCKFUNC, courier_share_lock) != CURLSHE_OK
        || curl_share_setopt(share->share, CURLSHOPT_UNLOCKFUNC, courier_share_unlock) != CURLSHE_OK
        || curl_share_setopt(share->share, CURLSHOPT_USERDATA, share) != CURLSHE_OK
        || curl_share_setopt(share->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK) {
        if (share->share != NULL) { curl_share_cleanup(share->share); }
        courier_share_destroy_locks(share);
        free(share);
        return NULL;
    }
    return share;
}

/// Frees `share`: 0, or 1 when a handle still uses it (then nothing is freed).
static inline int courier_share_free(courier_share *share) {
    if (curl_share_cleanup(share->share) != CURLSHE_OK) { return 1; }
    courier_share_destroy_locks(share);
    free(share);
    return 0;
}

/// CURLOPT_SHARE: attaches `handle` to `share` (NULL: detaches it).
static inline CURLcode courier_easy_set_share(CURL *handle, courier_share *share) {
    return curl_easy_setopt(handle, CURLOPT_SHARE, share != NULL ? share->share : NULL);
}

#endif
