import Foundation
import Testing
@testable import Courier

/// SHA-1 against FIPS 180's vectors, and the opening handshake: key, accept value, request fields
/// and the check of the server's 101.
@Suite("WebSocket handshake")
struct WebSocketHandshakeTests {
    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    // MARK: SHA-1

    @Test(arguments: [
        ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
        ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
        ("The quick brown fox jumps over the lazy dog", "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12"),
        (String(repeating: "a", count: 55), "c1c8bbdc22796e28c0e15163d20899b65621d65a"),
        (String(repeating: "a", count: 56), "c2db330f6083854c99d4b5bfb6e8f29f201be699"),
        (String(repeating: "a", count: 64), "0098ba824b5c16427bd7a1122a5a442a25ec644d"),
    ])
    func sha1Vectors(message: String, digest: String) {
        #expect(Self.hex(SHA1.hash(Array(message.utf8))) == digest)
    }

    @Test func sha1OfAMillionAs() {
        #expect(Self.hex(SHA1.hash([UInt8](repeating: 0x61, count: 1_000_000))) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    // MARK: Key and accept

    /// RFC 6455 §1.3 and §4.2.2: SHA-1 b37a4f2c…c4ea, in base64.
    @Test func theAcceptValueOfRFC6455sExample() {
        #expect(WebSocketHandshakeKey.acceptValue(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func aKeyIsSixteenRandomBytesInBase64() {
        let keys = (0..<32).map { _ in WebSocketHandshakeKey.make() }
        #expect(keys.allSatisfy { Data(base64Encoded: $0)?.count == 16 } && Set(keys).count == keys.count)
    }

    @Test func aKeyComesFromTheGivenGenerator() {
        var first = SplitMix64(seed: 7)
        var second = SplitMix64(seed: 7)
        #expect(WebSocketHandshakeKey.make(using: &first) == WebSocketHandshakeKey.make(using: &second))
    }

    // MARK: Request

    private let url = URL(string: "wss://example.com/chat")!

    @Test func theUpgradeFieldsInOrder() throws {
        let fields = try WebSocketHandshakeRequest.headerFields(key: "k", protocols: ["chat", "superchat"], url: url)
        #expect(fields.map { "\($0.name): \($0.value)" } == ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: k",
                                                            "Sec-WebSocket-Version: 13", "Sec-WebSocket-Protocol: chat, superchat"])
    }

    @Test func noProtocolsNoProtocolField() throws {
        let fields = try WebSocketHandshakeRequest.headerFields(key: "k", protocols: [], url: url)
        #expect(!fields.contains { $0.name == "Sec-WebSocket-Protocol" })
    }

    @Test(arguments: [["a b"], ["chat\r\nX-Injected: 1"], [""], ["chat", "chat"], ["ünïcode"]])
    func protocolsThatAreNotUniqueTokensAreRefused(protocols: [String]) {
        var failure: URLError?
        do {
            _ = try WebSocketHandshakeRequest.headerFields(key: "k", protocols: protocols, url: url)
        } catch {
            failure = error
        }
        #expect(failure?.code == .badURL && failure?.failingURL == url)
    }

    @Test func theOfferedProtocolsOfAnAppsOwnField() {
        #expect(WebSocketHandshakeRequest.offeredProtocols(inHeaderValue: " chat ,\tv2.json, ,") == ["chat", "v2.json"])
    }

    @Test(arguments: [
        ("ws://example.com:8080/a?b=c#f", "http://example.com:8080/a?b=c#f"),
        ("WSS://example.com/", "https://example.com/"),
        ("http://example.com/x", "http://example.com/x"),
        ("https://example.com", "https://example.com"),
    ])
    func theHandshakesHTTPURL(webSocketURL: String, httpURL: String) throws {
        #expect(WebSocketHandshakeRequest.httpURL(for: try #require(URL(string: webSocketURL)))?.absoluteString == httpURL)
    }

    @Test func noHTTPURLForOtherSchemes() throws {
        #expect(WebSocketHandshakeRequest.httpURL(for: try #require(URL(string: "ftp://example.com/"))) == nil)
    }

    // MARK: Response

    private static let key = "dGhlIHNhbXBsZSBub25jZQ=="
    private static let goodFields = ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="]

    private func response(status: Int = 101, _ fields: [String: String?] = [:]) throws -> HTTPURLResponse {
        var merged = Self.goodFields
        for (name, value) in fields { merged[name] = value }
        return try #require(HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: merged))
    }

    @Test func aGoodAnswerWithoutAProtocol() throws {
        #expect(try WebSocketHandshakeValidator.validate(try response(), key: Self.key, offeredProtocols: ["chat"]) == nil)
    }

    @Test func aGoodAnswerSelectingAnOfferedProtocol() throws {
        let answer = try response(["Sec-WebSocket-Protocol": "superchat"])
        #expect(try WebSocketHandshakeValidator.validate(answer, key: Self.key, offeredProtocols: ["chat", "superchat"]) == "superchat")
    }

    @Test func tokensAreComparedWithoutCaseAndMayShareTheirField() throws {
        let answer = try response(["Upgrade": "WebSocket", "Connection": "keep-alive, UPGRADE"])
        #expect(try WebSocketHandshakeValidator.validate(answer, key: Self.key, offeredProtocols: []) == nil)
    }

    @Test func fieldNamesAreMatchedWithoutCase() throws {
        let answer = try #require(HTTPURLResponse(url: url, statusCode: 101, httpVersion: "HTTP/1.1", headerFields: [
            "upgrade": "websocket", "CONNECTION": "upgrade", "sec-websocket-accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
            "sec-websocket-protocol": "chat",
        ]))
        #expect(try WebSocketHandshakeValidator.validate(answer, key: Self.key, offeredProtocols: ["chat"]) == "chat")
    }

    /// Each bad answer, and the words its error's description must contain.
    private static let badAnswers: [(status: Int, fields: [String: String?], says: String)] = [
        (200, [:], "status 200"),
        (403, [:], "status 403"),
        (101, ["Upgrade": nil], "Upgrade field is missing"),
        (101, ["Upgrade": "h2c"], "Upgrade field is \"h2c\""),
        (101, ["Connection": nil], "Connection field is missing"),
        (101, ["Connection": "close"], "Connection field"),
        (101, ["Sec-WebSocket-Accept": nil], "Sec-WebSocket-Accept is missing"),
        (101, ["Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo"], "does not match"),
        (101, ["Sec-WebSocket-Accept": "S3PPLMBITXAQ9KYGZZHZRBK+XOO="], "does not match"),
        (101, ["Sec-WebSocket-Extensions": "permessage-deflate"], "extension permessage-deflate"),
        (101, ["Sec-WebSocket-Protocol": "other"], "subprotocol \"other\""),
        (101, ["Sec-WebSocket-Protocol": "Chat"], "subprotocol \"Chat\""),
        (101, ["Sec-WebSocket-Protocol": "chat, superchat"], "several subprotocols"),
    ]

    @Test(arguments: 0..<badAnswers.count)
    func aBadAnswerIsABadServerResponseSayingWhy(index: Int) throws {
        let bad = Self.badAnswers[index]
        let answer = try response(status: bad.status, bad.fields)
        var failure: URLError?
        do {
            _ = try WebSocketHandshakeValidator.validate(answer, key: Self.key, offeredProtocols: ["chat", "superchat"])
        } catch {
            failure = error
        }
        #expect(failure?.code == .badServerResponse && failure?.failingURL == url
                && failure?.localizedDescription.contains(bad.says) == true)
    }

    @Test func aProtocolWhenNoneWasOfferedIsRefused() throws {
        let answer = try response(["Sec-WebSocket-Protocol": "chat"])
        #expect(throws: URLError.self) { try WebSocketHandshakeValidator.validate(answer, key: Self.key, offeredProtocols: []) }
    }
}
