import Foundation

/// A connection a handler hands over to a stream task (a data task's `.becomeStream` after an HTTP
/// upgrade): a connected TCP socket that belongs to no handler or library any more, and the bytes
/// already read from it past the response's head, which the stream reads first.
struct HandedOverConnection: Sendable {
    /// The connected, non-blocking socket; its new owner closes it.
    let descriptor: Int32
    /// Bytes read past the response's head that the task has not seen.
    let buffered: Data
}
