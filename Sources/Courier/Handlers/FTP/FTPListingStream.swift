import Foundation

/// Turns an FTP listing reply (`MLSD` or `LIST`) into listing body lines as its bytes arrive: each
/// complete line is parsed (``FTPListingParser``) and its entry encoded (``URLDirectoryListing``) at
/// once, so only the unfinished last line is held, never the whole reply.
///
/// The reply is capped (``DirectoryListingLimits``): more entries or bytes than the caps, or a line
/// longer than ``maximumLineLength``, is an error, and the handler stops the transfer.
struct FTPListingStream {
    /// The longest line accepted (64 KiB): an entry's line is a few hundred bytes at most, so a longer
    /// one is not a listing.
    static let maximumLineLength = 64 << 10

    /// Whether the reply answers `MLSD` (otherwise `LIST`).
    let machineReadable: Bool
    /// The current time, to place `LIST` dates that have no year.
    let now: Date
    let maximumEntries: Int
    let maximumBytes: Int
    let maximumLineLength: Int
    /// Entries delivered so far.
    private(set) var entryCount = 0
    /// Reply bytes received so far.
    private(set) var receivedBytes = 0
    /// The bytes of the line not finished yet.
    private var partialLine: [UInt8] = []

    init(machineReadable: Bool, now: Date = Date(), maximumEntries: Int = DirectoryListingLimits.maximumEntries,
         maximumBytes: Int = DirectoryListingLimits.maximumBytes, maximumLineLength: Int = Self.maximumLineLength) {
        self.machineReadable = machineReadable
        self.now = now
        self.maximumEntries = maximumEntries
        self.maximumBytes = maximumBytes
        self.maximumLineLength = maximumLineLength
    }

    /// The body lines for the lines `bytes` completes.
    /// - Throws: `dataLengthExceedsMaximum` past a cap, `cannotParseResponse` for a line too long;
    ///   `url` is the error's failing URL.
    mutating func consume(_ bytes: UnsafeRawBufferPointer, url: URL?) throws(URLError) -> Data {
        receivedBytes += bytes.count
        guard receivedBytes <= maximumBytes else { throw DirectoryListingLimits.tooManyBytes(maximum: maximumBytes, url: url) }
        var body = Data()
        var start = 0
        while let newline = Self.newline(in: bytes, from: start) {
            let piece = UnsafeRawBufferPointer(rebasing: bytes[start..<newline])
            if partialLine.isEmpty {
                try appendEntry(ofLine: piece, to: &body, url: url)
            } else {
                partialLine.append(contentsOf: piece)
                let line = partialLine
                partialLine.removeAll(keepingCapacity: true)
                try appendEntry(ofLine: line, to: &body, url: url)
            }
            start = newline + 1
        }
        partialLine.append(contentsOf: bytes[start...])
        try checkLength(partialLine.count, url: url)
        return body
    }

    /// The body line for a last line without a line break, at the end of the reply.
    mutating func finish(url: URL?) throws(URLError) -> Data {
        var body = Data()
        let line = partialLine
        partialLine.removeAll()
        try appendEntry(ofLine: line, to: &body, url: url)
        return body
    }

    private mutating func appendEntry<Line: BidirectionalCollection>(ofLine line: Line, to body: inout Data,
                                                                     url: URL?) throws(URLError) where Line.Element == UInt8 {
        try checkLength(line.count, url: url)
        guard let text = FTPListingParser.text(ofLine: line),
              let entry = FTPListingParser.entry(fromLine: text, mlsd: machineReadable, now: now) else { return }
        entryCount += 1
        guard entryCount <= maximumEntries else { throw DirectoryListingLimits.tooManyEntries(maximum: maximumEntries, url: url) }
        body.append(URLDirectoryListing.encodeLine(entry))
    }

    /// The index of the first LF in `buffer` at or after `start`.
    private static func newline(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < buffer.count, let base = buffer.baseAddress,
              let found = memchr(base + start, 0x0A, buffer.count - start) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    private func checkLength(_ length: Int, url: URL?) throws(URLError) {
        guard length > maximumLineLength else { return }
        throw URLError(.cannotParseResponse, url: url,
                       description: "A line of the FTP directory listing is longer than \(maximumLineLength) bytes.")
    }
}
