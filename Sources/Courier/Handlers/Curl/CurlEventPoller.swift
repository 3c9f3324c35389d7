internal import CCurl
import Foundation

/// The epoll set a ``CurlMultiLoop`` sleeps in: the sockets libcurl asks to watch (through its
/// socket callback), and an eventfd that other threads signal to wake the loop.
///
/// `watch` and `unwatch` are called by whichever thread drives libcurl (they are serialised by
/// the loop's drive lock, as is `watched`); `wait` is called by the loop thread without that lock,
/// which epoll allows.
final class CurlEventPoller: @unchecked Sendable {
    /// One ready socket and its readiness as libcurl's `CURL_CSELECT_*` bits.
    struct Event {
        let socket: Int32
        let mask: Int32
    }

    private let epollDescriptor: Int32
    private let wakeDescriptor: Int32
    /// The sockets in the set. Touched only by the thread holding the loop's drive lock.
    private var watched = Set<Int32>()
    private var readySockets = [Int32](repeating: 0, count: 64)
    private var readyMasks = [Int32](repeating: 0, count: 64)

    /// A new set with its wake descriptor; `nil` when the system refuses either.
    init?() {
        let epoll = courier_epoll_create()
        guard epoll >= 0 else { return nil }
        let wake = courier_eventfd_create()
        guard wake >= 0 else {
            close(epoll)
            return nil
        }
        guard courier_epoll_watch(epoll, wake, 1, 1, 0) == 0 else {
            close(wake)
            close(epoll)
            return nil
        }
        epollDescriptor = epoll
        wakeDescriptor = wake
    }

    deinit {
        close(wakeDescriptor)
        close(epollDescriptor)
    }

    /// Watches `socket` for reading and/or writing (replacing an earlier interest).
    func watch(_ socket: Int32, readable: Bool, writable: Bool) {
        let isNew = watched.insert(socket).inserted
        _ = courier_epoll_watch(epollDescriptor, socket, isNew ? 1 : 0, readable ? 1 : 0, writable ? 1 : 0)
    }

    /// Stops watching `socket` (libcurl is about to close it, or needs nothing from it now).
    func unwatch(_ socket: Int32) {
        guard watched.remove(socket) != nil else { return }
        courier_epoll_unwatch(epollDescriptor, socket)
    }

    /// Wakes the thread in ``wait(milliseconds:)`` (or makes its next wait return at once).
    func wake() {
        courier_eventfd_signal(wakeDescriptor)
    }

    /// Sleeps until a watched socket is ready, ``wake()`` is called, or `milliseconds` pass (-1:
    /// no limit), and returns the ready sockets (the wake-up itself is consumed, not returned).
    /// Called by the loop thread only.
    func wait(milliseconds: Int32) -> [Event] {
        let count = readySockets.withUnsafeMutableBufferPointer { sockets in
            readyMasks.withUnsafeMutableBufferPointer { masks in
                courier_epoll_wait(epollDescriptor, sockets.baseAddress, masks.baseAddress,
                                   Int32(sockets.count), milliseconds)
            }
        }
        guard count > 0 else { return [] }
        var events: [Event] = []
        events.reserveCapacity(Int(count))
        for index in 0..<Int(count) {
            if readySockets[index] == wakeDescriptor {
                courier_eventfd_drain(wakeDescriptor)
            } else {
                events.append(Event(socket: readySockets[index], mask: readyMasks[index]))
            }
        }
        return events
    }
}
