internal import CCurl
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The socket of an HTTP/1.1 upgrade request, owned by Courier rather than by libcurl, so that a data
/// task answered `101 Switching Protocols` can hand its connection to a stream task
/// (`.becomeStream`).
///
/// A transfer that may upgrade (``prepare(_:)``) gets a connection of its own
/// (`CURLOPT_FRESH_CONNECT`, `CURLOPT_FORBID_REUSE`: libcurl neither takes an idle connection nor
/// keeps this one), made by `CURLOPT_OPENSOCKETFUNCTION` and closed by
/// `CURLOPT_CLOSESOCKETFUNCTION`, both here. The socket is recorded for its transfer while it is
/// open, so the loop finds it without libcurl's help (libcurl 7.88 answers `CURLINFO_ACTIVESOCKET`
/// only for `CURLOPT_CONNECT_ONLY` connections).
///
/// Handing over (``CurlMultiLoop/handOver(_:completion:)``, on the loop thread): the socket is
/// marked, the easy handle is removed mid-transfer — libcurl 7.88 then closes the connection (it
/// never caches one whose transfer did not finish, and this one is never reused anyway) through the
/// close callback, which leaves a marked socket open — and ``finishHandOver(_:)`` checks that the
/// close really came. Only then does the descriptor belong to the stream task; no libcurl
/// connection refers to it any more.
enum CurlUpgradeSocket {
    /// What the registry knows of one open socket.
    private struct Entry {
        /// The transfer that opened it.
        let owner: ObjectIdentifier
        /// It is being handed over: libcurl's close must leave it open.
        var handingOver = false
        /// libcurl closed its connection while it was being handed over.
        var releasedByLibcurl = false
    }

    /// The open sockets of upgrade transfers, by descriptor. An entry exists exactly while the
    /// descriptor is open and libcurl's: a number cannot be in it twice.
    private static let registry = Locked<[Int32: Entry]>([:])

    /// Gives `transfer` a connection of its own whose socket Courier opens and closes. Before the
    /// transfer is added to the loop.
    static func prepare(_ transfer: CurlTransfer) {
        transfer.set(CURLOPT_FRESH_CONNECT, 1)
        transfer.set(CURLOPT_FORBID_REUSE, 1)
        _ = courier_easy_setopt_pointer(transfer.easy, CURLOPT_OPENSOCKETDATA, Unmanaged.passUnretained(transfer).toOpaque())
        _ = courier_easy_setopt_opensocket_function(transfer.easy, openSocket)
        // No user data: the close may come after the transfer was released, so it looks the socket
        // up by number.
        _ = courier_easy_setopt_closesocket_function(transfer.easy, closeSocket)
    }

    /// The open socket `transfer` connected with, if it opened exactly one that is still open.
    static func socket(of transfer: CurlTransfer) -> Int32? {
        let owner = ObjectIdentifier(transfer)
        let open = registry.withLock { entries in entries.filter { $0.value.owner == owner }.map(\.key) }
        return open.count == 1 ? open.first : nil
    }

    /// Marks `socket` as being handed over: libcurl's close leaves it open.
    static func beginHandOver(_ socket: Int32) {
        registry.withLock { $0[socket]?.handingOver = true }
    }

    /// Ends the hand-over of `socket`: `true` when libcurl closed its connection meanwhile (the
    /// descriptor is now the caller's to use and close), `false` when libcurl still holds it (the
    /// mark is removed and the caller must not use the descriptor).
    static func finishHandOver(_ socket: Int32) -> Bool {
        registry.withLock { entries in
            guard let entry = entries[socket] else { return false }
            if entry.releasedByLibcurl {
                entries[socket] = nil
                return true
            }
            entries[socket]?.handingOver = false
            return false
        }
    }

    /// libcurl asks for a socket (`CURLOPT_OPENSOCKETFUNCTION`).
    fileprivate static func open(family: Int32, type: Int32, protocol: Int32, for transfer: CurlTransfer) -> Int32 {
        let descriptor = Glibc.socket(family, type, `protocol`)
        guard descriptor >= 0 else { return -1 } // CURL_SOCKET_BAD
        registry.withLock { $0[descriptor] = Entry(owner: ObjectIdentifier(transfer)) }
        return descriptor
    }

    /// libcurl closes a socket (`CURLOPT_CLOSESOCKETFUNCTION`): closed, unless it is being handed over.
    fileprivate static func close(_ descriptor: Int32) -> Int32 {
        let keep: Bool = registry.withLock { entries in
            guard let entry = entries[descriptor] else { return false }
            if entry.handingOver {
                entries[descriptor]?.releasedByLibcurl = true
                return true
            }
            entries[descriptor] = nil
            return false
        }
        return keep ? 0 : Glibc.close(descriptor)
    }
}

private let openSocket: @convention(c) (UnsafeMutableRawPointer?, curlsocktype, UnsafeMutablePointer<curl_sockaddr>?) -> curl_socket_t = { transfer, _, address in
    guard let transfer, let address else { return -1 }
    return CurlUpgradeSocket.open(family: address.pointee.family, type: address.pointee.socktype,
                                  protocol: address.pointee.protocol,
                                  for: Unmanaged<CurlTransfer>.fromOpaque(transfer).takeUnretainedValue())
}

private let closeSocket: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t) -> Int32 = { _, descriptor in
    CurlUpgradeSocket.close(descriptor)
}
