import Foundation
import Testing
@testable import Courier

/// A response with thousands of `Set-Cookie` lines fills the session's cookie store only up to the
/// per-domain limit (``CookieJarLimits``), keeping the newest.
@Suite("HTTP cookie limits")
struct HTTPCookieLimitsTests {
    @Test func thousandsOfSetCookieLinesKeepTheNewest180() async throws {
        let count = 5000
        let headers = (0..<count).map { ("Set-Cookie", "c\($0)=v; Path=/") }
        let server = try FaultServer(routes: ["/cookies": .respond(.ok(Data("ok\n".utf8), headers: headers))])
        defer { server.stop() }
        let session = HTTPTest.session()
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url("/cookies"))
        #expect(result.error == nil)
        let names = session.configuration.httpCookieStorage?.cookies?.map(\.name) ?? []
        #expect(names == ((count - CookieJarLimits.maximumCookiesPerDomain)..<count).map { "c\($0)" })
    }
}
