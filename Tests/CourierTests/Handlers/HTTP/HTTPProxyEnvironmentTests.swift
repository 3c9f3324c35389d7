import Foundation
import Testing
@testable import Courier

/// The record of which proxy variables libcurl would read is this process's environment.
@Suite("HTTPProxyEnvironment")
struct HTTPProxyEnvironmentTests {
    @Test("names a proxy or exclusions exactly when the environment sets one of libcurl's variables")
    func matchesTheProcessEnvironment() {
        let environment = ProcessInfo.processInfo.environment
        let expected = HTTPProxyEnvironment(
            namesProxy: HTTPProxyEnvironment.proxyVariables.contains { environment[$0] != nil },
            namesExclusions: HTTPProxyEnvironment.exclusionVariables.contains { environment[$0] != nil })
        #expect(HTTPProxyEnvironment.process == expected)
    }
}
