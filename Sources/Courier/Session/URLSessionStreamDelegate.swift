import Foundation

/// Events of stream tasks. Every method is optional; one a task's own delegate does not implement
/// goes to the session's delegate.
public protocol URLSessionStreamDelegate: URLSessionTaskDelegate {
    /// The read side of the connection closed: the peer ended its side, or `closeRead()` took
    /// effect. Called once, even when no read is queued.
    func urlSession(_ session: URLSession, readClosedFor streamTask: URLSessionStreamTask)

    /// The write side closed: `closeWrite()` took effect.
    func urlSession(_ session: URLSession, writeClosedFor streamTask: URLSessionStreamTask)

    /// Apple's platforms call this when a better network path to the host appears. Linux has no
    /// such notification: Courier never calls it.
    func urlSession(_ session: URLSession, betterRouteDiscoveredFor streamTask: URLSessionStreamTask)

    /// `captureStreams()` took effect: the connection is now these streams (open them before use).
    /// The task has ended and receives no more messages.
    func urlSession(_ session: URLSession, streamTask: URLSessionStreamTask, didBecome inputStream: InputStream,
                    outputStream: OutputStream)
}

extension URLSessionStreamDelegate {
    /// Does nothing.
    public func urlSession(_ session: URLSession, readClosedFor streamTask: URLSessionStreamTask) {
        DelegateFallthrough.defers(.readClosed, of: self)
    }

    /// Does nothing.
    public func urlSession(_ session: URLSession, writeClosedFor streamTask: URLSessionStreamTask) {
        DelegateFallthrough.defers(.writeClosed, of: self)
    }

    /// Does nothing (and is never called on Linux).
    public func urlSession(_ session: URLSession, betterRouteDiscoveredFor streamTask: URLSessionStreamTask) {}

    /// Does nothing: the streams are closed when released.
    public func urlSession(_ session: URLSession, streamTask: URLSessionStreamTask, didBecome inputStream: InputStream,
                           outputStream: OutputStream) {
        DelegateFallthrough.defers(.becameStreams, of: self)
    }
}
