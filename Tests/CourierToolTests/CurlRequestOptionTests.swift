import Foundation
import Testing

@testable import CourierTool

/// The curl-compatible request options (`-u`, `-n`, `-L`, `--max-redirs`, `-b`, `-c`, `-T`, `-d @FILE`)
/// against servers this test process runs on 127.0.0.1.
@Suite("courier request options")
struct CurlRequestOptionTests {
    static let user = "courier"
    static let password = "open sesame"

    static func authServer() throws -> FaultServer {
        try FaultServer(routes: ["/auth": .basicAuth(realm: "tool", user: user, password: password, body: Data("welcome\n".utf8))])
    }

    // MARK: -u and -n

    @Test func userAnswersTheBasicChallenge() async throws {
        let server = try Self.authServer()
        defer { server.stop() }
        let run = try await CourierBinary.run(["-u", "\(Self.user):\(Self.password)", server.url("/auth").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText == "welcome\n")
        // Like curl answering a challenge: first without credentials, then with them.
        #expect(server.requests(for: "/auth").map { $0.header("Authorization") == nil } == [true, false])
    }

    @Test func aWrongPasswordEndsWithThe401() async throws {
        let server = try Self.authServer()
        defer { server.stop() }
        let run = try await CourierBinary.run(["-u", "\(Self.user):wrong", "-w", "%{http_code}", server.url("/auth").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText.hasSuffix("401"))
    }

    @Test func netrcFileGivesTheLogin() async throws {
        let server = try Self.authServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Data("machine example.invalid login nobody password none\nmachine 127.0.0.1\n  login \(Self.user)\n  password \"\(Self.password)\"\n".utf8)
            .write(to: directory.file("netrc"))
        let run = try await CourierBinary.run(["--netrc-file", directory.file("netrc").path, server.url("/auth").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText == "welcome\n")
    }

    @Test func netrcOptionReadsTheHomeNetrc() async throws {
        let server = try Self.authServer()
        defer { server.stop() }
        let home = try TemporaryDirectory()
        defer { home.remove() }
        try Data("default login \(Self.user) password \"\(Self.password)\"\n".utf8).write(to: home.file(".netrc"))
        let run = try await CourierBinary.run(["-n", server.url("/auth").absoluteString], environment: ["HOME": home.url.path, "NETRC": ""])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText == "welcome\n")
    }

    // MARK: -L and --max-redirs

    static func redirectServer() throws -> FaultServer {
        try FaultServer(routes: [
            "/one": .respond(.ok(Data("moved\n".utf8), status: 302, reason: "Found", headers: [("Location", "/two")])),
            "/two": .respond(.ok(Data("moved again\n".utf8), status: 302, reason: "Found", headers: [("Location", "/end")])),
            "/end": .respond(.ok(Data("arrived\n".utf8))),
        ])
    }

    @Test func redirectsAreNotFollowedWithoutLocation() async throws {
        let server = try Self.redirectServer()
        defer { server.stop() }
        let run = try await CourierBinary.run(["-w", "%{http_code}", server.url("/one").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText == "moved\n302")
        #expect(server.requests(for: "/two").isEmpty)
    }

    @Test func locationFollowsRedirects() async throws {
        let server = try Self.redirectServer()
        defer { server.stop() }
        let run = try await CourierBinary.run(["-L", "-w", "%{num_redirects} %{url_effective}", server.url("/one").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText == "arrived\n2 \(server.url("/end").absoluteString)")
    }

    @Test func maxRedirsStopsTheChain() async throws {
        let server = try Self.redirectServer()
        defer { server.stop() }
        let run = try await CourierBinary.run(["-L", "--max-redirs", "1", server.url("/one").absoluteString])
        #expect(run.status == ToolExit.serverError.rawValue)
        #expect(run.stderr.hasSuffix("(httpTooManyRedirects)\n"), "\(run.stderr)")
        #expect(server.requests(for: "/end").isEmpty)
    }

    // MARK: cookies

    /// `/set` sets `flavour=oatmeal`; `/show` answers with the Cookie header it got.
    static func cookieServer() throws -> FaultServer {
        try FaultServer(routes: [
            "/set": .respond(.ok(Data("set\n".utf8), headers: [("Set-Cookie", "flavour=oatmeal; Path=/; Max-Age=3600")])),
            "/show": .handler { request in .ok(Data("cookie=\(request.header("Cookie") ?? "")\n".utf8)) },
        ])
    }

    @Test func cookiesCarryFromOneURLToTheNext() async throws {
        let server = try Self.cookieServer()
        defer { server.stop() }
        let run = try await CourierBinary.run([server.url("/set").absoluteString, server.url("/show").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText == "set\ncookie=flavour=oatmeal\n")
    }

    @Test func oneRunUsesOneConnectionForAllItsURLs() async throws {
        let server = try Self.cookieServer()
        defer { server.stop() }
        let url = server.url("/show").absoluteString
        let run = try await CourierBinary.run([url, url, url])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(server.acceptedConnections == 1)
    }

    @Test func cookieJarIsWrittenInNetscapeFormatAndReadBack() async throws {
        let server = try Self.cookieServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let jar = directory.file("jar.txt").path
        let first = try await CourierBinary.run(["-c", jar, server.url("/set").absoluteString])
        #expect(first.status == 0, "\(first.stderr)")
        let text = try String(contentsOfFile: jar, encoding: .utf8)
        #expect(text.hasPrefix("# Netscape HTTP Cookie File\n"))
        let line = try #require(text.split(separator: "\n").first { !$0.hasPrefix("#") })
        #expect(line.split(separator: "\t", omittingEmptySubsequences: false).count == 7)
        #expect(line.hasPrefix("127.0.0.1\tFALSE\t/\tFALSE\t") && line.hasSuffix("\tflavour\toatmeal"), "\(line)")

        let second = try await CourierBinary.run(["-b", jar, server.url("/show").absoluteString])
        #expect(second.stdoutText == "cookie=flavour=oatmeal\n")
    }

    @Test func cookieOptionSendsAGivenCookie() async throws {
        let server = try Self.cookieServer()
        defer { server.stop() }
        let run = try await CourierBinary.run(["-b", "a=1; b=2", server.url("/show").absoluteString])
        #expect(run.stdoutText == "cookie=a=1; b=2\n")
    }

    static let curl = "/usr/bin/curl"

    /// `scripts/setup` installs curl, so this always runs.
    @Test func cookieJarsAreInterchangeableWithCurl() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.curl), "curl is not installed: run scripts/setup")
        let server = try Self.cookieServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let curlJar = directory.file("curl.txt").path, courierJar = directory.file("courier.txt").path
        // curl writes, courier reads; courier writes, curl reads.
        _ = try NginxServer.run(Self.curl, ["-s", "-c", curlJar, server.url("/set").absoluteString])
        let courierRun = try await CourierBinary.run(["-b", curlJar, "-c", courierJar, server.url("/show").absoluteString])
        #expect(courierRun.stdoutText == "cookie=flavour=oatmeal\n")
        let curlRun = try NginxServer.run(Self.curl, ["-s", "-b", courierJar, server.url("/show").absoluteString])
        #expect(curlRun == "cookie=flavour=oatmeal\n")
    }

    // MARK: -T and -d @FILE

    @Test func uploadFileStreamsAPut() async throws {
        let server = try FaultServer(routes: ["/put": .sink])
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bytes = patternBytes(3 << 20 + 5)
        try bytes.write(to: directory.file("upload.bin"))
        let run = try await CourierBinary.run(["-T", directory.file("upload.bin").path, server.url("/put").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText == "\(bytes.count) \(String(StreamHash.of(bytes), radix: 16))")
        #expect(server.requests(for: "/put").map(\.method) == ["PUT"])
    }

    @Test func uploadToADirectoryURLAddsTheFileName() async throws {
        let server = try FaultServer(routes: ["/dir/upload.txt": .sink])
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Data("named\n".utf8).write(to: directory.file("upload.txt"))
        let run = try await CourierBinary.run(["-T", directory.file("upload.txt").path, server.url("/dir/").absoluteString])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(server.requests(for: "/dir/upload.txt").count == 1)
    }

    @Test func dataFromAFileIsPostedWithoutReadingItIntoMemory() async throws {
        let server = try FaultServer(routes: ["/post": .sink])
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bytes = patternBytes(64 << 20)
        try bytes.write(to: directory.file("body.bin"))
        let binary = try #require(CourierBinary.url)
        // GNU time reports the peak resident size (KiB): far below the 64 MiB body.
        let run = try await CourierBinary.run(["-f", "%M", "-o", directory.file("rss").path, binary.path,
                                               "-d", "@" + directory.file("body.bin").path, server.url("/post").absoluteString],
                                              binary: URL(fileURLWithPath: "/usr/bin/time"))
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText == "\(bytes.count) \(String(StreamHash.of(bytes), radix: 16))")
        #expect(server.requests(for: "/post").map(\.method) == ["POST"])
        let kibibytes = Int(try String(contentsOf: directory.file("rss"), encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? .max
        #expect(kibibytes < 60 << 10, "peak RSS \(kibibytes) KiB")
    }
}
