import Foundation
import Testing
@testable import Courier

/// The public API the sftp handler adds: key credentials, the host-key protection space, the
/// upload-resume request property and the known-hosts setting; and the pieces that need no server.
@Suite("SFTP API model")
struct SFTPModelTests {
    @Test func keyCredential() {
        let key = URL(fileURLWithPath: "/home/me/.ssh/id_ed25519")
        let credential = URLCredential(user: "me", privateKeyURL: key, passphrase: "secret", persistence: .forSession)
        #expect(credential.user == "me")
        #expect(credential.password == nil)
        #expect(!credential.hasPassword)
        #expect(credential.persistence == .forSession)
        #expect(credential.sshPrivateKey == SSHPrivateKeyFile(url: key, passphrase: "secret"))
        let same = URLCredential(user: "me", privateKeyURL: key, passphrase: "secret", persistence: .forSession)
        let other = URLCredential(user: "me", privateKeyURL: URL(fileURLWithPath: "/other"), passphrase: nil, persistence: .forSession)
        #expect(credential == same)
        #expect(credential.hash == same.hash)
        #expect(credential != other)
        #expect(credential != URLCredential(user: "me", password: "", persistence: .forSession))
    }

    @Test func hostKeyProtectionSpace() {
        let space = URLProtectionSpace(host: "example.org", port: 22, protocol: "sftp",
                                       realm: "ssh-ed25519 SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s",
                                       authenticationMethod: NSURLAuthenticationMethodSSHHostKey)
        #expect(space.sshHostKeyType == "ssh-ed25519")
        #expect(space.sshHostKeyFingerprint == "SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s")
        #expect(space.receivesCredentialSecurely)
        let password = URLProtectionSpace(host: "example.org", port: 22, protocol: "sftp", realm: "ssh-ed25519 SHA256:x",
                                          authenticationMethod: NSURLAuthenticationMethodDefault)
        #expect(password.sshHostKeyType == nil)
        #expect(password.sshHostKeyFingerprint == nil)
        #expect(URLSession.isSessionWideAuthenticationMethod(NSURLAuthenticationMethodSSHHostKey))
    }

    @Test func uploadResumeProperty() {
        var request = URLRequest(url: URL(string: "sftp://host/file")!)
        #expect(!request.sftpResumesUpload)
        request.sftpResumesUpload = true
        #expect(request.sftpResumesUpload)
        #expect(URLProtocol.property(forKey: URLRequest.sftpResumesUploadKey, in: request) as? Bool == true)
        request.sftpResumesUpload = false
        #expect(!request.sftpResumesUpload)
    }

    @Test func knownHostsSettingIsCopied() {
        let configuration = URLSessionConfiguration.ephemeral
        #expect(configuration.sshKnownHostsURL == nil)
        let file = URL(fileURLWithPath: "/tmp/known_hosts")
        configuration.sshKnownHostsURL = file
        let copy = configuration.copy() as? URLSessionConfiguration
        #expect(copy?.sshKnownHostsURL == file)
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        #expect(session.configuration.sshKnownHostsURL == file)
        #expect(session.environment.sshKnownHostsURL == file)
    }

    @Test func strictHostKeyCheckingIsCopied() {
        let configuration = URLSessionConfiguration.ephemeral
        #expect(configuration.sshStrictHostKeyChecking == .yes)
        configuration.sshStrictHostKeyChecking = .acceptNew
        let copy = configuration.copy() as? URLSessionConfiguration
        #expect(copy?.sshStrictHostKeyChecking == .acceptNew)
        configuration.sshStrictHostKeyChecking = .yes
        #expect(copy?.sshStrictHostKeyChecking == .acceptNew, "the copy is independent")
        let session = URLSession(configuration: copy ?? configuration)
        defer { session.invalidateAndCancel() }
        #expect(session.configuration.sshStrictHostKeyChecking == .acceptNew)
        #expect(session.environment.sshStrictHostKeyChecking == .acceptNew)
        #expect(URLSessionConfiguration.default.sshStrictHostKeyChecking == .yes)
    }

    @Test func hostKeyCredential() throws {
        let fingerprint = "SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s"
        let credential = URLCredential(sshHostKeyFingerprint: fingerprint)
        #expect(credential.sshHostKeyFingerprint == fingerprint)
        #expect(credential.user == nil)
        #expect(credential.password == nil)
        #expect(!credential.hasPassword)
        #expect(credential.persistence == .forSession)
        #expect(credential == URLCredential(sshHostKeyFingerprint: fingerprint))
        #expect(credential != URLCredential(sshHostKeyFingerprint: "SHA256:other"))
        #expect(credential != URLCredential(user: "", password: "", persistence: .forSession))
        #expect(URLCredential(user: "u", password: "p", persistence: .none).sshHostKeyFingerprint == nil)
        let archive = try NSKeyedArchiver.archivedData(withRootObject: credential, requiringSecureCoding: true)
        let decoded = try NSKeyedUnarchiver.unarchivedObject(ofClass: URLCredential.self, from: archive)
        #expect(decoded?.sshHostKeyFingerprint == fingerprint)
        #expect(decoded == credential)
    }

    @Test func remotePaths() {
        func path(_ text: String) -> String? { SFTPRemotePath.path(of: URL(string: text)!) }
        #expect(path("sftp://h/srv/data.bin") == "/srv/data.bin")
        #expect(path("sftp://h/dir/") == "/dir/")
        #expect(path("sftp://h/~/notes.txt") == "notes.txt")
        #expect(path("sftp://h/~/") == ".")
        #expect(path("sftp://h") == "/")
        #expect(path("sftp://h/with%20space") == "/with space")
        #expect(path("sftp://h/nul%00byte") == nil)
    }

    @Test func connectionKeys() throws {
        let key = try #require(SSHConnectionKey(url: URL(string: "sftp://Me@Example.ORG:2222/x")!))
        #expect(key.host == "example.org")
        #expect(key.port == 2222)
        #expect(key.user == "Me")
        #expect(key.knownHostsName == "[example.org]:2222")
        let standard = try #require(SSHConnectionKey(url: URL(string: "sftp://example.org/x")!))
        #expect(standard.port == 22)
        #expect(standard.knownHostsName == "example.org")
        #expect(standard.user == SSHConnectionKey.localUserName)
        let v6 = try #require(SSHConnectionKey(url: URL(string: "sftp://[::1]:2200/x")!))
        #expect(v6.host == "::1")
        #expect(v6.knownHostsName == "[::1]:2200")
    }

    @Test func privateKeyTypes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-keytypes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keygen = try SSHServer.tool("ssh-keygen")
        for (type, bits, expected) in [("ed25519", nil, "ssh-ed25519"), ("ecdsa", "256", "ecdsa-sha2-nistp256"), ("rsa", "2048", "ssh-rsa")] {
            let file = directory.appendingPathComponent("id_\(type)")
            try SSHServer.run(keygen, ["-q", "-t", type] + (bits.map { ["-b", $0] } ?? []) + ["-N", "pass phrase", "-f", file.path])
            #expect(SSHPrivateKeyInspection.keyType(of: file) == expected, "encrypted \(type)")
        }
        let pem = directory.appendingPathComponent("id_pem")
        try SSHServer.run(keygen, ["-q", "-t", "rsa", "-b", "2048", "-m", "PEM", "-N", "", "-f", pem.path])
        #expect(SSHPrivateKeyInspection.keyType(of: pem) == "ssh-rsa")
        #expect(SSHPrivateKeyInspection.keyType(of: directory.appendingPathComponent("missing")) == nil)
    }

    @Test func unsupportedTargetsFailFast() async throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let result = try await session.loadData(URL(string: "sftp://h/nul%00byte")!)
        #expect((result.error as? URLError)?.code == .badURL)
    }
}
