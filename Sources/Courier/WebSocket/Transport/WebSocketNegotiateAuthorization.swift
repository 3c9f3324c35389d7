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
/// GSS-API is MIT Kerberos' library, loaded at run time (`CGSSAPI`); without it the error says so.
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
        guard courier_gss_available() != 0 else {
            let reason = courier_gss_load_error().map { String(cString: $0) } ?? "it could not be loaded"
            throw URLError(.userAuthenticationRequired, url: url,
                           description: "No Negotiate token could be made for \(target): MIT Kerberos' GSS-API library "
                               + "(libgssapi_krb5.so.2, Debian's libgssapi-krb5-2) is not available: \(reason).")
        }
        var minor: courier_gss_status = 0
        var name: courier_gss_name?
        let imported = target.utf8CString.withUnsafeBufferPointer { bytes in
            courier_gss_import_service_name(&minor, bytes.baseAddress, bytes.count - 1, &name)
        }
        defer {
            var releaseMinor: courier_gss_status = 0
            courier_gss_release_name(&releaseMinor, &name)
        }
        if courier_gss_is_error(imported) != 0 {
            throw failure("the service name \(target) could not be imported", major: imported, minor: minor, url: url)
        }

        var context: courier_gss_context?
        defer {
            var deleteMinor: courier_gss_status = 0
            courier_gss_delete_context(&deleteMinor, &context)
        }
        var output = courier_gss_buffer(length: 0, value: nil)
        defer {
            var releaseMinor: courier_gss_status = 0
            courier_gss_release_buffer(&releaseMinor, &output)
        }
        // libcurl's flags: mutual authentication and replay detection.
        let flags = courier_gss_flag_mutual | courier_gss_flag_replay
        let major = courier_gss_init_spnego_context(&minor, &context, name, flags, &output)
        if courier_gss_is_error(major) != 0 {
            throw failure("no Negotiate token could be made for \(target)", major: major, minor: minor, url: url,
                          detail: kerberosCredentialProblem())
        }
        guard major == 0 || major == courier_gss_continue_needed, output.length > 0, let bytes = output.value else {
            throw URLError(.userAuthenticationRequired, url: url,
                           description: "No Negotiate token could be made for \(target): GSS-API returned no token (status \(major)).")
        }
        return Data(bytes: bytes, count: output.length)
    }

    /// A `userAuthenticationRequired` error whose description has GSS's messages for `major`
    /// (the routine's) and `minor` (the mechanism's), then `detail`.
    private static func failure(_ what: String, major: courier_gss_status, minor: courier_gss_status, url: URL?,
                                detail: String? = nil) -> URLError {
        var text = "\(what): \(statusMessages(major, type: courier_gss_code_routine).joined(separator: "; "))"
        let mechanism = minor == 0 ? [] : statusMessages(minor, type: courier_gss_code_mechanism)
        if !mechanism.isEmpty { text += " (\(mechanism.joined(separator: "; ")))" }
        if let detail { text += ". Kerberos: \(detail)" }
        return URLError(.userAuthenticationRequired, url: url, description: "\(text.prefix(1).uppercased())\(text.dropFirst()).")
    }

    /// Why the default Kerberos credential cannot be used, or `nil` when it can. SPNEGO reports a
    /// missing ticket only as "cannot find mechanisms to negotiate"; acquiring the Kerberos
    /// mechanism's own credential says what is wrong (no ticket cache, an expired ticket).
    private static func kerberosCredentialProblem() -> String? {
        var minor: courier_gss_status = 0
        var credential: courier_gss_credential?
        let major = courier_gss_acquire_krb5_initiator(&minor, &credential)
        var releaseMinor: courier_gss_status = 0
        courier_gss_release_credential(&releaseMinor, &credential)
        guard courier_gss_is_error(major) != 0 else { return nil }
        let messages = minor == 0 ? statusMessages(major, type: courier_gss_code_routine)
            : statusMessages(minor, type: courier_gss_code_mechanism)
        return messages.joined(separator: "; ")
    }

    /// The messages `gss_display_status` gives for `status` of `type` (`courier_gss_code_routine` or
    /// `courier_gss_code_mechanism`); a bounded loop, each buffer released.
    static func statusMessages(_ status: courier_gss_status, type: Int32) -> [String] {
        var messages: [String] = []
        var messageContext: courier_gss_status = 0
        for _ in 0..<8 {
            var minor: courier_gss_status = 0
            var buffer = courier_gss_buffer(length: 0, value: nil)
            let major = courier_gss_display_status(&minor, status, type, &messageContext, &buffer)
            if courier_gss_is_error(major) == 0, let value = buffer.value, buffer.length > 0 {
                let message = String(decoding: UnsafeRawBufferPointer(start: value, count: buffer.length), as: UTF8.self)
                messages.append(message.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            courier_gss_release_buffer(&minor, &buffer)
            if courier_gss_is_error(major) != 0 || messageContext == 0 { break }
        }
        return messages.isEmpty ? ["GSS-API status \(status)"] : messages
    }
}
