import Foundation
import Testing

/// `courier ws URL` against the Python `websockets` test server.
@Suite("courier ws")
struct WebSocketCommandTests {
    @Test func echoesStandardInputsLines() async throws {
        let server = try await WebSocketTestServer.shared()
        let run = try await CourierBinary.run(["ws", server.url("/echo").absoluteString],
                                              stdin: Data("first line\nsecond line\n".utf8), limit: .seconds(30))
        #expect(run.status == 0 && run.stdoutText == "first line\nsecond line\n")
    }

    @Test func printsBinaryMessagesAsBase64() async throws {
        let server = try await WebSocketTestServer.shared()
        let run = try await CourierBinary.run(["ws", server.url("/large?size=4").absoluteString], stdin: Data(), limit: .seconds(30))
        #expect(run.status == 0 && run.stdoutText == "base64:" + Data([0, 1, 2, 3]).base64EncodedString() + "\n")
    }

    @Test func sendsHeadersAndOffersProtocols() async throws {
        let server = try await WebSocketTestServer.shared()
        let run = try await CourierBinary.run(["ws", "-H", "X-Tool: yes", "--protocol", "chat", server.url("/headers").absoluteString],
                                              stdin: Data(), limit: .seconds(30))
        let first = try #require(run.stdoutText.split(separator: "\n").first)
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: String])
        #expect(run.status == 0 && fields["X-Tool"] == "yes" && fields["Sec-WebSocket-Protocol"] == "chat")
    }

    @Test func reportsTheServersClose() async throws {
        let server = try await WebSocketTestServer.shared()
        let run = try await CourierBinary.run(["ws", server.url("/close?code=1001&reason=bye").absoluteString],
                                              stdin: Data(), limit: .seconds(30))
        #expect(run.status == 0 && run.stderr.contains("closed by the server: 1001 bye"))
    }

    @Test func wssWithInsecureAcceptsTheTestCertificate() async throws {
        let server = try await WebSocketTestServer.shared()
        let run = try await CourierBinary.run(["ws", "-k", server.url("/echo", secure: true).absoluteString],
                                              stdin: Data("over tls\n".utf8), limit: .seconds(30))
        #expect(run.status == 0 && run.stdoutText == "over tls\n")
    }

    @Test func aNonWebSocketURLIsAUsageError() async throws {
        let run = try await CourierBinary.run(["ws", "http://127.0.0.1/"], limit: .seconds(30))
        #expect(run.status == 1)
    }
}
