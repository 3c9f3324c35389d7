// Checks CGSSAPI's own declarations of RFC 2744's types and constants against MIT Kerberos'
// headers (libkrb5-dev), which Courier is built without. Compiled and run by
// GSSAPIDeclarationTests; exits 0 when everything matches, else prints what differs.
#include <gssapi/gssapi.h>
#include <gssapi/gssapi_krb5.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "CGSSAPI.h"

_Static_assert(sizeof(OM_uint32) == sizeof(courier_gss_status), "OM_uint32");
_Static_assert(sizeof(gss_buffer_desc) == sizeof(courier_gss_buffer), "gss_buffer_desc size");
_Static_assert(offsetof(gss_buffer_desc, value) == offsetof(courier_gss_buffer, value), "gss_buffer_desc.value");
_Static_assert(sizeof(gss_OID_desc) == 16 && offsetof(gss_OID_desc, elements) == 8, "gss_OID_desc (gssapi_loader.c)");
_Static_assert(sizeof(gss_OID_set_desc) == 16 && offsetof(gss_OID_set_desc, elements) == 8, "gss_OID_set_desc");
_Static_assert(GSS_S_UNAVAILABLE == (16u << 16) && GSS_C_INITIATE == 1, "constants of gssapi_loader.c");

static int failures = 0;

static void expect(int condition, const char *what) {
    if (!condition) {
        printf("differs: %s\n", what);
        failures += 1;
    }
}

int main(void) {
    expect(GSS_C_MUTUAL_FLAG == courier_gss_flag_mutual, "GSS_C_MUTUAL_FLAG");
    expect(GSS_C_REPLAY_FLAG == courier_gss_flag_replay, "GSS_C_REPLAY_FLAG");
    expect(GSS_C_GSS_CODE == courier_gss_code_routine, "GSS_C_GSS_CODE");
    expect(GSS_C_MECH_CODE == courier_gss_code_mechanism, "GSS_C_MECH_CODE");
    expect(GSS_S_CONTINUE_NEEDED == courier_gss_continue_needed, "GSS_S_CONTINUE_NEEDED");
    expect(GSS_ERROR(GSS_S_UNAVAILABLE) && courier_gss_is_error(GSS_S_UNAVAILABLE), "GSS_ERROR of a routine error");
    expect(GSS_ERROR(GSS_S_CALL_BAD_STRUCTURE) && courier_gss_is_error(GSS_S_CALL_BAD_STRUCTURE), "GSS_ERROR of a calling error");
    expect(!GSS_ERROR(GSS_S_CONTINUE_NEEDED) && !courier_gss_is_error(GSS_S_CONTINUE_NEEDED), "GSS_ERROR of a supplementary status");
    // The OIDs gssapi_loader.c spells out are the library's.
    expect(GSS_C_NT_HOSTBASED_SERVICE->length == 10
               && memcmp(GSS_C_NT_HOSTBASED_SERVICE->elements, "\x2a\x86\x48\x86\xf7\x12\x01\x02\x01\x04", 10) == 0,
           "GSS_C_NT_HOSTBASED_SERVICE");
    expect(gss_mech_krb5->length == 9 && memcmp(gss_mech_krb5->elements, "\x2a\x86\x48\x86\xf7\x12\x01\x02\x02", 9) == 0,
           "gss_mech_krb5");
    return failures == 0 ? 0 : 1;
}
