// MIT Kerberos' GSS-API (apt: libkrb5-dev), for the Negotiate (SPNEGO)
// token of the WebSocket handshake. libcurl links the same library for data tasks' Negotiate.
#ifndef COURIER_CGSSAPI_H
#define COURIER_CGSSAPI_H

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_krb5.h>

// Swift cannot use the header's macros that cast or compose, nor its mutable extern OIDs under
// strict concurrency: these inline functions give their values.

/// The SPNEGO mechanism (RFC 4178), OID 1.3.6.1.5.5.2.
static inline gss_OID courier_gss_spnego_mechanism(void) {
    static gss_OID_desc spnego = { 6, (void *)"\x2b\x06\x01\x05\x05\x02" };
    return &spnego;
}

/// The name type of `service@host` names (GSS_C_NT_HOSTBASED_SERVICE).
static inline gss_OID courier_gss_hostbased_service(void) { return GSS_C_NT_HOSTBASED_SERVICE; }

/// The Kerberos 5 mechanism (gss_mech_krb5).
static inline gss_OID courier_gss_krb5_mechanism(void) { return (gss_OID)gss_mech_krb5; }

/// Whether `major` is an error (GSS_ERROR).
static inline int courier_gss_is_error(OM_uint32 major) { return GSS_ERROR(major) ? 1 : 0; }

/// GSS_S_CONTINUE_NEEDED: the mechanism expects a token from the peer.
static inline OM_uint32 courier_gss_continue_needed(void) { return GSS_S_CONTINUE_NEEDED; }

#endif
