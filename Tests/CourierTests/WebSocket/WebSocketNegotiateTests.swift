import Foundation
import Testing
@testable import Courier
import CMallocInfo

/// Negotiate (SPNEGO with Kerberos, RFC 4559) in the WebSocket opening handshake, against the
/// tests' own KDC (``KerberosTestRealm``) and a pyspnego server (``NegotiateTestServer``): the 401's
/// Negotiate offer goes to the task's delegate as for a data task, and the answer's token comes
/// from the ambient ticket cache; over ws and over wss (the server's TLS port, with the test PKI's
/// certificate).
@Suite("WebSocket Negotiate", .serialized)
struct WebSocketNegotiateTests {
    /// What an echo exchange over an opened WebSocket gave.
    private struct Echo: Sendable {
        var text: String?
        var data: Data?
        var error: (any Error)?
        var closeCode: URLSessionWebSocketTask.CloseCode
        /// The principal the server authenticated (from the 101).
        var principal: String?
        var seen: NegotiateTestDelegate.Seen
    }

    /// Opens `/ws` (ws, or wss with `secure`, trusting the test PKI) with the user's ticket and a
    /// delegate whose credential names another user, echoes a text and a binary message, and closes
    /// with a normal closure; through `proxy` (an HTTP proxy's CONNECT tunnel) when given.
    private func echo(secure: Bool, proxy: ForwardProxy? = nil) async throws -> Echo {
        let server = try await NegotiateTestServer.shared()
        return try await server.realm.withClient(ticket: true) {
            let delegate = NegotiateTestDelegate()
            let session = WebSocketTest.session(delegate: delegate) {
                $0.tlsTrustAnchors = TLSTrustAnchors(file: server.pki.rootCA.path)
                if let proxy {
                    // wss goes through the HTTPS keys (Apple's dictionary), ws through the HTTP ones.
                    $0.connectionProxyDictionary = ["HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port,
                                                    "HTTPSEnable": 1, "HTTPSProxy": "127.0.0.1", "HTTPSPort": proxy.port]
                }
            }
            defer { session.invalidateAndCancel() }
            let task = session.webSocketTask(with: server.url("/ws", webSocket: true, secure: secure))
            task.resume()
            try await WebSocketTest.send(.string("kerberos"), on: task)
            let text = WebSocketTest.text(try await WebSocketTest.receive(task))
            try await WebSocketTest.send(.data(Data([0, 1, 2, 255])), on: task)
            let data = WebSocketTest.data(try await WebSocketTest.receive(task))
            task.cancel(with: .normalClosure, reason: nil)
            let error = try await delegate.completion()
            let principal = (task.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "X-Negotiate-Principal")
            return Echo(text: text, data: data, error: error, closeCode: task.closeCode, principal: principal,
                        seen: delegate.seen.current)
        }
    }

    /// Whether `echo` opened as the ticket's user, echoed both messages and closed cleanly, after
    /// one Negotiate challenge in a protection space of `spaceProtocol`.
    private func openedAsTheTicketsUser(_ echo: Echo, spaceProtocol: String) -> Bool {
        echo.text == "kerberos" && echo.data == Data([0, 1, 2, 255]) && echo.error == nil
            && echo.closeCode == .normalClosure && echo.seen.challenges == [NSURLAuthenticationMethodNegotiate]
            && echo.seen.spaceProtocols == [spaceProtocol] && echo.seen.events == ["open", "close", "complete"]
            && echo.principal == "\(KerberosTestRealm.user)@\(KerberosTestRealm.realm)"
    }

    /// The delegate's credential names another user: the server sees the ticket's.
    @Test func withATicketTheHandshakeOpensAsTheTicketsUserEchoesAndClosesCleanly() async throws {
        let echo = try await echo(secure: false)
        #expect(openedAsTheTicketsUser(echo, spaceProtocol: "http"), "\(echo)")
    }

    /// The same over TLS: the token names `HTTP@127.0.0.1` as for ws, and the challenge's space is https.
    @Test func wssWithATicketOpensOverTLSAsTheTicketsUserEchoesAndClosesCleanly() async throws {
        let echo = try await echo(secure: true)
        #expect(openedAsTheTicketsUser(echo, spaceProtocol: "https"), "\(echo)")
    }

    /// Through an HTTP proxy both connections (the 401's and the retry's) are CONNECT tunnels to
    /// the server, and the token is the same as without the proxy.
    @Test(arguments: [false, true])
    func throughAProxyTunnelTheHandshakeOpensAsTheTicketsUser(secure: Bool) async throws {
        let proxy = try ForwardProxy(.http)
        defer { proxy.stop() }
        let echo = try await echo(secure: secure, proxy: proxy)
        let connects = proxy.requests.filter { $0.method == "CONNECT" }.count
        #expect(openedAsTheTicketsUser(echo, spaceProtocol: secure ? "https" : "http") && connects == 2, "\(echo), \(connects) CONNECTs")
    }

    /// wss to a server whose certificate the session does not trust: the delegate accepts it, and
    /// the Negotiate retry's new connection keeps that acceptance (no second trust challenge).
    @Test func wssToAnAcceptedUntrustedServerKeepsTheAcceptanceForTheNegotiateRetry() async throws {
        let server = try await NegotiateTestServer.shared()
        let (text, seen) = try await server.realm.withClient(ticket: true) {
            let delegate = NegotiateTestDelegate(acceptsServerTrust: true)
            let session = WebSocketTest.session(delegate: delegate)
            defer { session.invalidateAndCancel() }
            let task = session.webSocketTask(with: server.url("/ws", webSocket: true, secure: true))
            task.resume()
            try await WebSocketTest.send(.string("accepted"), on: task)
            return (WebSocketTest.text(try await WebSocketTest.receive(task)), delegate.seen.current)
        }
        #expect(text == "accepted" && seen.challenges == [NSURLAuthenticationMethodServerTrust, NSURLAuthenticationMethodNegotiate],
                "\(seen.challenges)")
    }

    /// Opens `/ws` (ws, or wss with `secure`) with the user's ticket and a delegate that performs
    /// default handling, with a credential stored for the server's Negotiate space (http or https);
    /// the echo of one message.
    private func echoWithStoredCredential(secure: Bool) async throws -> String? {
        let server = try await NegotiateTestServer.shared()
        return try await server.realm.withClient(ticket: true) {
            let storage = URLCredentialStorage()
            let space = URLProtectionSpace(host: "127.0.0.1", port: secure ? server.httpsPort : server.port,
                                           protocol: secure ? "https" : "http", realm: nil,
                                           authenticationMethod: NSURLAuthenticationMethodNegotiate)
            storage.setDefaultCredential(URLCredential(user: KerberosTestRealm.user, password: "", persistence: .forSession), for: space)
            let session = WebSocketTest.session(delegate: NegotiateTestDelegate(.performDefaultHandling, nil)) {
                $0.urlCredentialStorage = storage
                $0.tlsTrustAnchors = TLSTrustAnchors(file: server.pki.rootCA.path)
            }
            defer { session.invalidateAndCancel() }
            let task = session.webSocketTask(with: server.url("/ws", webSocket: true, secure: secure))
            task.resume()
            try await WebSocketTest.send(.string("stored"), on: task)
            return WebSocketTest.text(try await WebSocketTest.receive(task))
        }
    }

    @Test func defaultHandlingUsesTheStoredCredentialOfTheNegotiateSpace() async throws {
        #expect(try await echoWithStoredCredential(secure: false) == "stored")
    }

    /// A wss handshake's space is the https one, as for an https data task.
    @Test func wssDefaultHandlingUsesTheStoredCredentialOfTheHTTPSNegotiateSpace() async throws {
        #expect(try await echoWithStoredCredential(secure: true) == "stored")
    }

    /// Opens `/ws` (ws, or wss with `secure`) without a ticket: the task's error and the status of
    /// its response.
    private func failedHandshake(secure: Bool) async throws -> (error: URLError?, status: Int?) {
        let server = try await NegotiateTestServer.shared()
        return try await server.realm.withClient(ticket: false) {
            let delegate = NegotiateTestDelegate()
            let session = WebSocketTest.session(delegate: delegate) {
                $0.tlsTrustAnchors = TLSTrustAnchors(file: server.pki.rootCA.path)
            }
            defer { session.invalidateAndCancel() }
            let task = session.webSocketTask(with: server.url("/ws", webSocket: true, secure: secure))
            task.resume()
            let error = try await delegate.completion() as? URLError
            return (error, (task.response as? HTTPURLResponse)?.statusCode)
        }
    }

    /// Whether the 401 ended the task with GSS-API's reason (no Kerberos credentials).
    private func endedWithGSSAPIsReason(_ error: URLError?, status: Int?) -> Bool {
        let underlying = error?.userInfo[NSUnderlyingErrorKey] as? URLError
        return error?.code == .badServerResponse && status == 401 && underlying?.code == .userAuthenticationRequired
            && error?.localizedDescription.contains("No Kerberos credentials available") == true
    }

    @Test func withoutATicketThe401EndsTheTaskWithGSSAPIsReason() async throws {
        let (error, status) = try await failedHandshake(secure: false)
        #expect(endedWithGSSAPIsReason(error, status: status), "\(String(describing: error)), status \(String(describing: status))")
    }

    @Test func wssWithoutATicketThe401EndsTheTaskWithTheSameReason() async throws {
        let (error, status) = try await failedHandshake(secure: true)
        #expect(endedWithGSSAPIsReason(error, status: status), "\(String(describing: error)), status \(String(describing: status))")
    }

    @Test func aTokenForTheServerIsAnInitialContextToken() async throws {
        let server = try await NegotiateTestServer.shared()
        let value = try await server.realm.withClient(ticket: true) {
            try WebSocketNegotiateAuthorization.value(for: server.url("/ws"), url: server.url("/ws", webSocket: true))
        }
        // RFC 2743 §3.1: an initial context token starts with the application tag 0x60.
        let token = value.hasPrefix("Negotiate ") ? Data(base64Encoded: String(value.dropFirst("Negotiate ".count))) : nil
        #expect(token?.first == 0x60)
    }

    @Test func anUnknownServicePrincipalIsAClearURLError() async throws {
        let server = try await NegotiateTestServer.shared()
        let url = server.url("/ws", webSocket: true)
        let error = try await server.realm.withClient(ticket: true) { () -> URLError? in
            do {
                _ = try WebSocketNegotiateAuthorization.value(for: server.url("/ws"), url: url, service: "courier-unknown")
                return nil
            } catch let error as URLError {
                return error
            }
        }
        #expect(error?.code == .userAuthenticationRequired && error?.failingURL == url
                && error?.localizedDescription.contains("courier-unknown/127.0.0.1@COURIER.TEST not found in Kerberos database") == true)
    }

    @Test func anUnreachableKDCIsAClearURLError() async throws {
        let server = try await NegotiateTestServer.shared()
        let url = server.url("/ws", webSocket: true)
        // A service whose ticket is not in the cache yet, so GSS-API must ask the (missing) KDC.
        let error = try await server.realm.withClient(ticket: true, kdcReachable: false) { () -> URLError? in
            do {
                _ = try WebSocketNegotiateAuthorization.value(for: server.url("/ws"), url: url, service: "courier-unreachable")
                return nil
            } catch let error as URLError {
                return error
            }
        }
        #expect(error?.code == .userAuthenticationRequired
                && error?.localizedDescription.contains("Cannot contact any KDC for realm 'COURIER.TEST'") == true)
    }

    /// Every GSS name, context, credential and buffer is released: tokens made and failures
    /// reported many times over leave the heap where it was (a leak of the smallest, the token's
    /// own buffer of about 600 bytes, would grow it by more than 300 KiB here).
    @Test func tokensAndFailuresLeaveTheHeapWhereItWas() async throws {
        let server = try await NegotiateTestServer.shared()
        let growth = try await server.realm.withClient(ticket: true) {
            func round() {
                _ = try? WebSocketNegotiateAuthorization.value(for: server.url("/ws"), url: nil)
                _ = try? WebSocketNegotiateAuthorization.value(for: server.url("/ws"), url: nil, service: "courier-unknown")
            }
            for _ in 0..<50 { round() }
            let baseline = Int(mallinfo2().uordblks)
            for _ in 0..<500 { round() }
            return Int(mallinfo2().uordblks) - baseline
        }
        #expect(growth < 128 << 10, "the heap grew by \(growth >> 10) KiB over 500 tokens and 500 failures")
    }
}
