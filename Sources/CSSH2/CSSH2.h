// The libssh2 API as Swift sees it. Many libssh2 calls are function-like macros (which Swift cannot
// import) that fill in string lengths or default arguments; each one Courier uses is wrapped here in
// a static inline function. Keyboard-interactive authentication needs a C callback, also here.
#ifndef COURIER_CSSH2_H
#define COURIER_CSSH2_H

#include <libssh2.h>
#include <libssh2_sftp.h>
#include <stdlib.h>
#include <string.h>

/// A new session whose abstract pointer (used for the keyboard-interactive password) starts NULL.
static inline LIBSSH2_SESSION *courier_ssh2_session_init(void) {
    return libssh2_session_init_ex(NULL, NULL, NULL, NULL);
}

static inline int courier_ssh2_session_disconnect(LIBSSH2_SESSION *session, const char *description) {
    return libssh2_session_disconnect_ex(session, SSH_DISCONNECT_BY_APPLICATION, description, "");
}

static inline int courier_ssh2_userauth_password(LIBSSH2_SESSION *session, const char *user, const char *password) {
    return libssh2_userauth_password_ex(session, user, (unsigned int)strlen(user), password,
                                        (unsigned int)strlen(password), NULL);
}

static inline int courier_ssh2_userauth_publickey_fromfile(LIBSSH2_SESSION *session, const char *user,
                                                           const char *publicKey, const char *privateKey,
                                                           const char *passphrase) {
    return libssh2_userauth_publickey_fromfile_ex(session, user, (unsigned int)strlen(user), publicKey,
                                                  privateKey, passphrase);
}

static inline char *courier_ssh2_userauth_list(LIBSSH2_SESSION *session, const char *user) {
    return libssh2_userauth_list(session, user, (unsigned int)strlen(user));
}

/// Stores (a copy of) the password keyboard-interactive prompts are answered with, replacing and
/// wiping any earlier one; NULL just wipes it. Kept in the session's abstract pointer.
static inline void courier_ssh2_set_kbdint_password(LIBSSH2_SESSION *session, const char *password) {
    void **abstract = libssh2_session_abstract(session);
    if (abstract == NULL) return;
    char *old = (char *)*abstract;
    if (old != NULL) {
        memset(old, 0, strlen(old));
        free(old);
    }
    *abstract = password != NULL ? strdup(password) : NULL;
}

/// Answers every keyboard-interactive prompt with the stored password (libssh2 frees the answers).
static void courier_ssh2_kbdint_respond(const char *name, int name_len, const char *instruction,
                                        int instruction_len, int num_prompts,
                                        const LIBSSH2_USERAUTH_KBDINT_PROMPT *prompts,
                                        LIBSSH2_USERAUTH_KBDINT_RESPONSE *responses, void **abstract) {
    (void)name; (void)name_len; (void)instruction; (void)instruction_len; (void)prompts;
    const char *password = abstract != NULL ? (const char *)*abstract : NULL;
    for (int index = 0; index < num_prompts; index++) {
        responses[index].text = password != NULL ? strdup(password) : NULL;
        responses[index].length = responses[index].text != NULL ? (unsigned int)strlen(responses[index].text) : 0;
    }
}

/// Keyboard-interactive authentication answering with the password set by
/// courier_ssh2_set_kbdint_password.
static inline int courier_ssh2_userauth_kbdint(LIBSSH2_SESSION *session, const char *user) {
    return libssh2_userauth_keyboard_interactive_ex(session, user, (unsigned int)strlen(user),
                                                    courier_ssh2_kbdint_respond);
}

static inline LIBSSH2_SFTP_HANDLE *courier_ssh2_sftp_open(LIBSSH2_SFTP *sftp, const char *path, unsigned long flags,
                                                          long mode) {
    return libssh2_sftp_open_ex(sftp, path, (unsigned int)strlen(path), flags, mode, LIBSSH2_SFTP_OPENFILE);
}

static inline LIBSSH2_SFTP_HANDLE *courier_ssh2_sftp_opendir(LIBSSH2_SFTP *sftp, const char *path) {
    return libssh2_sftp_open_ex(sftp, path, (unsigned int)strlen(path), 0, 0, LIBSSH2_SFTP_OPENDIR);
}

static inline int courier_ssh2_sftp_fstat(LIBSSH2_SFTP_HANDLE *handle, LIBSSH2_SFTP_ATTRIBUTES *attributes) {
    return libssh2_sftp_fstat_ex(handle, attributes, 0);
}

static inline int courier_ssh2_sftp_stat(LIBSSH2_SFTP *sftp, const char *path, LIBSSH2_SFTP_ATTRIBUTES *attributes) {
    return libssh2_sftp_stat_ex(sftp, path, (unsigned int)strlen(path), LIBSSH2_SFTP_STAT, attributes);
}

static inline int courier_ssh2_sftp_readlink(LIBSSH2_SFTP *sftp, const char *path, char *target, unsigned int length) {
    return libssh2_sftp_symlink_ex(sftp, path, (unsigned int)strlen(path), target, length, LIBSSH2_SFTP_READLINK);
}

/// The SHA-256 host-key hash (32 bytes) or NULL.
static inline const unsigned char *courier_ssh2_hostkey_sha256(LIBSSH2_SESSION *session) {
    return (const unsigned char *)libssh2_hostkey_hash(session, LIBSSH2_HOSTKEY_HASH_SHA256);
}

#endif
