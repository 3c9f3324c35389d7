internal import CCurl
import Foundation
import Logging

/// libcurl's trace of one transfer (`CURLOPT_DEBUGFUNCTION`), as `trace`-level records of the
/// load's logger: libcurl's notes, the request and response lines and headers (or FTP commands and
/// replies), and body sizes, each record's ``WireTraceKind`` in its metadata.
///
/// Switched on per transfer, only when the logger's level is `trace` (``attach(to:logger:logsSecrets:)``):
/// otherwise libcurl is not verbose and no callback runs. Each line is made safe before it is
/// logged: control bytes are escaped (``LogText``), and — unless the session logs secrets — the
/// values of credential headers, FTP passwords and proxy URL passwords are redacted
/// (``LogRedaction``). TLS records and body bytes are never logged, only counted.
///
/// The callback runs on whichever thread drives the transfer; the object is immutable.
final class CurlWireTrace: Sendable {
    private let logger: Logger
    private let logsSecrets: Bool

    private init(logger: Logger, logsSecrets: Bool) {
        self.logger = logger
        self.logsSecrets = logsSecrets
    }

    /// Turns libcurl's trace on for `transfer` when `logger` logs at `trace`; the transfer keeps the
    /// trace (libcurl holds it unretained). Called while the transfer is configured.
    static func attach(to transfer: CurlTransfer, logger: Logger, logsSecrets: Bool) {
        guard CourierLogging.emits(.trace, logger) else { return }
        let trace = CurlWireTrace(logger: logger, logsSecrets: logsSecrets)
        transfer.wireTrace = trace
        _ = courier_easy_setopt_pointer(transfer.easy, CURLOPT_DEBUGDATA, Unmanaged.passUnretained(trace).toOpaque())
        _ = courier_easy_setopt_debug_function(transfer.easy, curlDebugCallback)
        _ = courier_easy_setopt_long(transfer.easy, CURLOPT_VERBOSE, 1)
    }

    /// The metadata of each kind's records, made once.
    private static let metadata: [WireTraceKind: Logger.Metadata] = Dictionary(
        uniqueKeysWithValues: WireTraceKind.allCases.map { ($0, [CourierLogKey.wire: .string($0.rawValue)]) })

    /// One callback's worth of trace.
    fileprivate func record(_ type: curl_infotype, _ bytes: UnsafeRawBufferPointer) {
        switch type {
        case CURLINFO_TEXT:
            lines(of: bytes, as: .info)
        case CURLINFO_HEADER_OUT:
            lines(of: bytes, as: .headerOut)
        case CURLINFO_HEADER_IN:
            lines(of: bytes, as: .headerIn)
        case CURLINFO_DATA_OUT:
            log("[\(bytes.count) bytes data]", as: .dataOut)
        case CURLINFO_DATA_IN:
            log("[\(bytes.count) bytes data]", as: .dataIn)
        default:
            // TLS records (CURLINFO_SSL_DATA_IN/OUT): encrypted, and of no use in a log.
            break
        }
    }

    /// Logs each non-empty line of `bytes` (a request head arrives as one block).
    private func lines(of bytes: UnsafeRawBufferPointer, as kind: WireTraceKind) {
        var start = 0
        while start < bytes.count {
            let newline = bytes[start...].firstIndex(of: 0x0A)
            let end = newline.map { $0 + 1 } ?? bytes.count
            let text = LogText.line(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
            if !text.isEmpty { log(redacted(text, kind), as: kind) }
            start = end
        }
    }

    private func redacted(_ line: String, _ kind: WireTraceKind) -> String {
        guard !logsSecrets else { return line }
        return kind == .info ? LogRedaction.userinfo(in: line) : LogRedaction.line(line)
    }

    private func log(_ text: String, as kind: WireTraceKind) {
        logger.trace("\(text)", metadata: Self.metadata[kind])
    }
}

private let curlDebugCallback: @convention(c) (UnsafeMutableRawPointer?, curl_infotype, UnsafeMutablePointer<CChar>?, Int, UnsafeMutableRawPointer?) -> Int32 = { _, type, data, size, userdata in
    guard let userdata, let data else { return 0 }
    let trace = Unmanaged<CurlWireTrace>.fromOpaque(userdata).takeUnretainedValue()
    trace.record(type, UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
