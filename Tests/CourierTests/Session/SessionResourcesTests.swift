import Foundation
import Testing
@testable import Courier

/// A session's handler resources (event loops and their threads) end with the session and are not
/// made again afterwards.
@Suite("Session resources")
struct SessionResourcesTests {

    /// A resource that counts how often it is shut down.
    private final class CountingResource: HandlerSessionResource, @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        var shutDowns: Int { lock.withLock { count } }
        func shutDown() { lock.withLock { count += 1 } }
    }

    @Test func noResourceIsMadeAfterTheResourcesWereShutDown() {
        let resources = HandlerSessionResources()
        let first = CountingResource()
        #expect(resources.resource("counting") { first } === first)
        resources.shutDownAll()
        #expect(first.shutDowns == 1)
        var madeAgain = false
        let second: CountingResource? = resources.resource("counting") {
            madeAgain = true
            return CountingResource()
        }
        #expect(second == nil)
        #expect(!madeAgain)
    }

    @Test func anInvalidatedSessionEndsItsCurlThreadAndMakesNoOther() async throws {
        let server = try FaultServer(routes: ["/hello": .respond(.ok(Data("hello".utf8)))])
        defer { server.stop() }
        let before = Self.threads(named: "courier.curl")
        let delegate = EventDelegate()
        let session = HTTPTest.session(delegate: delegate)
        let result = try await session.loadData(server.url("/hello"))
        #expect(result.data == Data("hello".utf8))
        #expect(Self.threads(named: "courier.curl") >= 1)

        session.invalidateAndCancel()
        #expect(await delegate.waitForEvent { $0.name == "invalid" })
        #expect(await waitUntil(timeout: 3) { Self.threads(named: "courier.curl") <= before })
        // A handler asking for the loop now (a load racing the invalidation) gets none.
        #expect(CurlMultiLoop.shared(in: session.environment) == nil)
        #expect(Self.threads(named: "courier.curl") <= before)
    }

    /// How many threads of this process carry `name` (`/proc/self/task/*/comm`).
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
            return comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }
}

/// Sessions an app never invalidates, kept alive by a delegate that holds its session (Apple's
/// documentation calls that a leak, and it is one here too): each keeps its multi handle, but none
/// keeps a thread once it is idle.
@Suite("Abandoned sessions")
struct AbandonedSessionTests {

    private final class HoldingDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        var session: URLSession?
    }

    @Test func idleSessionsThatAreNeverInvalidatedKeepNoThread() async throws {
        let server = try FaultServer(routes: ["/hello": .respond(.ok(Data("hello".utf8)))])
        defer { server.stop() }
        let curlThreadsBefore = Self.curlThreads()
        var delegates: [HoldingDelegate] = []
        for _ in 0..<40 {
            let delegate = HoldingDelegate()
            let session = HTTPTest.session(delegate: delegate)
            delegate.session = session // a cycle: the session is never freed
            delegates.append(delegate)
            let result = try await session.loadData(server.url("/hello"))
            #expect(result.data == Data("hello".utf8))
        }
        #expect(await waitUntil(timeout: 5) { Self.curlThreads() <= curlThreadsBefore },
                "\(Self.curlThreads()) curl threads, \(curlThreadsBefore) before")
        // An idle session loads again: its loop starts a thread for the new transfer.
        let again = try await delegates[0].session?.loadData(server.url("/hello"))
        #expect(again?.data == Data("hello".utf8))
        for delegate in delegates {
            delegate.session?.invalidateAndCancel()
            delegate.session = nil
        }
    }

    @Test func sequentialRequestsOnOneSessionKeepItsThread() async throws {
        let server = try FaultServer(routes: ["/hello": .respond(.ok(Data("hello".utf8)))])
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.invalidateAndCancel() }
        _ = try await session.loadData(server.url("/hello"))
        let thread = Self.curlThreadIDs()
        for _ in 0..<20 { _ = try await session.loadData(server.url("/hello")) }
        #expect(!thread.isDisjoint(with: Self.curlThreadIDs()), "the loop thread was replaced between requests")
    }

    private static func curlThreads() -> Int { curlThreadIDs().count }

    /// The ids of this process's threads named `courier.curl`.
    private static func curlThreadIDs() -> Set<String> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(tasks.filter { task in
            let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)
            return comm?.trimmingCharacters(in: .whitespacesAndNewlines) == "courier.curl"
        })
    }
}
