import Foundation
import Testing
@testable import Courier

/// The known-hosts parser and host matching, without a server.
@Suite("Known-hosts files")
struct KnownHostsFileTests {
    /// A key blob of `type` whose body is `fill` repeated (only the type name is checked).
    private func blob(_ type: String, fill: UInt8) -> Data {
        let name = Data(type.utf8)
        return Data([0, 0, 0, UInt8(name.count)]) + name + Data([0, 0, 0, 32]) + Data(repeating: fill, count: 32)
    }

    private func key(_ type: String, fill: UInt8) -> String {
        "\(type) \(blob(type, fill: fill).base64EncodedString())"
    }

    private let file = URL(fileURLWithPath: "/tmp/known_hosts")

    // `|1|salt|HMAC-SHA1(salt, name)` with salt 01…14 (hex), as `ssh-keygen -H` writes them.
    private let hashedPort2222 = "|1|AQIDBAUGBwgJCgsMDQ4PEBESExQ=|6nwC5rG6k7vxYwKIoAwPZGhI1VE="
    private let hashedExampleOrg = "|1|AQIDBAUGBwgJCgsMDQ4PEBESExQ=|WEaXkXzYUk1n8xPf4kupwu8t2kc="

    private func parse(_ text: String) -> KnownHostsFile {
        KnownHostsFile(url: file, contents: Data(text.utf8))
    }

    @Test func linesMarkersAndComments() {
        let text = """
        # a comment

           \t# an indented comment
        example.org,192.0.2.1 \(key("ssh-ed25519", fill: 1)) a comment with spaces
        @cert-authority *.example.org \(key("ssh-ed25519", fill: 2))
        @revoked * \(key("ecdsa-sha2-nistp256", fill: 3))
        @unknown-marker example.org \(key("ssh-ed25519", fill: 4))
        example.org ssh-ed25519 not!base64
        example.org ssh-rsa \(blob("ssh-ed25519", fill: 5).base64EncodedString())
        example.org 2048 35 1234567
        only-two-fields ssh-ed25519
        \(hashedExampleOrg) \(key("ecdsa-sha2-nistp256", fill: 6))\r
        [example.org]:2222\t\(key("ssh-ed25519", fill: 7))
        """
        let entries = parse(text).entries
        #expect(entries.map(\.line) == [4, 5, 6, 12, 13])
        #expect(entries.map(\.marker) == [.none, .certificateAuthority, .revoked, .none, .none])
        #expect(entries[0].hosts == "example.org,192.0.2.1")
        #expect(entries[0].keyType == "ssh-ed25519")
        #expect(entries[0].key == blob("ssh-ed25519", fill: 1))
        #expect(entries[1].hosts == "*.example.org")
        #expect(entries[2].keyType == "ecdsa-sha2-nistp256")
        #expect(entries[3].hosts == hashedExampleOrg)
        #expect(entries[3].key == blob("ecdsa-sha2-nistp256", fill: 6))
        #expect(entries[4].hosts == "[example.org]:2222")
    }

    @Test func hostPatterns() {
        let matcher = KnownHostsHostMatcher()
        #expect(matcher.matches("example.org", name: "example.org"))
        #expect(matcher.matches("EXAMPLE.org", name: "example.org"))
        #expect(!matcher.matches("example.org", name: "[example.org]:2222"))
        #expect(matcher.matches("[example.org]:2222", name: "[example.org]:2222"))
        #expect(matcher.matches("a.test,example.org", name: "example.org"))
        #expect(matcher.matches("*.example.org", name: "www.example.org"))
        #expect(!matcher.matches("*.example.org", name: "example.org"))
        #expect(matcher.matches("host?.example.org", name: "host1.example.org"))
        #expect(!matcher.matches("host?.example.org", name: "host12.example.org"))
        #expect(matcher.matches("*", name: "[::1]:2200"))
        #expect(matcher.matches("[127.0.0.1]:*", name: "[127.0.0.1]:2222"))
        #expect(!matcher.matches("*.example.org,!bad.example.org", name: "bad.example.org"))
        #expect(!matcher.matches("!bad.example.org,*.example.org", name: "bad.example.org"))
        #expect(matcher.matches("*.example.org,!bad.example.org", name: "good.example.org"))
        #expect(!matcher.matches("!bad.example.org", name: "good.example.org"), "a negation alone matches nothing")
        #expect(matcher.matches("*a*b*c", name: "xaxxbxxxc"))
        #expect(!matcher.matches("*a*b*c", name: "xaxxbxxxcd"))
    }

    @Test func hashedNames() {
        let matcher = KnownHostsHostMatcher()
        #expect(matcher.matches(hashedPort2222, name: "[127.0.0.1]:2222"))
        #expect(!matcher.matches(hashedPort2222, name: "[127.0.0.1]:2223"))
        #expect(matcher.matches(hashedExampleOrg, name: "example.org"))
        #expect(matcher.matches(hashedExampleOrg, name: "Example.ORG"))
        #expect(!matcher.matches(hashedExampleOrg, name: "example.com"))
        #expect(!matcher.matches("|1|not base64|x", name: "example.org"))
    }

    /// Found by the known-hosts fuzzer: a hashed field whose hash is not 20 bytes made libssh2 leak
    /// an HMAC context on every check. OpenSSH matches only `|1|salt|hash` with a 20-byte salt and
    /// hash; anything else names no host, and is not handed to libssh2.
    @Test func malformedHashedNamesMatchNothing() {
        let matcher = KnownHostsHostMatcher()
        let salt = "AQIDBAUGBwgJCgsMDQ4PEBESExQ="
        for hosts in ["|1|\(salt)|", "|1|\(salt)|AAAA", "|1|\(salt)|WEaX|WEaXkXzYUk1n8xPf4kupwu8t2kc=",
                      "|1|\(salt)|WEaXkXzYUk1n8xPf4kupwu8t2kc=|", "|1|AAAA|WEaXkXzYUk1n8xPf4kupwu8t2kc=",
                      "|1||WEaXkXzYUk1n8xPf4kupwu8t2kc=", "|1|", "|1|not base64!|WEaXkXzYUk1n8xPf4kupwu8t2kc="] {
            #expect(!KnownHostsHostMatcher.isWellFormedHash(hosts), "\(hosts)")
            #expect(!matcher.matches(hosts, name: "example.org"), "\(hosts)")
        }
        #expect(KnownHostsHostMatcher.isWellFormedHash(hashedExampleOrg))
        #expect(matcher.matches(hashedExampleOrg, name: "example.org"))
    }

    @Test func recordedKeysOfAHost() {
        let text = """
        @cert-authority * \(key("ssh-ed25519", fill: 1))
        \(hashedExampleOrg) \(key("ecdsa-sha2-nistp256", fill: 2))
        *.org,!other.org \(key("ssh-ed25519", fill: 3))
        other.org \(key("ssh-rsa", fill: 4))
        @revoked example.* \(key("ssh-ed25519", fill: 5))
        example.org \(key("ecdsa-sha2-nistp256", fill: 6))
        """
        let recorded = SSHRecordedHostKeys(name: "example.org", parsed: [parse(text)])
        #expect(recorded.keys.map(\.line) == [2, 3, 6])
        #expect(recorded.keyTypes == ["ecdsa-sha2-nistp256", "ssh-ed25519"])
        #expect(recorded.revoked.map(\.line) == [5])
        #expect(recorded.revoked.first?.location == "/tmp/known_hosts:5")
        #expect(SSHHostKeyVerification.hostKeyMethods(for: recorded.keyTypes) == "ssh-ed25519,ecdsa-sha2-nistp256")

        let other = SSHRecordedHostKeys(name: "other.org", parsed: [parse(text)])
        #expect(other.keyTypes == ["ssh-rsa"])
        #expect(other.revoked.isEmpty)
        #expect(SSHHostKeyVerification.hostKeyMethods(for: other.keyTypes) == "rsa-sha2-512,rsa-sha2-256,ssh-rsa")
        #expect(SSHHostKeyVerification.hostKeyMethods(for: []) == nil)
        #expect(SSHHostKeyVerification.hostKeyMethods(for: ["sk-ssh-ed25519@openssh.com"]) == nil)
    }

    /// Found by the AddressSanitizer pass: Data(contentsOf:) leaked 4 KiB for every read of an
    /// empty file, and an empty known-hosts file is read on every sftp connection.
    @Test func readingFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("known-hosts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = directory.appendingPathComponent("empty")
        try Data().write(to: empty)
        #expect(try #require(KnownHostsFile.read(empty)).entries.isEmpty)
        let one = directory.appendingPathComponent("one")
        try Data("example.org \(key("ssh-ed25519", fill: 7))\n".utf8).write(to: one)
        #expect(try #require(KnownHostsFile.read(one)).entries.map(\.hosts) == ["example.org"])
        #expect(KnownHostsFile.read(directory.appendingPathComponent("missing")) == nil)
        #expect(KnownHostsFile.read(directory) == nil)
    }

    @Test func theLineOpenSSHWrites() {
        let key = blob("ssh-ed25519", fill: 9)
        let line = KnownHostsFile.line(name: "[127.0.0.1]:2222", keyType: "ssh-ed25519", key: key)
        #expect(line == "[127.0.0.1]:2222 ssh-ed25519 \(key.base64EncodedString())\n")
        #expect(parse(line).entries.first?.key == key)
    }

    @Test func readingFollowsALinkButOnlyToARegularFileOfBoundedSize() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-known-hosts-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let real = directory.appendingPathComponent("real")
        try Data("example.org \(key("ssh-ed25519", fill: 7))\n".utf8).write(to: real)
        let link = directory.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
        #expect(KnownHostsFile.read(link)?.entries.count == 1)

        let fifo = directory.appendingPathComponent("fifo")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        #expect(KnownHostsFile.read(fifo) == nil) // returns at once, without a writer
        #expect(KnownHostsFile.read(URL(fileURLWithPath: "/dev/zero")) == nil)

        let huge = directory.appendingPathComponent("huge")
        try #require(FileManager.default.createFile(atPath: huge.path, contents: nil))
        let handle = try FileHandle(forWritingTo: huge)
        try handle.truncate(atOffset: UInt64(StoreFile.maximumSize) + 1)
        try handle.close()
        #expect(KnownHostsFile.read(huge) == nil)
    }
}
