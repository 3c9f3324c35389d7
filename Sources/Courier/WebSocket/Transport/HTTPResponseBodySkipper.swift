import Foundation

/// Reads past the body of a response on a connection that goes on (HTTP/1.1 keep-alive): the
/// NTLM 401 whose connection the handshake's second request uses. The body is a known length
/// (`Content-Length`) or chunked (RFC 9112 §7.1: size lines, data, trailer fields); a body that ends
/// with the connection, or a `Connection: close`, leaves nothing to go on with
/// (``framing(of:)`` is `nil`). Pure: bytes in, outcome out, in any split.
struct HTTPResponseBodySkipper: Sendable {
    /// How the body's end is known.
    enum Framing: Equatable, Sendable {
        /// `Content-Length` bytes.
        case length(Int)
        /// `Transfer-Encoding: chunked`.
        case chunked
    }

    /// What the bytes so far make.
    enum Outcome: Equatable, Sendable {
        case needMore
        /// The body ended; the bytes after it.
        case done(rest: Data)
        case malformed(String)
    }

    private enum State: Sendable {
        case remaining(Int)
        /// Reading a chunk-size line.
        case sizeLine([UInt8])
        /// In a chunk's data.
        case chunkData(Int)
        /// Reading the CRLF after a chunk's data.
        case chunkEnd([UInt8])
        /// Reading trailer lines until an empty one.
        case trailer([UInt8])
        case done
    }

    /// The longest line (chunk size or trailer field) read.
    static let maximumLineLength = 4096

    private var state: State
    private var consumed = 0
    private let limit: Int

    /// A skipper for a body framed as `framing`, failing once more than `limit` bytes were read.
    init(_ framing: Framing, limit: Int) {
        switch framing {
        case .length(let count): state = .remaining(count)
        case .chunked: state = .sizeLine([])
        }
        self.limit = limit
    }

    /// The framing of `response`'s body when the connection goes on after it: chunked, or a
    /// `Content-Length`; `nil` when the server closes the connection (`Connection: close`, or an
    /// HTTP/1.0 answer without keep-alive) or the body ends with the connection.
    static func framing(of response: HTTPURLResponse) -> Framing? {
        let connection = tokens(response.value(forHTTPHeaderField: "Connection"))
        if connection.contains("close") { return nil }
        if response.httpVersion == "HTTP/1.0", !connection.contains("keep-alive") { return nil }
        if let coding = tokens(response.value(forHTTPHeaderField: "Transfer-Encoding")).last {
            return coding == "chunked" ? .chunked : nil
        }
        guard let text = response.value(forHTTPHeaderField: "Content-Length"),
              let length = Int(text.trimmingCharacters(in: .whitespaces)), length >= 0 else { return nil }
        return .length(length)
    }

    private static func tokens(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
    }

    /// Reads `chunk`.
    mutating func append(_ chunk: UnsafeRawBufferPointer) -> Outcome {
        var index = 0
        while index < chunk.count {
            switch state {
            case .done:
                return .done(rest: Data(chunk[index...]))
            case .remaining(let count), .chunkData(let count):
                let taken = min(count, chunk.count - index)
                index += taken
                guard consume(taken) else { return tooLong() }
                if case .remaining = state {
                    state = count == taken ? .done : .remaining(count - taken)
                } else {
                    state = count == taken ? .chunkEnd([]) : .chunkData(count - taken)
                }
            case .sizeLine(var line), .chunkEnd(var line), .trailer(var line):
                let byte = chunk[index]
                index += 1
                guard consume(1) else { return tooLong() }
                guard byte == UInt8(ascii: "\n") else {
                    line.append(byte)
                    guard line.count <= Self.maximumLineLength else { return .malformed("a chunked body's line is too long") }
                    replaceLine(line)
                    continue
                }
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                if let problem = lineEnded(line) { return .malformed(problem) }
            }
        }
        if case .done = state { return .done(rest: Data()) }
        // A body of length 0 is done before any byte arrives.
        if case .remaining(0) = state {
            state = .done
            return .done(rest: Data())
        }
        return .needMore
    }

    /// Whether the body is already over (a `Content-Length: 0`): no byte needs to arrive.
    var isComplete: Bool {
        switch state {
        case .done, .remaining(0): true
        default: false
        }
    }

    private mutating func consume(_ bytes: Int) -> Bool {
        consumed += bytes
        return consumed <= limit
    }

    private func tooLong() -> Outcome { .malformed("the body is longer than \(limit) bytes") }

    /// Keeps the partial `line` in the current line-reading state.
    private mutating func replaceLine(_ line: [UInt8]) {
        switch state {
        case .sizeLine: state = .sizeLine(line)
        case .chunkEnd: state = .chunkEnd(line)
        case .trailer: state = .trailer(line)
        default: break
        }
    }

    /// A whole line (without its CRLF) was read; the problem when it is malformed.
    private mutating func lineEnded(_ line: [UInt8]) -> String? {
        switch state {
        case .sizeLine:
            let text = String(decoding: line, as: UTF8.self)
            let digits = text.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            guard let size = Int(digits.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
                return "a chunk size is not a hexadecimal number"
            }
            state = size == 0 ? .trailer([]) : .chunkData(size)
        case .chunkEnd:
            guard line.isEmpty else { return "a chunk's data is not followed by CRLF" }
            state = .sizeLine([])
        case .trailer:
            state = line.isEmpty ? .done : .trailer([])
        default:
            break
        }
        return nil
    }
}
