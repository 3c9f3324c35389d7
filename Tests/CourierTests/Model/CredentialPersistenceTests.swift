import Foundation
import Testing
@testable import Courier

@Suite("URLCredentialStorage persistence")
struct CredentialPersistenceTests {

    private let space = URLProtectionSpace(host: "example.com", port: 443, protocol: NSURLProtectionSpaceHTTPS,
                                           realm: "api", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
    private let proxy = URLProtectionSpace(proxyHost: "proxy.local", port: 3128, type: NSURLProtectionSpaceHTTPProxy,
                                           realm: nil, authenticationMethod: nil)

    private func storage(_ directory: TemporaryStoreDirectory) -> URLCredentialStorage {
        URLCredentialStorage(fileURL: directory.file("Credentials.json"))
    }

    private func users(_ storage: URLCredentialStorage, _ space: URLProtectionSpace) -> [String] {
        (storage.credentials(for: space) ?? [:]).keys.sorted()
    }

    /// Writes a valid credentials file holding one permanent credential, then sets its mode.
    private func writeFile(in directory: TemporaryStoreDirectory, mode: Int) throws -> URL {
        let writer = storage(directory)
        writer.set(URLCredential(user: "stored", password: "pw", persistence: .permanent), for: space)
        let file = directory.file("Credentials.json")
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
        return file
    }

    @Test func permanentCredentialsAndDefaultsSurviveANewStorage() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let first = storage(directory)
        let permanent = URLCredential(user: "me", password: "s3cret \"quoted\"", persistence: .permanent)
        first.set(permanent, for: space)
        first.set(URLCredential(user: "visitor", password: "temp", persistence: .forSession), for: space)
        first.setDefaultCredential(permanent, for: space)
        first.set(URLCredential(user: "proxy-user", password: "proxy-pw", persistence: .permanent), for: proxy)
        // Written as they happen: no flush needed.

        let second = storage(directory)
        #expect(users(second, space) == ["me"])
        let loaded = try #require(second.credentials(for: space)?["me"])
        #expect(loaded.password == "s3cret \"quoted\"")
        #expect(loaded.persistence == .permanent)
        #expect(second.defaultCredential(for: space) == permanent)
        // The first credential stored for the proxy became its default.
        #expect(second.defaultCredential(for: proxy)?.user == "proxy-user")
        let loadedProxy = try #require(second.allCredentials.keys.first { $0.isProxy() })
        #expect(loadedProxy == proxy)
        #expect(loadedProxy.proxyType == NSURLProtectionSpaceHTTPProxy)
        #expect(users(second, proxy) == ["proxy-user"])
        #expect(first.credentials(for: space)?.count == 2) // the session credential stays in memory
    }

    @Test func sessionAndNoneCredentialsAreNeverWritten() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = storage(directory)
        store.set(URLCredential(user: "session", password: "a", persistence: .forSession), for: space)
        store.setDefaultCredential(URLCredential(user: "session", password: "a", persistence: .forSession), for: space)
        store.set(URLCredential(user: "once", password: "b", persistence: .none), for: space)
        store.flush()
        #expect(!FileManager.default.fileExists(atPath: directory.file("Credentials.json").path))
        #expect(users(store, space) == ["session"])
    }

    @Test func removalsAndReplacementsReachTheFile() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = storage(directory)
        let permanent = URLCredential(user: "me", password: "one", persistence: .permanent)
        store.setDefaultCredential(permanent, for: space)
        store.set(URLCredential(user: "other", password: "two", persistence: .permanent), for: space)
        #expect(users(storage(directory), space) == ["me", "other"])

        store.remove(permanent, for: space)
        let afterRemove = storage(directory)
        #expect(users(afterRemove, space) == ["other"])
        #expect(afterRemove.defaultCredential(for: space) == nil)

        // A session credential replacing a permanent one takes it out of the file.
        store.set(URLCredential(user: "other", password: "three", persistence: .forSession), for: space)
        #expect(storage(directory).credentials(for: space) == nil)
    }

    @Test func filesArePrivate() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        storage(directory).set(URLCredential(user: "me", password: "pw", persistence: .permanent), for: space)
        #expect(TemporaryStoreDirectory.permissions(directory.url) == 0o700)
        #expect(TemporaryStoreDirectory.permissions(directory.file("Credentials.json")) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["Credentials.json"])
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660, 0o620, 0o602])
    func filesOthersCanReachAreRefused(mode: Int) throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let file = try writeFile(in: directory, mode: mode)

        let store = storage(directory)
        #expect(store.allCredentials.isEmpty)
        #expect(store.credentials(for: space) == nil)
        store.flush()
        // The refused file is left alone until the storage has something to write…
        #expect(TemporaryStoreDirectory.permissions(file) == mode)
        // …and then replaced by a private one.
        store.set(URLCredential(user: "new", password: "pw", persistence: .permanent), for: space)
        #expect(TemporaryStoreDirectory.permissions(file) == 0o600)
        #expect(users(storage(directory), space) == ["new"])
    }

    @Test func aPrivateFileIsAccepted() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        _ = try writeFile(in: directory, mode: 0o400)
        #expect(users(storage(directory), space) == ["stored"])
    }

    @Test func aSymbolicLinkIsNotFollowed() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let real = try writeFile(in: directory, mode: 0o600)
        let elsewhere = directory.file("Elsewhere.json")
        try FileManager.default.moveItem(at: real, to: elsewhere)
        try FileManager.default.createSymbolicLink(at: real, withDestinationURL: elsewhere)

        let store = storage(directory)
        #expect(store.allCredentials.isEmpty)
        store.flush()
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: real.path) == elsewhere.path)
        // The next write replaces the link with a regular file; the file it pointed to is untouched.
        store.set(URLCredential(user: "new", password: "pw", persistence: .permanent), for: space)
        let attributes = try FileManager.default.attributesOfItem(atPath: real.path)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)
        #expect(users(URLCredentialStorage(fileURL: elsewhere), space) == ["stored"])
        #expect(users(storage(directory), space) == ["new"])
    }

    @Test(arguments: ["garbage", "{}", "{\"format\": \"Courier.Credentials\", \"version\": 2, \"spaces\": []}",
                      "{\"format\": \"Courier.Credentials\", \"version\": 1, \"spaces\": [{\"space\": 1}]}"])
    func damagedFilesAreIgnoredAndReplaced(contents: String) throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let file = directory.file("Credentials.json")
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data(contents.utf8),
                                               attributes: [.posixPermissions: 0o600]))

        let store = storage(directory)
        #expect(store.allCredentials.isEmpty)
        store.flush()
        let replaced = try Data(contentsOf: file)
        #expect(CredentialStoreFile.decode(replaced)?.credentials.isEmpty == true)
    }

    @Test func ephemeralStoragesStayInMemory() {
        #expect(URLCredentialStorage().fileURL == nil)
        #expect(URLSessionConfiguration.ephemeral.urlCredentialStorage?.fileURL == nil)
    }

    @Test func theSharedStorageLivesInTheTestDataDirectory() throws {
        let home = try #require(TestDataHome.directory, "the test binary sets COURIER_DATA_HOME at start-up")
        let file = try #require(URLCredentialStorage.shared.fileURL)
        #expect(file.standardizedFileURL == home.appendingPathComponent("Credentials.json").standardizedFileURL)
        #expect(URLSessionConfiguration.default.urlCredentialStorage === URLCredentialStorage.shared)
    }

    @Test func theFileFormatRoundTrips() throws {
        let permanent = URLCredential(user: "u", password: "p", persistence: .permanent)
        let session = URLCredential(user: "s", password: "q", persistence: .forSession)
        let data = try #require(CredentialStoreFile.encode(credentials: [space: ["u": permanent, "s": session]],
                                                           defaults: [space: session, proxy: permanent]))
        let text = String(decoding: data, as: UTF8.self)
        #expect(!text.contains("\"q\""))
        let decoded = try #require(CredentialStoreFile.decode(data))
        #expect(decoded.credentials[space]?.keys.sorted() == ["u"])
        #expect(decoded.defaults[space] == nil)
        #expect(decoded.defaults[proxy] == permanent)
        // Same contents, same bytes.
        #expect(CredentialStoreFile.encode(credentials: decoded.credentials, defaults: decoded.defaults) ==
                CredentialStoreFile.encode(credentials: [space: ["u": permanent]], defaults: [proxy: permanent]))
    }
}
