import Foundation
import Logging
import Testing
@testable import Courier

/// The pure pieces of logging: redaction of credentials, escaping of control bytes, and the
/// levels `COURIER_LOG` names.
@Suite("Log redaction and escaping")
struct LogRedactionTests {
    @Test(arguments: [
        ("Authorization: Basic Y291cmllcjpzZWNyZXQ=", "Authorization: Basic [redacted]"),
        ("authorization: Bearer abc.def", "authorization: Bearer [redacted]"),
        ("Proxy-Authorization: Digest username=\"u\", response=\"r\"", "Proxy-Authorization: Digest [redacted]"),
        ("Authorization: token-without-scheme", "Authorization: [redacted]"),
        ("Cookie: session=abc; theme=dark", "Cookie: [redacted]"),
        ("Set-Cookie: id=42; Path=/; HttpOnly", "Set-Cookie: [redacted]"),
        ("PASS hunter2", "PASS [redacted]"),
        ("pass hunter2", "PASS [redacted]"),
        ("Content-Type: text/plain", "Content-Type: text/plain"),
        ("GET /cookie/Authorization: HTTP/1.1", "GET /cookie/Authorization: HTTP/1.1"),
        ("USER alice", "USER alice"),
        ("Passport: x", "Passport: x"),
    ])
    func lineRedaction(line: String, expected: String) {
        #expect(LogRedaction.line(line) == expected)
    }

    @Test func urlKeepsTheUserAndRedactsThePassword() throws {
        let url = try #require(URL(string: "sftp://alice:s3cret@127.0.0.1:2222/home/file.txt"))
        #expect(LogRedaction.url(url) == "sftp://alice:[redacted]@127.0.0.1:2222/home/file.txt")
    }

    @Test func urlWithoutPasswordIsUnchanged() throws {
        let url = try #require(URL(string: "ftp://alice@127.0.0.1/file"))
        #expect(LogRedaction.url(url) == "ftp://alice@127.0.0.1/file")
    }

    @Test func passwordsInsideNotesAreRedacted() {
        let note = "Uses proxy env variable http_proxy == 'http://bob:pw@127.0.0.1:3128' for http://host/a@b"
        #expect(LogRedaction.userinfo(in: note)
            == "Uses proxy env variable http_proxy == 'http://bob:[redacted]@127.0.0.1:3128' for http://host/a@b")
    }

    @Test func controlBytesAreEscaped() {
        let bytes: [UInt8] = Array("X-Evil: a".utf8) + [0x1B] + Array("[31mred".utf8) + [0x07, 0x00, 0x7F, 0xFF]
            + Array(" café".utf8) + [0x0D, 0x0A]
        let text = bytes.withUnsafeBytes { LogText.line($0) }
        #expect(text == "X-Evil: a\\x1B[31mred\\x07\\x00\\x7F\\xFF café")
    }

    @Test func bidirectionalOverridesAreEscaped() {
        #expect(LogText.escaped("name\u{202E}gnp.exe") == "name\\u{202E}gnp.exe")
    }

    @Test(arguments: [
        ("trace", Logger.Level.trace), ("DEBUG", .debug), (" info ", .info), ("warn", .warning),
        ("warning", .warning), ("error", .error),
    ])
    func environmentLevels(value: String, level: Logger.Level) {
        #expect(CourierLogging.level(named: value) == level)
    }

    @Test(arguments: [nil, "", "loud", "1"] as [String?])
    func unsetOrUnknownLevelsLogNothing(value: String?) {
        #expect(CourierLogging.logger(forEnvironmentValue: value).logLevel == .critical)
    }
}
