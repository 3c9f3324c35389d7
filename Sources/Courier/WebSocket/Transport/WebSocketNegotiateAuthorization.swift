internal import CGSSAPI
import Foundation

/// `Authorization: Negotiate …` (RFC 4559, SPNEGO) for the WebSocket handshake, which Courier
/// writes itself: libcurl only opens the connection (``WebSocketConnector``), so it cannot answer
/// a server's Negotiate challenge as it does for a data task.
///
/// Does what libcurl 7.88 does for a data task: the initial context token of
/// `gss_init_sec_context` with the SPNEGO mechanism for the host-based service `HTTP@<host>` (the
/// URL's host as written: no DNS canonicalization here, `krb5.conf` decides the rest), from the
/// default credential — the ambient Kerberos ticket cache (`KRB5CCNAME`); the user and password of
/// the delegate's credential are not used, as libcurl does not use them. Mutual authentication and
/// replay detection are requested (libcurl's flags), and, as libcurl 7.88 does, the server's
/// answering token (`WWW-Authenticate: Negotiate <token>` on the 101) is not verified: libcurl reads
/// `WWW-Authenticate` only on a 401. With Kerberos the exchange is one leg, so each token goes on a
/// new connection, as a Digest answer does.
///
/// Every GSS call's status is checked: a failure (no ticket, an unknown service principal, an
/// unreachable KDC) throws a `URLError` carrying GSS's own major and minor messages
/// (`gss_display_status`). The name, the context and every buffer are released on every path.
/// `gss_init_sec_context` may wait for the KDC, so callers make the token off the delegate's queue.
enum WebSocketNegotiateAuthorization {
    /// The service of the target principal, as libcurl's default (`CURLOPT_SERVICE_NAME`).
    static let defaultService = "HTTP"

    /// The `Authorization` value for `httpURL`'s server: `Negotiate` and the base64 token.
    /// - Throws: `userAuthenticationRequired` (failing URL `url`) when GSS-API cannot make a token.
    static func value(for httpURL: URL, url: URL?, service: String = defaultService) throws(URLError) -> String {
        guard let rawHost = httpURL.host, !rawHost.isEmpty else {
            throw URLError(.badURL, url: url, description: "The WebSocket URL has no host to name the Negotiate service principal.")
        }
        let host = rawHost.hasPrefix("[") && rawHost.hasSuffix("]") ? String(rawHost.dropFirst().dropLast()) : rawHost
        let target = "\(service)@\(host)"
        let token = try initialToken(target: target, url: url)
        return "Negotiate " + token.base64EncodedString()
    }

    /// The first SPNEGO token for the host-based service name `target` (`service@host`).
    private static func initialToken(target: String, url: URL?) throws(URLError) -> Data {
        var minor: OM_uint32 = 0
        var name: gss_name_t?
        var nameBuffer = Array(target.utf8)
        let imported = nameBuffer.withUnsafeMutableBytes { bytes in
            var buffer = gss_buffer_desc(length: bytes.count, value: bytes.baseAddress)
            return gss_import_name(&minor, &buffer, courier_gss_hostbased_service(), &name)
        }
        if courier_gss_is_error(imported) != 0 {
            throw failure("the service name \(target) could not be imported", major: imported, minor: minor, url: url)
        }
        defer {
            var releaseMinor: OM_uint32 = 0
            gss_release_name(&releaseMinor, &name)
        }

        var context: gss_ctx_id_t?
        defer {
            if context != nil {
                var deleteMinor: OM_uint32 = 0
                gss_delete_sec_context(&deleteMinor, &context, nil)
            }
        }
        var output = gss_buffer_desc(length: 0, value: nil)
        defer {
            var releaseMinor: OM_uint32 = 0
            gss_release_buffer(&releaseMinor, &output)
        }
        let flags = OM_uint32(GSS_C_MUTUAL_FLAG | GSS_C_REPLAY_FLAG)
        let major = gss_init_sec_context(&minor, nil, &context, name, courier_gss_spnego_mechanism(), flags, 0,
                                         nil, nil, nil, &output, nil, nil)
        if courier_gss_is_error(major) != 0 {
            throw failure("no Negotiate token could be made for \(target)", major: major, minor: minor, url: url,
                          detail: kerberosCredentialProblem())
        }
        guard major == 0 || major == courier_gss_continue_needed(), output.length > 0, let bytes = output.value else {
            throw URLError(.userAuthenticationRequired, url: url,
                           description: "No Negotiate token could be made for \(target): GSS-API returned no token (status \(major)).")
        }
        return Data(bytes: bytes, count: output.length)
    }

    /// A `userAuthenticationRequired` error whose description has GSS's messages for `major`
    /// (the routine's) and `minor` (the mechanism's), then `detail`.
    private static func failure(_ what: String, major: OM_uint32, minor: OM_uint32, url: URL?, detail: String? = nil) -> URLError {
        var text = "\(what): \(statusMessages(major, type: GSS_C_GSS_CODE).joined(separator: "; "))"
        let mechanism = minor == 0 ? [] : statusMessages(minor, type: GSS_C_MECH_CODE)
        if !mechanism.isEmpty { text += " (\(mechanism.joined(separator: "; ")))" }
        if let detail { text += ". Kerberos: \(detail)" }
        return URLError(.userAuthenticationRequired, url: url, description: "\(text.prefix(1).uppercased())\(text.dropFirst()).")
    }

    /// Why the default Kerberos credential cannot be used, or `nil` when it can. SPNEGO reports a
    /// missing ticket only as "cannot find mechanisms to negotiate"; acquiring the Kerberos
    /// mechanism's own credential says what is wrong (no ticket cache, an expired ticket).
    private static func kerberosCredentialProblem() -> String? {
        var minor: OM_uint32 = 0
        var credential: gss_cred_id_t?
        var mechanisms = gss_OID_set_desc(count: 1, elements: courier_gss_krb5_mechanism())
        let major = gss_acquire_cred(&minor, nil, 0, &mechanisms, Int32(GSS_C_INITIATE), &credential, nil, nil)
        if credential != nil {
            var releaseMinor: OM_uint32 = 0
            gss_release_cred(&releaseMinor, &credential)
        }
        guard courier_gss_is_error(major) != 0 else { return nil }
        let messages = minor == 0 ? statusMessages(major, type: GSS_C_GSS_CODE) : statusMessages(minor, type: GSS_C_MECH_CODE)
        return messages.joined(separator: "; ")
    }

    /// The messages `gss_display_status` gives for `status` of `type` (`GSS_C_GSS_CODE` or
    /// `GSS_C_MECH_CODE`); a bounded loop, each buffer released.
    static func statusMessages(_ status: OM_uint32, type: Int32) -> [String] {
        var messages: [String] = []
        var messageContext: OM_uint32 = 0
        for _ in 0..<8 {
            var minor: OM_uint32 = 0
            var buffer = gss_buffer_desc(length: 0, value: nil)
            let major = gss_display_status(&minor, status, type, nil, &messageContext, &buffer)
            if courier_gss_is_error(major) == 0, let value = buffer.value, buffer.length > 0 {
                let message = String(decoding: UnsafeRawBufferPointer(start: value, count: buffer.length), as: UTF8.self)
                messages.append(message.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            gss_release_buffer(&minor, &buffer)
            if courier_gss_is_error(major) != 0 || messageContext == 0 { break }
        }
        return messages.isEmpty ? ["GSS-API status \(status)"] : messages
    }
}
