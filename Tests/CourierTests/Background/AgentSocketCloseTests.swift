import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import Courier

/// ``AgentSocket/close()`` against its reader: the descriptor's number is closed only once no
/// thread is in a call on it, and no call touches it after `close()` (Concurrency.md §3.3 (7)).
@Suite("Agent socket closing", .serialized)
struct AgentSocketCloseTests {
    /// A message of the frame format (the socket's `send` and `receive` take any `Codable`).
    private struct Probe: Codable, Equatable {
        var text: String
    }

    /// A connected pair of Unix stream sockets.
    private static func socketPair() throws -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        let result = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends)
        try #require(result == 0, "socketpair failed")
        return (ends[0], ends[1])
    }

    @Test("a read after close ends with closed, even when the number now names another socket with a frame waiting")
    func readAfterCloseDoesNotReadAReusedNumber() throws {
        let (mine, peer) = try Self.socketPair()
        defer { Glibc.close(peer) }
        let socket = AgentSocket(descriptor: mine)
        socket.close()
        // The lowest free number is taken next: `mine`'s, now a stranger's socket with a frame in it
        // (a reader between two `recv` calls used to read it).
        let (stranger, strangerPeer) = try Self.socketPair()
        let sender = AgentSocket(descriptor: strangerPeer)
        defer { Glibc.close(stranger); sender.close() }
        try #require(stranger == mine, "the number \(mine) was not reused (\(stranger)); the test cannot show the race")
        try sender.send(Probe(text: "not yours"))
        #expect(throws: AgentWireError.closed) { _ = try socket.receive(Probe.self) }
    }

    @Test("close wakes a reader blocked in recv, which ends with closed")
    func closeWakesABlockedReader() async throws {
        let (mine, peer) = try Self.socketPair()
        defer { Glibc.close(peer) }
        let socket = AgentSocket(descriptor: mine)
        let outcome = Locked<Result<Probe, AgentWireError>?>(nil)
        let reader = Thread {
            do throws(AgentWireError) {
                let probe = try socket.receive(Probe.self)
                outcome.withLock { $0 = .success(probe) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
        }
        reader.start()
        await settle(0.2)
        socket.close()
        let ended = await waitUntil { outcome.current != nil }
        #expect(ended && outcome.current == .failure(.closed))
    }
}
