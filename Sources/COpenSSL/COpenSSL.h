#ifndef COURIER_COPENSSL_H
#define COURIER_COPENSSL_H

// OpenSSL for stream tasks (Sources/Courier/Streams): TLS over a socket Courier owns, so a
// connection can start in plain text and upgrade mid-stream (STARTTLS). Small inline wrappers for
// what Swift cannot call: OpenSSL's macros (SNI, protocol versions) and a few sequences that are
// simpler in C (the peer chain as DER, the error queue as text).

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <string.h>

/// OpenSSL's process-wide initialisation, without the exit handler (`OPENSSL_cleanup`) it would
/// otherwise register: that handler frees OpenSSL's global state while the process exits, under the
/// feet of a Courier loop thread still inside libcurl, libssh2 or a stream's TLS (an app's `main`
/// may return with transfers running; one benchmark process aborted that way, "double free" on its
/// curl thread during `exit`). The first initialisation in a process decides, so Courier calls this
/// before libcurl, libssh2 or a stream task first use OpenSSL. 1 on success.
static inline int courier_openssl_init_without_exit_cleanup(void) {
    return OPENSSL_init_ssl(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_SSL_STRINGS | OPENSSL_INIT_LOAD_CRYPTO_STRINGS, NULL);
}

/// A client context with the given protocol range (TLS1_VERSION … TLS1_3_VERSION), or NULL.
static inline SSL_CTX *courier_ssl_client_context(int minimum, int maximum) {
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    if (context == NULL) return NULL;
    if (SSL_CTX_set_min_proto_version(context, minimum) != 1 || SSL_CTX_set_max_proto_version(context, maximum) != 1) {
        SSL_CTX_free(context);
        return NULL;
    }
    // Writes may be retried with a moved buffer (Swift Data); partial writes are reported.
    SSL_CTX_set_mode(context, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
    // The chain is verified, and the result read after the handshake: a failure becomes a
    // server-trust challenge instead of an aborted handshake.
    SSL_CTX_set_verify(context, SSL_VERIFY_NONE, NULL);
    return context;
}

/// Loads the trust anchors: `file` and/or `directory`, or the system's when both are NULL. 1 on success.
static inline int courier_ssl_load_anchors(SSL_CTX *context, const char *file, const char *directory) {
    if (file == NULL && directory == NULL) return SSL_CTX_set_default_verify_paths(context);
    return SSL_CTX_load_verify_locations(context, file, directory);
}

/// Sets the name the certificate must match (a DNS name or an IP address literal) and, for a DNS
/// name, the SNI extension. 1 on success.
static inline int courier_ssl_set_peer_name(SSL *ssl, const char *name, int is_ip_address) {
    X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
    if (is_ip_address) {
        return X509_VERIFY_PARAM_set1_ip_asc(param, name);
    }
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    if (X509_VERIFY_PARAM_set1_host(param, name, 0) != 1) return 0;
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/// The verification result after the handshake (X509_V_OK when trusted), and its text.
static inline long courier_ssl_verify_result(SSL *ssl, const char **text) {
    long result = SSL_get_verify_result(ssl);
    if (text != NULL) *text = X509_verify_cert_error_string(result);
    // No certificate at all is not X509_V_OK either.
    if (result == X509_V_OK && SSL_get0_peer_certificate(ssl) == NULL) {
        if (text != NULL) *text = "the server sent no certificate";
        return X509_V_ERR_UNSPECIFIED;
    }
    return result;
}

/// The number of certificates the server sent (leaf first).
static inline int courier_ssl_peer_chain_count(SSL *ssl) {
    STACK_OF(X509) *chain = SSL_get_peer_cert_chain(ssl);
    return chain == NULL ? 0 : sk_X509_num(chain);
}

/// Certificate `index` of the server's chain as DER into `*out` (free with OPENSSL_free); its length, or -1.
static inline int courier_ssl_peer_chain_der(SSL *ssl, int index, unsigned char **out) {
    STACK_OF(X509) *chain = SSL_get_peer_cert_chain(ssl);
    if (chain == NULL || index < 0 || index >= sk_X509_num(chain)) return -1;
    *out = NULL;
    return i2d_X509(sk_X509_value(chain, index), out);
}

/// Frees what courier_ssl_peer_chain_der returned.
static inline void courier_ssl_free(void *pointer) { OPENSSL_free(pointer); }

/// The oldest error on this thread's OpenSSL error queue as text (empty when none), and clears the queue.
static inline void courier_ssl_error_text(char *buffer, size_t size) {
    unsigned long code = ERR_get_error();
    if (size > 0) buffer[0] = 0;
    if (code != 0) ERR_error_string_n(code, buffer, size);
    ERR_clear_error();
}

/// Clears this thread's OpenSSL error queue (before an SSL_* call whose SSL_get_error is read).
static inline void courier_ssl_clear_errors(void) { ERR_clear_error(); }

#endif
