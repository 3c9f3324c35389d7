// GSS-API (RFC 2743, C bindings of RFC 2744) for the Negotiate (SPNEGO) token of the WebSocket
// handshake, taken at run time from MIT Kerberos' libgssapi_krb5.so.2 — the library libcurl
// itself loads for data tasks' Negotiate. Nothing is linked and no Kerberos header is needed to
// build Courier: the few types below are RFC 2744's, declared under Courier's own names, and each
// function is looked up once (dlopen/dlsym). When the library cannot be loaded every call returns
// GSS_S_UNAVAILABLE and `courier_gss_load_error` says why.
#ifndef COURIER_CGSSAPI_H
#define COURIER_CGSSAPI_H

#include <stddef.h>
#include <stdint.h>

/// OM_uint32.
typedef uint32_t courier_gss_status;

/// gss_buffer_desc: bytes handed in or out (out: release with `courier_gss_release_buffer`).
typedef struct {
    size_t length;
    void *value;
} courier_gss_buffer;

/// gss_name_t, gss_ctx_id_t, gss_cred_id_t: opaque handles.
typedef struct courier_gss_name_opaque *courier_gss_name;
typedef struct courier_gss_context_opaque *courier_gss_context;
typedef struct courier_gss_credential_opaque *courier_gss_credential;

/// Status types of `courier_gss_display_status` (GSS_C_GSS_CODE, GSS_C_MECH_CODE).
static const int courier_gss_code_routine = 1;
static const int courier_gss_code_mechanism = 2;

/// Context flags (GSS_C_MUTUAL_FLAG, GSS_C_REPLAY_FLAG).
static const courier_gss_status courier_gss_flag_mutual = 2;
static const courier_gss_status courier_gss_flag_replay = 4;

/// GSS_S_CONTINUE_NEEDED: the mechanism expects a token from the peer.
static const courier_gss_status courier_gss_continue_needed = 1;

/// GSS_ERROR(status): a calling or routine error.
static inline int courier_gss_is_error(courier_gss_status status) { return (status & 0xffff0000u) != 0; }

/// Whether the library could be loaded (loads it on the first call; thread-safe).
int courier_gss_available(void);

/// Why the library could not be loaded (dlerror's text), or NULL.
const char *courier_gss_load_error(void);

/// gss_import_name with the host-based service name type (`service@host`).
courier_gss_status courier_gss_import_service_name(courier_gss_status *minor, const char *name, size_t length,
                                                   courier_gss_name *output);

/// gss_init_sec_context with the default credential and the SPNEGO mechanism, no channel
/// bindings and no input token: the first token for `target` in `output`.
courier_gss_status courier_gss_init_spnego_context(courier_gss_status *minor, courier_gss_context *context,
                                                   courier_gss_name target, courier_gss_status flags,
                                                   courier_gss_buffer *output);

/// gss_acquire_cred for initiating with the Kerberos 5 mechanism and the default name.
courier_gss_status courier_gss_acquire_krb5_initiator(courier_gss_status *minor, courier_gss_credential *output);

/// gss_display_status for `status` of `type` (no mechanism named).
courier_gss_status courier_gss_display_status(courier_gss_status *minor, courier_gss_status status, int type,
                                              courier_gss_status *message_context, courier_gss_buffer *output);

/// The release functions (each accepts a handle or buffer that is already empty).
courier_gss_status courier_gss_release_name(courier_gss_status *minor, courier_gss_name *name);
courier_gss_status courier_gss_delete_context(courier_gss_status *minor, courier_gss_context *context);
courier_gss_status courier_gss_release_credential(courier_gss_status *minor, courier_gss_credential *credential);
courier_gss_status courier_gss_release_buffer(courier_gss_status *minor, courier_gss_buffer *buffer);

#endif
