import Foundation
import Testing
@testable import Courier

/// What a task computes from its session's settings without asking the session: the handler's
/// configuration and the timeouts. No session, no server.
@Suite("Session settings a task is handed")
struct SessionSettingsTests {
    static let settings = SessionSettings(timeoutIntervalForRequest: 12, timeoutIntervalForResource: 300,
                                          requestCachePolicy: .reloadIgnoringLocalCacheData,
                                          additionalHeaders: [(name: "X-Extra", value: "1")])
    static let url = URL(string: "http://127.0.0.1:1/x")!

    @Test func aRequestWithTheDefaultTimeoutGetsTheConfigurationsIdleTimeout() {
        let configuration = Self.settings.handlerConfiguration(for: URLRequest(url: Self.url), environment: .standalone(),
                                                               cachedResponseStoredAt: nil)
        #expect(configuration.requestTimeout == 12 && configuration.resourceTimeout == 300)
    }

    @Test func aRequestsOwnTimeoutReachesItsHandler() {
        var request = URLRequest(url: Self.url)
        request.timeoutInterval = 3
        let configuration = Self.settings.handlerConfiguration(for: request, environment: .standalone(), cachedResponseStoredAt: nil)
        #expect(configuration.requestTimeout == 3)
    }

    @Test func theTasksTimeoutsAreTheHandlersInNanoseconds() {
        var request = URLRequest(url: Self.url)
        request.timeoutInterval = 3
        let timeouts = Self.settings.timeouts(for: request)
        #expect(timeouts.request == 3_000_000_000 && timeouts.resource == 300_000_000_000)
    }

    @Test func theDefaultCachePolicyBecomesTheConfigurations() {
        let configuration = Self.settings.handlerConfiguration(for: URLRequest(url: Self.url), environment: .standalone(),
                                                               cachedResponseStoredAt: nil)
        #expect(configuration.cachePolicy == .reloadIgnoringLocalCacheData)
    }

    @Test func aPreparedRequestGetsTheAdditionalHeaders() {
        let prepared = Self.settings.prepare(URLRequest(url: Self.url), uploadBody: .none, originalURL: Self.url, redirected: false)
        #expect(prepared.value(forHTTPHeaderField: "X-Extra") == "1")
    }
}
