import Courier

/// Where the HTTP header blocks of the `-v` trace end, so that each request head and each response
/// head is followed by a blank `> ` or `< ` line, as `curl -v` prints it.
///
/// libcurl traces a head line by line, and the library's records leave out the empty line that ends
/// it. So a block is known to be over only when its transfer's next record is something else: a
/// record of another kind (the response after the request, body data, a note), or the first line of
/// a new head of the same kind (the final response after `100 Continue`). A pure state value, one
/// open block per transfer: records in, lines to print out. FTP's commands and replies open no block
/// (they are single lines, and curl prints no blank line between them).
struct HeaderBlocks {
    /// The transfers whose head is being traced, and which way it goes.
    private var open: [String: WireTraceKind] = [:]

    /// The lines to print for a record of `kind` saying `message` in the trace of `transfer`: the
    /// blank line that closes the transfer's open block when this record ends it, then the record
    /// itself when `-v` shows its kind (body sizes are not shown).
    mutating func lines(transfer: String, kind: WireTraceKind, message: String) -> [String] {
        var lines: [String] = []
        let startsHead = Self.startsHead(kind, message)
        if let current = open[transfer], current != kind || startsHead {
            lines.append(current.prefix)
            open[transfer] = nil
        }
        if startsHead { open[transfer] = kind }
        switch kind {
        case .info, .headerOut, .headerIn:
            lines.append(kind.prefix + message)
        case .dataOut, .dataIn:
            break
        }
        return lines
    }

    /// Whether `message` is the first line of an HTTP head: a status line received (`HTTP/1.1 200
    /// OK`, `HTTP/2 200`) or a request line sent (`GET /path HTTP/1.1`).
    static func startsHead(_ kind: WireTraceKind, _ message: String) -> Bool {
        switch kind {
        case .headerIn:
            return message.hasPrefix("HTTP/")
        case .headerOut:
            let parts = message.split(separator: " ", omittingEmptySubsequences: false)
            return parts.count == 3 && parts[2].hasPrefix("HTTP/")
                && !parts[0].isEmpty && parts[0].allSatisfy { $0.isASCII && $0.isUppercase }
        case .info, .dataOut, .dataIn:
            return false
        }
    }
}
