#ifndef COURIER_NTLM_CRYPTO_H
#define COURIER_NTLM_CRYPTO_H

// The two digests NTLMv2 needs (MS-NLMP §3.3.2), for the WebSocket handshake's NTLM answer
// (Sources/Courier/WebSocket/Transport/NTLM). MD4 comes from OpenSSL's low-level MD4(): OpenSSL 3
// moved MD4 to the legacy provider for EVP (EVP_MD_fetch(NULL, "MD4", NULL) is NULL without it),
// but the low-level function is still built in and needs no provider. It is deprecated in
// OpenSSL 3, so the warning is silenced here, in this one place, and Swift sees a plain function.

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <openssl/md4.h>
#include <openssl/hmac.h>
#include <openssl/evp.h>

/// MD4 of `length` bytes at `data` into `out` (16 bytes). 1 on success.
static inline int courier_md4(const void *data, size_t length, unsigned char out[16]) {
    return MD4((const unsigned char *)data, length, out) != NULL ? 1 : 0;
}
#pragma GCC diagnostic pop

/// HMAC-MD5 of `length` bytes at `data` with `key` into `out` (16 bytes). 1 on success.
static inline int courier_hmac_md5(const void *key, size_t key_length, const void *data, size_t length,
                                   unsigned char out[16]) {
    unsigned int written = 0;
    if (HMAC(EVP_md5(), key, (int)key_length, (const unsigned char *)data, length, out, &written) == NULL) return 0;
    return written == 16 ? 1 : 0;
}

#endif
