import Foundation

/// The lines of an asynchronous sequence of UTF-8 bytes, as `AsyncBytes.lines` returns them.
///
/// Lines end at LF, CR or CRLF; the terminators are not included. A last line without a terminator
/// is returned too. Invalid UTF-8 is replaced with U+FFFD.
public struct AsyncLineSequence<Base: AsyncSequence>: AsyncSequence where Base.Element == UInt8 {
    public typealias Element = String

    private let base: Base

    /// The lines of `base`.
    public init(_ base: Base) { self.base = base }

    /// An iterator reading `base` line by line.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator())
    }

    /// Reads bytes up to the next line end.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var base: Base.AsyncIterator
        private var pending: UInt8?
        private var finished = false

        init(base: Base.AsyncIterator) { self.base = base }

        /// The next line, or `nil` at the end.
        public mutating func next() async throws -> String? {
            guard !finished else { return nil }
            var line: [UInt8] = []
            while true {
                let byte: UInt8?
                if let held = pending {
                    byte = held
                    pending = nil
                } else {
                    byte = try await base.next()
                }
                guard let byte else {
                    finished = true
                    return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
                }
                switch byte {
                case 0x0A:
                    return String(decoding: line, as: UTF8.self)
                case 0x0D:
                    if let after = try await base.next(), after != 0x0A { pending = after }
                    return String(decoding: line, as: UTF8.self)
                default:
                    line.append(byte)
                }
            }
        }
    }
}

extension AsyncLineSequence: Sendable where Base: Sendable {}
