/// What one trace-level record of what went over the wire shows, carried in its metadata under
/// ``CourierLogKey/wire``, so that a log handler can render it as `curl -v` does (`courier -v`).
package enum WireTraceKind: String, Sendable, CaseIterable {
    /// A note from libcurl or the SSH connection: connecting, TLS, negotiated methods (`* `).
    case info
    /// A request line, header line or FTP command sent (`> `).
    case headerOut = "header-out"
    /// A status line, header line or FTP reply received (`< `).
    case headerIn = "header-in"
    /// Body bytes sent, as a count only (a body can hold secrets too).
    case dataOut = "data-out"
    /// Body bytes received, as a count only.
    case dataIn = "data-in"

    /// The prefix `curl -v` puts before such a line.
    package var prefix: String {
        switch self {
        case .info: "* "
        case .headerOut, .dataOut: "> "
        case .headerIn, .dataIn: "< "
        }
    }
}
