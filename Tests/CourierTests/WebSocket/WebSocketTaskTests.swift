import Foundation
import Testing
@testable import Courier

/// WebSocket tasks against the Python `websockets` server (``WebSocketTestServer``), ws and wss.
@Suite("WebSocket tasks", .serialized)
struct WebSocketTaskTests {
    @Test(arguments: [false, true])
    func echoesTextAndBinary(secure: Bool) async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo", secure: secure))
        task.resume()
        try await WebSocketTest.send(.string("héllo"), on: task)
        try await WebSocketTest.send(.data(Data([0, 1, 2, 255])), on: task)
        let first = try await WebSocketTest.receive(task)
        let second = try await WebSocketTest.receive(task)
        #expect(WebSocketTest.text(first) == "héllo" && WebSocketTest.data(second) == Data([0, 1, 2, 255]))
    }

    @Test func reportsTheOpenWithTheResponse() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo"))
        task.resume()
        _ = try await recorder.opened()
        #expect((task.response as? HTTPURLResponse)?.statusCode == 101 && task.state == .running)
    }

    @Test func selectsTheServersSubprotocol() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo"), protocols: ["unknown", "superchat", "chat"])
        task.resume()
        #expect(try await recorder.opened() == "superchat")
    }

    @Test func noSubprotocolOfferedSelectsNone() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo"))
        task.resume()
        #expect(try await recorder.opened() == nil)
    }

    @Test func serverCloseReportsCodeAndReasonThenCompletes() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/close?code=4001&reason=bye"))
        task.resume()
        let error = try await recorder.completion()
        let seen = recorder.seen.current
        #expect(error == nil && seen.events == ["open", "close", "complete"] && seen.closed.first?.0 == .unsupportedData
                && seen.closed.first?.1 == Data("bye".utf8) && task.closeCode == .unsupportedData
                && task.closeReason == Data("bye".utf8))
    }

    @Test func serverCloseWithAKnownCode() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/close?code=1001&reason=later"))
        task.resume()
        _ = try await recorder.completion()
        #expect(task.closeCode == .goingAway && task.state == .completed)
    }

    @Test func aReceiveAfterTheCloseFails() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/close?code=1000"))
        task.resume()
        _ = try await recorder.completion()
        await #expect(throws: URLError.self) { _ = try await WebSocketTest.receive(task) }
    }

    @Test func reassemblesAFragmentedMessage() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/fragmented"))
        task.resume()
        #expect(WebSocketTest.text(try await WebSocketTest.receive(task)) == "frag-1 frag-2 frag-3")
    }

    @Test(arguments: [false, true])
    func receivesAMessageOfTheMaximumSize(secure: Bool) async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        defer { session.invalidateAndCancel() }
        let size = 1 << 20
        let task = session.webSocketTask(with: server.url("/large?size=\(size)", secure: secure))
        task.resume()
        let data = try #require(WebSocketTest.data(try await WebSocketTest.receive(task)))
        #expect(data.count == size && data.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
    }

    @Test func aMessageOverTheMaximumFailsWith1009() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/large?size=70000"))
        task.maximumMessageSize = 65536
        task.resume()
        let error = await #expect(throws: URLError.self) { _ = try await WebSocketTest.receive(task) }
        #expect(error?.code == .dataLengthExceedsMaximum)
    }

    @Test func echoesALargeBinaryMessage() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo", secure: true))
        task.resume()
        let payload = Data((0..<(900 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try await WebSocketTest.send(.data(payload), on: task)
        #expect(WebSocketTest.data(try await WebSocketTest.receive(task)) == payload)
    }

    @Test func pingsAreAnsweredInOrder() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo"))
        task.resume()
        let order = Locked<[Int]>([])
        for index in 0..<3 {
            task.sendPing { error in order.withLock { $0.append(error == nil ? index : -1) } }
        }
        #expect(await waitUntil { order.current.count == 3 } && order.current == [0, 1, 2])
    }

    @Test func asyncPingReturns() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo"))
        task.resume()
        try await withTimeout { try await task.sendPing() }
        #expect(task.state == .running)
    }

    @Test func manyConcurrentConnections() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        defer { session.invalidateAndCancel() }
        let echoed = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<50 {
                group.addTask {
                    let task = session.webSocketTask(with: server.url("/echo", secure: index % 2 == 1))
                    task.resume()
                    try await WebSocketTest.send(.string("n\(index)"), on: task)
                    let reply = try await WebSocketTest.receive(task)
                    task.cancel(with: .normalClosure, reason: nil)
                    return WebSocketTest.text(reply) == "n\(index)"
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(echoed == 50)
    }

    @Test func sendsTheRequestsHeadersAndCookies() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server) { configuration in
            configuration.httpAdditionalHeaders = ["X-Session-Extra": "from-config"]
        }
        defer { session.invalidateAndCancel() }
        let cookie = try #require(HTTPCookie(properties: [.domain: "127.0.0.1", .path: "/", .name: "stored", .value: "yes"]))
        session.configuration.httpCookieStorage?.setCookie(cookie)
        var request = URLRequest(url: server.url("/headers"))
        request.setValue("app-value", forHTTPHeaderField: "X-App")
        let task = session.webSocketTask(with: request)
        task.resume()
        let text = try #require(WebSocketTest.text(try await WebSocketTest.receive(task)))
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: String])
        #expect(fields["X-App"] == "app-value" && fields["X-Session-Extra"] == "from-config"
                && fields["Cookie"] == "stored=yes" && fields["Sec-WebSocket-Version"] == "13")
    }

    @Test func storesTheHandshakesCookies() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/setcookie"))
        task.resume()
        _ = try await recorder.opened()
        let stored = session.configuration.httpCookieStorage?.cookies(for: URL(string: "http://127.0.0.1/")!) ?? []
        #expect(stored.contains { $0.name == "ws-session" && $0.value == "abc" })
    }

    @Test func aNon101AnswerFailsWithTheResponse() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/reject"))
        task.resume()
        let error = try await recorder.completion()
        #expect((error as? URLError)?.code == .badServerResponse && (task.response as? HTTPURLResponse)?.statusCode == 403
                && recorder.seen.current.opened.isEmpty)
    }

    @Test func followsARedirect() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        defer { session.invalidateAndCancel() }
        let target = "http://127.0.0.1:\(server.wsPort)/echo"
        let task = session.webSocketTask(with: server.url("/redirect?to=\(target)"))
        task.resume()
        try await WebSocketTest.send(.string("after redirect"), on: task)
        #expect(WebSocketTest.text(try await WebSocketTest.receive(task)) == "after redirect"
                && task.currentRequest?.url?.absoluteString == "ws://127.0.0.1:\(server.wsPort)/echo")
    }

    @Test func aRedirectToAnotherSchemeIsRefused() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/redirect?to=ftp://127.0.0.1/echo"))
        task.resume()
        #expect((try await recorder.completion() as? URLError)?.code == .unsupportedURL)
    }

    @Test func answersA401WithTheStoredDefaultCredential() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        defer { session.invalidateAndCancel() }
        let space = URLProtectionSpace(host: "127.0.0.1", port: server.wsPort, protocol: "http", realm: "ws",
                                       authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        session.configuration.urlCredentialStorage?.setDefaultCredential(
            URLCredential(user: "user", password: "secret", persistence: .forSession), for: space)
        let task = session.webSocketTask(with: server.url("/auth"))
        task.resume()
        try await WebSocketTest.send(.string("authorized"), on: task)
        #expect(WebSocketTest.text(try await WebSocketTest.receive(task)) == "authorized")
    }

    @Test func wssWithAnUntrustedServerAsksTheDelegate() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo", secure: true))
        task.resume()
        let error = try await recorder.completion()
        #expect((error as? URLError)?.code == .serverCertificateHasUnknownRoot || (error as? URLError)?.code == .serverCertificateUntrusted)
    }

    @Test func wssAcceptedThroughTheTrustChallenge() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        recorder.trustAnswer.withLock { $0 = true }
        let session = WebSocketTest.session(delegate: recorder)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo", secure: true))
        task.resume()
        try await WebSocketTest.send(.string("pinned"), on: task)
        #expect(WebSocketTest.text(try await WebSocketTest.receive(task)) == "pinned" && recorder.seen.current.challenges == 1)
    }

    @Test func cancelWithCodeClosesCleanly() async throws {
        let server = try await WebSocketTestServer.shared()
        let recorder = WebSocketRecorder()
        let session = WebSocketTest.session(delegate: recorder, server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo"))
        task.resume()
        _ = try await recorder.opened()
        task.cancel(with: .goingAway, reason: Data("done".utf8))
        let error = try await recorder.completion()
        #expect(error == nil && task.closeCode == .goingAway && recorder.seen.current.events == ["open", "close", "complete"])
    }

    @Test func cancelFailsAWaitingReceive() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo"))
        task.resume()
        try await WebSocketTest.send(.string("x"), on: task)
        _ = try await WebSocketTest.receive(task)
        let waiting = Task { try await task.receive() }
        await settle(0.1)
        task.cancel()
        let error = await #expect(throws: URLError.self) { _ = try await withTimeout { try await waiting.value } }
        #expect(error?.code == .cancelled)
    }

    @Test func sendsQueuedBeforeTheOpenGoOutInOrder() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        defer { session.invalidateAndCancel() }
        let task = session.webSocketTask(with: server.url("/echo"))
        for index in 0..<5 { task.send(.string("m\(index)")) { _ in } }
        task.resume()
        var received: [String] = []
        for _ in 0..<5 { received.append(WebSocketTest.text(try await WebSocketTest.receive(task)) ?? "?") }
        #expect(received == ["m0", "m1", "m2", "m3", "m4"])
    }

    @Test func backPressureKeepsTheBufferBounded() async throws {
        let server = try await WebSocketTestServer.shared()
        let session = WebSocketTest.session(server: server)
        defer { session.invalidateAndCancel() }
        let count = 512, size = 64 * 1024
        let task = session.webSocketTask(with: server.url("/flood?count=\(count)&size=\(size)"))
        task.resume()
        // The server sends 32 MiB; nobody receives for a while.
        await settle(1.5)
        let buffered = task.webSocket.withLock { $0.bufferedByteCount }
        let transport = try #require(task.link.withLock { $0.transport })
        let read = transport.bytesReceived
        var total = 0
        for _ in 0..<count { total += WebSocketTest.data(try await WebSocketTest.receive(task))?.count ?? 0 }
        #expect(buffered <= WebSocketTaskState.bufferLimit + size && read < Int64(count * size / 2) && total == count * size)
    }
}
