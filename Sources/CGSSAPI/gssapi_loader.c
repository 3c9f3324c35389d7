// Loads MIT Kerberos' GSS-API at run time (see include/CGSSAPI.h). The declarations here are
// RFC 2744's C bindings, which the library's ABI follows.
#define _GNU_SOURCE
#include "CGSSAPI.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/// gss_OID_desc and gss_OID_set_desc (RFC 2744 §3.2).
typedef struct {
    courier_gss_status length;
    void *elements;
} gss_oid;

typedef struct {
    size_t count;
    gss_oid *elements;
} gss_oid_set;

/// GSS_S_UNAVAILABLE (a routine error): what every call returns when the library is missing.
static const courier_gss_status unavailable = 16u << 16;

/// SPNEGO (1.3.6.1.5.5.2), Kerberos 5 (1.2.840.113554.1.2.2) and the host-based service name type
/// (1.2.840.113554.1.2.1.4), DER-encoded.
static gss_oid spnego_mechanism = { 6, (void *)"\x2b\x06\x01\x05\x05\x02" };
static gss_oid krb5_mechanism = { 9, (void *)"\x2a\x86\x48\x86\xf7\x12\x01\x02\x02" };
static gss_oid hostbased_service = { 10, (void *)"\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x04" };

typedef courier_gss_status (*import_name_f)(courier_gss_status *, courier_gss_buffer *, gss_oid *, courier_gss_name *);
typedef courier_gss_status (*init_sec_context_f)(courier_gss_status *, courier_gss_credential, courier_gss_context *,
                                                 courier_gss_name, gss_oid *, courier_gss_status, courier_gss_status,
                                                 void *, courier_gss_buffer *, gss_oid **, courier_gss_buffer *,
                                                 courier_gss_status *, courier_gss_status *);
typedef courier_gss_status (*acquire_cred_f)(courier_gss_status *, courier_gss_name, courier_gss_status, gss_oid_set *,
                                             int, courier_gss_credential *, gss_oid_set **, courier_gss_status *);
typedef courier_gss_status (*display_status_f)(courier_gss_status *, courier_gss_status, int, gss_oid *,
                                               courier_gss_status *, courier_gss_buffer *);
typedef courier_gss_status (*release_name_f)(courier_gss_status *, courier_gss_name *);
typedef courier_gss_status (*delete_sec_context_f)(courier_gss_status *, courier_gss_context *, courier_gss_buffer *);
typedef courier_gss_status (*release_cred_f)(courier_gss_status *, courier_gss_credential *);
typedef courier_gss_status (*release_buffer_f)(courier_gss_status *, courier_gss_buffer *);

static struct {
    import_name_f import_name;
    init_sec_context_f init_sec_context;
    acquire_cred_f acquire_cred;
    display_status_f display_status;
    release_name_f release_name;
    delete_sec_context_f delete_sec_context;
    release_cred_f release_cred;
    release_buffer_f release_buffer;
    int loaded;
    char error[256];
} gss;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libgssapi_krb5.so.2", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(gss.error, sizeof gss.error, "%s", reason != NULL ? reason : "libgssapi_krb5.so.2 could not be loaded");
        return;
    }
    gss.import_name = (import_name_f)dlsym(library, "gss_import_name");
    gss.init_sec_context = (init_sec_context_f)dlsym(library, "gss_init_sec_context");
    gss.acquire_cred = (acquire_cred_f)dlsym(library, "gss_acquire_cred");
    gss.display_status = (display_status_f)dlsym(library, "gss_display_status");
    gss.release_name = (release_name_f)dlsym(library, "gss_release_name");
    gss.delete_sec_context = (delete_sec_context_f)dlsym(library, "gss_delete_sec_context");
    gss.release_cred = (release_cred_f)dlsym(library, "gss_release_cred");
    gss.release_buffer = (release_buffer_f)dlsym(library, "gss_release_buffer");
    if (gss.import_name && gss.init_sec_context && gss.acquire_cred && gss.display_status && gss.release_name
        && gss.delete_sec_context && gss.release_cred && gss.release_buffer) {
        gss.loaded = 1;
    } else {
        snprintf(gss.error, sizeof gss.error, "libgssapi_krb5.so.2 lacks a GSS-API function");
    }
    // The library stays loaded for the process: libcurl may hold it too.
}

int courier_gss_available(void) {
    pthread_once(&load_once, load);
    return gss.loaded;
}

const char *courier_gss_load_error(void) {
    pthread_once(&load_once, load);
    return gss.loaded ? NULL : gss.error;
}

courier_gss_status courier_gss_import_service_name(courier_gss_status *minor, const char *name, size_t length,
                                                   courier_gss_name *output) {
    *minor = 0;
    if (!courier_gss_available()) return unavailable;
    courier_gss_buffer buffer = { length, (void *)name };
    return gss.import_name(minor, &buffer, &hostbased_service, output);
}

courier_gss_status courier_gss_init_spnego_context(courier_gss_status *minor, courier_gss_context *context,
                                                   courier_gss_name target, courier_gss_status flags,
                                                   courier_gss_buffer *output) {
    *minor = 0;
    if (!courier_gss_available()) return unavailable;
    return gss.init_sec_context(minor, NULL, context, target, &spnego_mechanism, flags, 0, NULL, NULL, NULL, output,
                                NULL, NULL);
}

courier_gss_status courier_gss_acquire_krb5_initiator(courier_gss_status *minor, courier_gss_credential *output) {
    *minor = 0;
    if (!courier_gss_available()) return unavailable;
    gss_oid_set mechanisms = { 1, &krb5_mechanism };
    return gss.acquire_cred(minor, NULL, 0, &mechanisms, 1 /* GSS_C_INITIATE */, output, NULL, NULL);
}

courier_gss_status courier_gss_display_status(courier_gss_status *minor, courier_gss_status status, int type,
                                              courier_gss_status *message_context, courier_gss_buffer *output) {
    *minor = 0;
    if (!courier_gss_available()) return unavailable;
    return gss.display_status(minor, status, type, NULL, message_context, output);
}

courier_gss_status courier_gss_release_name(courier_gss_status *minor, courier_gss_name *name) {
    *minor = 0;
    if (*name == NULL || !courier_gss_available()) return 0;
    return gss.release_name(minor, name);
}

courier_gss_status courier_gss_delete_context(courier_gss_status *minor, courier_gss_context *context) {
    *minor = 0;
    if (*context == NULL || !courier_gss_available()) return 0;
    return gss.delete_sec_context(minor, context, NULL);
}

courier_gss_status courier_gss_release_credential(courier_gss_status *minor, courier_gss_credential *credential) {
    *minor = 0;
    if (*credential == NULL || !courier_gss_available()) return 0;
    return gss.release_cred(minor, credential);
}

courier_gss_status courier_gss_release_buffer(courier_gss_status *minor, courier_gss_buffer *buffer) {
    *minor = 0;
    if (buffer->value == NULL || !courier_gss_available()) return 0;
    return gss.release_buffer(minor, buffer);
}
