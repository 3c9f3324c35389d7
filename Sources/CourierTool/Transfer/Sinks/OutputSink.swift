import Foundation

/// Where a response body goes, chunk by chunk, as the chunks arrive: nothing here holds a whole body.
///
/// A fetch calls ``write(_:)`` for each chunk, then exactly one of ``finish()`` (the load succeeded) or
/// ``abort()`` (it failed). Calls come from the session's delegate queue, one at a time.
protocol OutputSink: Sendable {
    /// Appends `data` to the output.
    func write(_ data: Data) throws
    /// Makes the output final (for a file: moves it into place).
    func finish() throws
    /// Drops the output (for a file: removes the partial copy; the target is left as it was).
    func abort()
}
