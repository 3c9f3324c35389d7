import Foundation
import Testing
@testable import Courier

/// The libcurl engine's shared parts, seen from requests: easy handles reused across a session's
/// tasks carry nothing from one request to the next, and requests started from any thread — the
/// caller's, the delegate queue's, many at once — all run (a start either drives libcurl on the
/// calling thread or is queued for the loop thread).
@Suite("HTTP engine reuse")
struct HTTPEngineReuseTests {

    @Test func aReusedHandleCarriesNothingFromTheRequestBefore() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }

        var put = URLRequest(url: server.url("/echo?first"))
        put.httpMethod = "PUT"
        put.setValue("kept-for-this-request-only", forHTTPHeaderField: "X-Courier-Probe")
        put.setValue("bytes=0-9", forHTTPHeaderField: "Range")
        let body = try HTTPTest.randomBytes(50_000)
        let first = put
        let (firstData, firstResponse) = try await withTimeout(20) { try await session.upload(for: first, from: body) }
        #expect(try HTTPTest.http(firstResponse).statusCode == 200)
        let firstEcho = try HTTPTest.echoed(firstData)
        #expect(firstEcho.method == "PUT")
        #expect(firstEcho.body == body)
        #expect(firstEcho.header("X-Courier-Probe") == "kept-for-this-request-only")

        // The same session's next requests get the finished transfer's easy handle back.
        for index in 0..<3 {
            let result = try await session.loadData(server.url("/echo?next=\(index)"))
            #expect(result.error == nil)
            let echo = try HTTPTest.echoed(result.data)
            #expect(echo.method == "GET")
            #expect(echo.target == "/echo?next=\(index)")
            #expect(echo.bodyLength <= 0)
            #expect(echo.header("X-Courier-Probe") == nil)
            #expect(echo.header("Range") == nil)
            #expect(echo.header("Content-Length") == nil)
        }
    }

    @Test func requestsStartedFromCompletionHandlersAllRun() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let url = server.url(NginxServer.Files.hello)
        let chainLength = 40
        let done = OneShot<[Int]>()
        let statuses = Locked<[Int]>([])
        // Each completion handler (on the delegate queue) starts the next request.
        @Sendable func start(_ remaining: Int) {
            session.dataTask(with: url) { data, response, error in
                let status = error == nil && data == NginxServer.Files.helloContents
                    ? (response as? HTTPURLResponse)?.statusCode ?? -1 : -1
                let all = statuses.withLock { $0.append(status); return $0 }
                if remaining > 1 { start(remaining - 1) } else { done.fulfil(all) }
            }.resume()
        }
        start(chainLength)
        let seen = try await done.wait(timeout: 30)
        #expect(seen == Array(repeating: 200, count: chainLength))
    }

    @Test func requestsStartedFromManyThreadsAtOnceAllRun() async throws {
        let server = try await HTTPTest.nginx()
        let session = HTTPTest.session { $0.httpMaximumConnectionsPerHost = 8 }
        defer { session.finishTasksAndInvalidate() }
        let count = 96
        let finished = Locked<[Int: Int]>([:])
        let done = OneShot<Void>()
        DispatchQueue.concurrentPerform(iterations: count) { index in
            session.dataTask(with: server.url("/echo?n=\(index)")) { data, _, error in
                let ok = error == nil && (try? EchoedRequest(json: data ?? Data()))?.target == "/echo?n=\(index)"
                let total = finished.withLock { $0[index] = ok ? 1 : 0; return $0.count }
                if total == count { done.fulfil(()) }
            }.resume()
        }
        try await done.wait(timeout: 30)
        let results = finished.current
        #expect(results.count == count)
        #expect(results.values.allSatisfy { $0 == 1 }, "every request got its own echo")
    }
}
