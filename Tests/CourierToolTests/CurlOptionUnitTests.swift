import Foundation
import Testing

import Courier
@testable import CourierTool

// Unit tests of the pieces behind the curl-compatible options, through `@testable import CourierTool`.
@Suite("courier curl-option internals")
struct CurlOptionUnitTests {
    @Test func writeOutParsesVariablesEscapesAndPercents() {
        let format = WriteOut(format: #"%{http_code}\t100%% %{url}\n\x"#)
        #expect(format.pieces == [.variable("http_code"), .text("\t100% "), .variable("url"), .text("\n\\x")])
        let report = TransferReport(url: "u", effectiveURL: "e", httpCode: 7)
        #expect(format.render(report) == "007\t100% u\n\\x")
        #expect(WriteOut(format: "%{nope}%{size_download}").unknownVariables == ["nope"])
    }

    @Test func netscapeCookieLinesRoundTrip() throws {
        let text = NetscapeCookieJar.header + """
            .example.com\tTRUE\t/\tTRUE\t4102444800\tsid\tabc
            #HttpOnly_host.example\tFALSE\t/app\tFALSE\t0\tsession\txyz
            # a comment
            expired.example\tFALSE\t/\tFALSE\t1\told\tgone

            """
        let cookies = NetscapeCookieJar.parse(text)
        #expect(cookies.map(\.name) == ["sid", "session"])
        #expect(cookies.map(\.domain) == [".example.com", "host.example"])
        #expect(cookies.map(\.isSecure) == [true, false])
        #expect(cookies.map(\.isHTTPOnly) == [false, true])
        #expect(cookies.map(\.isSessionOnly) == [false, true])
        #expect(NetscapeCookieJar.render(cookies) == NetscapeCookieJar.header
            + ".example.com\tTRUE\t/\tTRUE\t4102444800\tsid\tabc\n#HttpOnly_host.example\tFALSE\t/app\tFALSE\t0\tsession\txyz\n")
    }

    @Test func netrcFindsTheMachineThenTheDefault() {
        let netrc = Netrc(text: """
            # logins
            machine a.example login alice password "p w\\"d"
            macdef init
            machine evil login mallory

            machine b.example
              login bob
            default login anon password guest
            """)
        #expect(netrc.login(for: "A.example") == Login(user: "alice", password: "p w\"d"))
        #expect(netrc.login(for: "b.example") == Login(user: "bob", password: ""))
        #expect(netrc.login(for: "evil") == Login(user: "anon", password: "guest"))
        #expect(netrc.login(for: "a.example", user: "anon") == Login(user: "anon", password: "guest"))
    }

    @Test func retryBacksOffLikeCurl() {
        let policy = RetryPolicy(attempts: 5)
        #expect((1...4).map { policy.delay(beforeRetry: $0, retryAfter: nil) } == [1, 2, 4, 8])
        #expect(policy.delay(beforeRetry: 20, retryAfter: nil) == RetryPolicy.longestDelay)
        #expect(policy.delay(beforeRetry: 1, retryAfter: 3) == 3)
        #expect(RetryPolicy(attempts: 1, fixedDelay: 0.5).delay(beforeRetry: 3, retryAfter: 9) == 0.5)
        #expect(RetryPolicy.isTransient(.timedOut) && !RetryPolicy.isTransient(.badURL))
    }

    @Test func progressMeterShowsOnlyOnAQuietTerminal() {
        #expect(ProgressMeter.isWanted(silent: false, bodiesToStandardOutput: false, stderrIsTerminal: true, stdoutIsTerminal: true))
        #expect(!ProgressMeter.isWanted(silent: true, bodiesToStandardOutput: false, stderrIsTerminal: true, stdoutIsTerminal: true))
        #expect(!ProgressMeter.isWanted(silent: false, bodiesToStandardOutput: false, stderrIsTerminal: false, stdoutIsTerminal: false))
        #expect(!ProgressMeter.isWanted(silent: false, bodiesToStandardOutput: true, stderrIsTerminal: true, stdoutIsTerminal: true))
        #expect(ProgressMeter.isWanted(silent: false, bodiesToStandardOutput: true, stderrIsTerminal: true, stdoutIsTerminal: false))
    }

    @Test func progressMeterLineSaysHowFarAndHowFast() {
        let counts = ProgressMeter.Counts(expected: 4 << 20, received: 1 << 20)
        #expect(ProgressMeter.line(counts, seconds: 1, transfers: 1)
            == " 25.0%   1.0 MiB of 4.0 MiB   1.0 MiB/s   0:00:03 left   1 transfer  ")
        #expect(ProgressMeter.size(512) == "512 B")
    }

    @Test func resumeDecisionsFollowCurl() throws {
        let url = try #require(URL(string: "http://h/f"))
        func response(_ status: Int, length: Int? = nil) throws -> HTTPURLResponse {
            try #require(HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1",
                                         headerFields: length.map { ["Content-Length": String($0)] }))
        }
        #expect(ResumePlan.Start(argument: "-") == .automatic)
        #expect(ResumePlan.Start(argument: "12") == .offset(12))
        #expect(ResumePlan.Start(argument: "x") == nil)
        if case .proceed = ResumePlan.decision(for: try response(206), offset: 5) {} else { Issue.record("206 must proceed") }
        if case .skipBody = ResumePlan.decision(for: try response(416), offset: 5) {} else { Issue.record("416 means complete") }
        if case .skipBody = ResumePlan.decision(for: try response(200, length: 5), offset: 5) {} else { Issue.record("same length means complete") }
        if case .fail = ResumePlan.decision(for: try response(200, length: 9), offset: 5) {} else { Issue.record("a whole body must fail") }
    }

    @Test func loginsGoIntoFTPAndSFTPURLsOnly() throws {
        let login = Login(user: "a b", password: "p@ss:w")
        let ftp = try #require(URL(string: "ftp://h/f"))
        #expect(TransferRunner.embedding(login, in: ftp).absoluteString == "ftp://a%20b:p%40ss%3Aw@h/f")
        let http = try #require(URL(string: "http://h/f"))
        #expect(TransferRunner.embedding(login, in: http) == http)
        let own = try #require(URL(string: "sftp://me@h/f"))
        #expect(TransferRunner.embedding(login, in: own) == own)
    }

    @Test func statusLinesShowTheVersionAndStandardPhrase() throws {
        let url = try #require(URL(string: "http://h/"))
        let one = try #require(HTTPURLResponse(url: url, statusCode: 404, httpVersion: "HTTP/1.1", headerFields: nil))
        let two = try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/2", headerFields: nil))
        #expect(ResponsePrinter.statusLine(for: one) == "HTTP/1.1 404 Not Found")
        #expect(ResponsePrinter.statusLine(for: two) == "HTTP/2 200")
    }
}
