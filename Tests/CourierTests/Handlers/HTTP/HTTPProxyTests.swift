import Foundation
import Testing
@testable import Courier

/// `connectionProxyDictionary`: plain HTTP through a forward proxy, HTTPS tunnelled with CONNECT,
/// SOCKS5, which proxy serves which scheme (Apple's keys: `HTTPEnable`/`HTTPProxy`/`HTTPPort` for
/// http URLs, `HTTPSEnable`/`HTTPSProxy`/`HTTPSPort` for https URLs, `SOCKSEnable`/`SOCKSProxy`/
/// `SOCKSPort` for both), proxy authentication, and failures. The proxy is an in-process
/// ``ForwardProxy``; the origin is the test nginx.
@Suite("HTTP proxies")
struct HTTPProxyTests {

    private static func httpProxy(_ proxy: ForwardProxy) -> [AnyHashable: Any] {
        ["HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port]
    }

    private static func httpsProxy(_ proxy: ForwardProxy) -> [AnyHashable: Any] {
        ["HTTPSEnable": 1, "HTTPSProxy": "127.0.0.1", "HTTPSPort": proxy.port]
    }

    @Test func httpRequestGoesThroughTheProxy() async throws {
        let server = try await HTTPTest.nginx()
        let proxy = try ForwardProxy(.http)
        defer { proxy.stop() }
        let session = HTTPTest.session { $0.connectionProxyDictionary = Self.httpProxy(proxy) }
        defer { session.finishTasksAndInvalidate() }

        let hello = try await session.loadData(server.url(NginxServer.Files.hello))
        #expect(hello.error == nil)
        #expect(try HTTPTest.http(hello.response).statusCode == 200)
        #expect(hello.data == NginxServer.Files.helloContents)

        let echo = try await session.loadData(server.url("/echo?via=proxy"))
        #expect(echo.error == nil)
        let echoed = try HTTPTest.echoed(echo.data)
        #expect(echoed.header("X-Courier-Proxy") == "1", "the origin got the request from the proxy")
        #expect(echoed.target == "/echo?via=proxy")

        let seen = proxy.requests
        #expect(seen.map(\.method) == ["GET", "GET"])
        #expect(seen.map(\.target) == [server.url(NginxServer.Files.hello).absoluteString, server.url("/echo?via=proxy").absoluteString],
                "absolute-form request targets")
        #expect(seen.first?.header("Host") == "127.0.0.1:\(server.httpPort)")
    }

    @Test func postBodyGoesThroughTheProxy() async throws {
        let server = try await HTTPTest.nginx()
        let proxy = try ForwardProxy(.http)
        defer { proxy.stop() }
        let session = HTTPTest.session { $0.connectionProxyDictionary = Self.httpProxy(proxy) }
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: server.url("/echo"))
        request.httpMethod = "POST"
        let body = try HTTPTest.randomBytes(100_000)
        request.httpBody = body
        let result = try await session.loadData(request)
        #expect(result.error == nil)
        let echoed = try HTTPTest.echoed(result.data)
        #expect(echoed.method == "POST")
        #expect(echoed.bodyLength == body.count)
        #expect(echoed.body == body)
        #expect(proxy.requests.map(\.method) == ["POST"])
    }

    @Test func httpsRequestTunnelsWithConnect() async throws {
        let server = try await HTTPTest.nginx()
        let proxy = try ForwardProxy(.http)
        defer { proxy.stop() }
        let delegate = try HTTPTest.trustingDelegate(server)
        let session = HTTPTest.session(delegate: delegate) { $0.connectionProxyDictionary = Self.httpsProxy(proxy) }
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.httpsURL(NginxServer.Files.json))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == NginxServer.Files.jsonContents)
        let response = try HTTPTest.http(delegate.response(of: task))
        #expect(response.statusCode == 200, "the tunnel's 200 is not the response")
        #expect(response.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("application/json") == true)
        #expect(delegate.events(for: task).filter { $0.name == "response" }.count == 1)
        let seen = proxy.requests
        #expect(!seen.isEmpty)
        #expect(seen.allSatisfy { $0.method == "CONNECT" && $0.target == "127.0.0.1:\(server.httpsPort)" },
                "only tunnels: \(seen.map { "\($0.method) \($0.target)" })")
    }

    @Test func httpsThroughTheProxyToAServerOnlyTheProxyCanReach() async throws {
        // The host name resolves nowhere but in the proxy: the server-trust challenge still shows the
        // server's certificate, and accepting it loads.
        let server = try await HTTPTest.nginx()
        let proxy = try ForwardProxy(.http, hosts: [HTTPTest.unresolvableHost: "127.0.0.1"])
        defer { proxy.stop() }
        let seen = Locked<[URLAuthenticationChallenge]>([])
        let expected = try HTTPTest.derCertificate(fromPEM: server.certificatePEM)
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
            seen.withLock { $0.append(challenge) }
            guard let trust = challenge.protectionSpace.serverTrust, trust.certificates.first == expected else {
                answer(.cancelAuthenticationChallenge, nil)
                return
            }
            answer(.useCredential, URLCredential(trust: trust))
        }))
        let session = HTTPTest.session(delegate: delegate) { $0.connectionProxyDictionary = Self.httpsProxy(proxy) }
        defer { session.finishTasksAndInvalidate() }
        let url = URL(string: "https://\(HTTPTest.unresolvableHost):\(server.httpsPort)\(NginxServer.Files.hello)")!
        let task = session.dataTask(with: url)
        try await HTTPTest.run(task, delegate)
        let challenge = try #require(seen.current.first)
        #expect(challenge.protectionSpace.host == HTTPTest.unresolvableHost)
        #expect(challenge.protectionSpace.serverTrust?.certificates.first == expected,
                "the chain comes through the proxy too")
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == NginxServer.Files.helloContents)
    }

    @Test func socksProxyCarriesHTTPAndHTTPS() async throws {
        let server = try await HTTPTest.nginx()
        let proxy = try ForwardProxy(.socks5)
        defer { proxy.stop() }
        let delegate = try HTTPTest.trustingDelegate(server)
        let session = HTTPTest.session(delegate: delegate) {
            $0.connectionProxyDictionary = ["SOCKSEnable": 1, "SOCKSProxy": "127.0.0.1", "SOCKSPort": proxy.port]
        }
        defer { session.finishTasksAndInvalidate() }
        let plain = session.dataTask(with: server.url(NginxServer.Files.hello))
        try await HTTPTest.run(plain, delegate)
        #expect(delegate.error(of: plain) == nil)
        #expect(delegate.body(of: plain) == NginxServer.Files.helloContents)
        let secure = session.dataTask(with: server.httpsURL(NginxServer.Files.json))
        try await HTTPTest.run(secure, delegate)
        #expect(delegate.error(of: secure) == nil)
        #expect(delegate.body(of: secure) == NginxServer.Files.jsonContents)
        let targets = Set(proxy.requests.map(\.target))
        #expect(targets.contains("127.0.0.1:\(server.httpPort)"))
        #expect(targets.contains("127.0.0.1:\(server.httpsPort)"))
        #expect(proxy.requests.allSatisfy { $0.method == "SOCKS5" })
    }

    @Test func eachSchemeUsesItsOwnProxy() async throws {
        let server = try await HTTPTest.nginx()
        let forHTTP = try ForwardProxy(.http)
        let forHTTPS = try ForwardProxy(.http)
        defer {
            forHTTP.stop()
            forHTTPS.stop()
        }
        let delegate = try HTTPTest.trustingDelegate(server)
        let session = HTTPTest.session(delegate: delegate) {
            $0.connectionProxyDictionary = Self.httpProxy(forHTTP).merging(Self.httpsProxy(forHTTPS)) { $1 }
        }
        defer { session.finishTasksAndInvalidate() }
        let plain = session.dataTask(with: server.url(NginxServer.Files.hello))
        try await HTTPTest.run(plain, delegate)
        let secure = session.dataTask(with: server.httpsURL(NginxServer.Files.hello))
        try await HTTPTest.run(secure, delegate)
        #expect(delegate.error(of: plain) == nil)
        #expect(delegate.error(of: secure) == nil)
        #expect(forHTTP.requests.map(\.method) == ["GET"])
        #expect(!forHTTPS.requests.isEmpty && forHTTPS.requests.allSatisfy { $0.method == "CONNECT" })
    }

    @Test func httpProxyIsNotUsedForHTTPSAndTheOtherWayRound() async throws {
        let server = try await HTTPTest.nginx()
        let proxy = try ForwardProxy(.http)
        defer { proxy.stop() }
        let delegate = try HTTPTest.trustingDelegate(server)
        let httpOnly = HTTPTest.session(delegate: delegate) { $0.connectionProxyDictionary = Self.httpProxy(proxy) }
        let httpsOnly = HTTPTest.session(delegate: delegate) { $0.connectionProxyDictionary = Self.httpsProxy(proxy) }
        defer {
            httpOnly.finishTasksAndInvalidate()
            httpsOnly.finishTasksAndInvalidate()
        }
        let secure = httpOnly.dataTask(with: server.httpsURL(NginxServer.Files.hello))
        try await HTTPTest.run(secure, delegate)
        #expect(delegate.error(of: secure) == nil)
        let plain = httpsOnly.dataTask(with: server.url(NginxServer.Files.hello))
        try await HTTPTest.run(plain, delegate)
        #expect(delegate.error(of: plain) == nil)
        #expect(proxy.connections == 0, "seen: \(proxy.requests.map { "\($0.method) \($0.target)" })")
    }

    @Test func disabledProxyIsNotUsed() async throws {
        let server = try await HTTPTest.nginx()
        let proxy = try ForwardProxy(.http)
        defer { proxy.stop() }
        let session = HTTPTest.session {
            $0.connectionProxyDictionary = ["HTTPEnable": 0, "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port]
        }
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url(NginxServer.Files.hello))
        #expect(result.error == nil)
        #expect(result.data == NginxServer.Files.helloContents)
        #expect(proxy.connections == 0)
    }

    @Test func proxyThatRefusesConnectionsFails() async throws {
        let server = try await HTTPTest.nginx()
        let port = try HTTPTest.refusedPort()
        let session = HTTPTest.session {
            $0.connectionProxyDictionary = ["HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": port,
                                            "HTTPSEnable": 1, "HTTPSProxy": "127.0.0.1", "HTTPSPort": port]
        }
        defer { session.finishTasksAndInvalidate() }
        for url in [server.url(NginxServer.Files.hello), server.httpsURL(NginxServer.Files.hello)] {
            let started = Date()
            let result = try await session.loadData(url, timeout: 20)
            let error = try HTTPTest.urlError(result.error)
            #expect(error.code == .cannotConnectToHost, "\(url): got \(error.code): \(error.localizedDescription)")
            #expect(HTTPTest.hasFailingURL(error, url))
            #expect(result.response == nil)
            #expect(Date().timeIntervalSince(started) < 10)
        }
    }

    @Test func proxyAuthenticationChallenge() async throws {
        let server = try await HTTPTest.nginx()
        let proxy = try ForwardProxy(.http, credentials: ("proxy-user", "proxy pass"))
        defer { proxy.stop() }
        let seen = Locked<[URLAuthenticationChallenge]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
            seen.withLock { $0.append(challenge) }
            answer(.useCredential, URLCredential(user: "proxy-user", password: "proxy pass", persistence: .none))
        }))
        let session = HTTPTest.session(delegate: delegate) { $0.connectionProxyDictionary = Self.httpProxy(proxy) }
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.url(NginxServer.Files.hello))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == NginxServer.Files.helloContents)
        #expect((delegate.response(of: task) as? HTTPURLResponse)?.statusCode == 200)
        let challenge = try #require(seen.current.first)
        #expect(seen.current.count == 1)
        let space = challenge.protectionSpace
        #expect(space.isProxy())
        #expect(space.proxyType == NSURLProtectionSpaceHTTPProxy)
        #expect(space.authenticationMethod == NSURLAuthenticationMethodHTTPBasic)
        #expect(space.realm == ForwardProxy.realm)
        // Apple's proxy protection space names the proxy, not the origin server.
        #expect(space.host == "127.0.0.1")
        #expect(space.port == proxy.port)
        #expect(challenge.failureResponse.map { ($0 as? HTTPURLResponse)?.statusCode } == 407)
        #expect(proxy.requests.last?.header("Proxy-Authorization")?.hasPrefix("Basic ") == true)
    }

    /// A 407, then a 401 from the origin behind the proxy: the next attempt sends both credentials.
    @Test func proxyAndServerCredentialsAreBothSent() async throws {
        let secret = Data("behind two doors\n".utf8)
        let origin = try FaultServer(routes: ["/private": .basicAuth(realm: "origin", user: "alice", password: "origin pass",
                                                                     body: secret)])
        defer { origin.stop() }
        let proxy = try ForwardProxy(.http, credentials: ("proxy-user", "proxy pass"))
        defer { proxy.stop() }
        let seen = Locked<[URLProtectionSpace]>([])
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
            let count = seen.withLock { $0.append(challenge.protectionSpace); return $0.count }
            guard count <= 4 else { return answer(.cancelAuthenticationChallenge, nil) }
            let credential = challenge.protectionSpace.isProxy()
                ? URLCredential(user: "proxy-user", password: "proxy pass", persistence: .forSession)
                : URLCredential(user: "alice", password: "origin pass", persistence: .none)
            answer(.useCredential, credential)
        }))
        let session = HTTPTest.session(delegate: delegate) { $0.connectionProxyDictionary = Self.httpProxy(proxy) }
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: origin.url("/private"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(try HTTPTest.http(delegate.response(of: task)).statusCode == 200)
        #expect(delegate.body(of: task) == secret)
        #expect(seen.current.map { $0.isProxy() } == [true, false], "one proxy, then one server challenge")
        let last = try #require(proxy.requests.last)
        #expect(last.header("Proxy-Authorization") == "Basic " + Data("proxy-user:proxy pass".utf8).base64EncodedString())
        #expect(last.header("Authorization") == "Basic " + Data("alice:origin pass".utf8).base64EncodedString())
        #expect(proxy.requests.count == 3)
        let proxySpace = try #require(seen.current.first)
        #expect(session.configuration.urlCredentialStorage?.credentials(for: proxySpace)?["proxy-user"]?.password == "proxy pass",
                "the proxy credential was stored once the proxy let a request through")
    }

    /// `Proxy-Authorization` no longer follows a redirect to another origin as a header field; the
    /// credential Courier answers a proxy challenge with is not one (libcurl's proxy credentials),
    /// so every hop through the proxy still carries it.
    @Test func proxyCredentialsStillReachTheProxyAfterARedirectToAnotherOrigin() async throws {
        let other = try FaultServer(routes: ["/landing": .respond(.ok(Data("other origin".utf8)))])
        defer { other.stop() }
        let origin = try FaultServer(routes: [
            "/away": .respond(.ok(Data(), status: 302, reason: "Found", headers: [("Location", other.url("/landing").absoluteString)])),
        ])
        defer { origin.stop() }
        let proxy = try ForwardProxy(.http, credentials: ("proxy-user", "proxy pass"))
        defer { proxy.stop() }
        let challenges = Locked(0)
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { _, challenge, answer in
            let count = challenges.withLock { $0 += 1; return $0 }
            guard count <= 4, challenge.protectionSpace.isProxy() else { return answer(.cancelAuthenticationChallenge, nil) }
            answer(.useCredential, URLCredential(user: "proxy-user", password: "proxy pass", persistence: .forSession))
        }))
        let session = HTTPTest.session(delegate: delegate) { $0.connectionProxyDictionary = Self.httpProxy(proxy) }
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: origin.url("/away"))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == Data("other origin".utf8))
        let expected = "Basic " + Data("proxy-user:proxy pass".utf8).base64EncodedString()
        let landing = try #require(proxy.requests.last)
        #expect(landing.target.hasSuffix("/landing"), "\(landing.target)")
        #expect(landing.header("Proxy-Authorization") == expected)
        #expect(other.requests(for: "/landing").count == 1)
    }

    @Test func proxyAuthenticationForATunnel() async throws {
        let server = try await HTTPTest.nginx()
        let proxy = try ForwardProxy(.http, credentials: ("proxy-user", "proxy pass"))
        defer { proxy.stop() }
        let methods = Locked<[String]>([])
        let trust = try HTTPTest.trustingNginx(server)
        let delegate = EventDelegate(EventDelegate.Hooks(challenge: { task, challenge, answer in
            methods.withLock { $0.append(challenge.protectionSpace.authenticationMethod) }
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust {
                trust(task, challenge, answer)
            } else {
                #expect(challenge.protectionSpace.isProxy())
                #expect(challenge.protectionSpace.port == proxy.port)
                answer(.useCredential, URLCredential(user: "proxy-user", password: "proxy pass", persistence: .none))
            }
        }))
        let session = HTTPTest.session(delegate: delegate) { $0.connectionProxyDictionary = Self.httpsProxy(proxy) }
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: server.httpsURL(NginxServer.Files.hello))
        try await HTTPTest.run(task, delegate)
        #expect(delegate.error(of: task) == nil)
        #expect(delegate.body(of: task) == NginxServer.Files.helloContents)
        #expect(methods.current.contains(NSURLAuthenticationMethodHTTPBasic))
    }

    @Test func proxyAuthenticationWithoutCredentialDeliversThe407() async throws {
        let server = try await HTTPTest.nginx()
        let proxy = try ForwardProxy(.http, credentials: ("proxy-user", "proxy pass"))
        defer { proxy.stop() }
        let session = HTTPTest.session { $0.connectionProxyDictionary = Self.httpProxy(proxy) }
        defer { session.finishTasksAndInvalidate() }
        let result = try await session.loadData(server.url(NginxServer.Files.hello))
        #expect(result.error == nil)
        #expect(try HTTPTest.http(result.response).statusCode == 407)
        #expect(result.data == Data("proxy authentication required\n".utf8))
    }

    /// Without a proxy dictionary libcurl follows `http_proxy`; a dictionary, even an empty one,
    /// replaces that (Apple: a non-nil dictionary replaces the system settings). Run in a child test
    /// process whose environment names this process's proxy.
    @Test func environmentProxyAppliesOnlyWithoutADictionary() async throws {
        let proxy = try ForwardProxy(.http)
        defer { proxy.stop() }
        let (status, output) = try await HTTPTest.runThisTestBinary(
            filter: "environmentProxyChild",
            environment: ["COURIER_TEST_ENVIRONMENT_PROXY": "1", "http_proxy": "http://127.0.0.1:\(proxy.port)",
                          "no_proxy": "", "NO_PROXY": ""],
            timeout: 120)
        #expect(status == 0, "child run failed:\n\(output.suffix(3000))")
        let paths = proxy.requests.compactMap { URL(string: $0.target)?.path }
        #expect(paths == ["/through-environment-proxy"], "the proxy saw \(proxy.requests.map(\.target))")
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["COURIER_TEST_ENVIRONMENT_PROXY"] != nil))
    func environmentProxyChild() async throws {
        let origin = try FaultServer(fallback: .respond(.ok(Data("origin\n".utf8))))
        defer { origin.stop() }
        for (dictionary, path) in [(nil, "/through-environment-proxy"), ([:], "/empty-dictionary"),
                                   (["HTTPEnable": 0] as [AnyHashable: Any]?, "/disabled")] as [([AnyHashable: Any]?, String)] {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            configuration.connectionProxyDictionary = dictionary
            let session = URLSession(configuration: configuration)
            defer { session.finishTasksAndInvalidate() }
            let result = try await session.loadData(origin.url(path))
            #expect(result.error == nil, "\(path): \(String(describing: result.error))")
            #expect(result.data == Data("origin\n".utf8))
        }
    }
}
