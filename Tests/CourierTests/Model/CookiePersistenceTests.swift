import Foundation
import Testing
@testable import Courier

/// A fresh directory under the system's temporary directory (not created), and its removal.
struct TemporaryStoreDirectory {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("courier-store-tests-\(UUID().uuidString)", isDirectory: true)
        .appendingPathComponent("Courier", isDirectory: true)

    func file(_ name: String) -> URL { url.appendingPathComponent(name, isDirectory: false) }

    /// The POSIX permission bits of `path`, or `nil` when it does not exist.
    static func permissions(_ path: URL) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path.path))?[.posixPermissions] as? Int
    }

    func remove() {
        try? FileManager.default.removeItem(at: url.deletingLastPathComponent())
    }
}

@Suite("HTTPCookieStorage persistence")
struct CookiePersistenceTests {

    /// A cookie for example.com that expires `lifetime` seconds from now (session-only when nil).
    private func cookie(_ name: String, value: String = "v", lifetime: TimeInterval? = 3600,
                        extra: [HTTPCookiePropertyKey: Any] = [:]) throws -> HTTPCookie {
        var properties: [HTTPCookiePropertyKey: Any] = [.name: name, .value: value, .domain: "example.com", .path: "/"]
        if let lifetime { properties[.expires] = Date(timeIntervalSinceNow: lifetime) }
        properties.merge(extra) { $1 }
        return try #require(HTTPCookie(properties: properties))
    }

    /// A storage that only writes when flushed (within the test's lifetime).
    private func storage(_ directory: TemporaryStoreDirectory) -> HTTPCookieStorage {
        HTTPCookieStorage(fileURL: directory.file("Cookies.json"), writeDelay: 3600)
    }

    private func names(_ storage: HTTPCookieStorage) -> [String] {
        (storage.cookies ?? []).map(\.name)
    }

    @Test func persistentCookiesSurviveANewStorage() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let first = storage(directory)
        let expires = Date(timeIntervalSinceNow: 7200)
        let rich = try cookie("rich", value: "a=b c", extra: [
            .expires: expires, .secure: "TRUE", .httpOnly: "TRUE", .sameSitePolicy: "Lax",
            .port: "8443", .comment: "note", .commentURL: "https://example.com/why", .domain: ".Example.com",
            .path: "/app",
        ])
        first.setCookie(try cookie("plain"))
        first.setCookie(rich)
        first.flush()

        let second = storage(directory)
        let cookies = second.cookies ?? []
        #expect(cookies.map(\.name) == ["plain", "rich"]) // oldest first, as stored
        let loaded = try #require(cookies.last)
        #expect(loaded.value == "a=b c")
        #expect(loaded.domain == ".example.com")
        #expect(loaded.path == "/app")
        #expect(loaded.isSecure && loaded.isHTTPOnly && !loaded.isSessionOnly)
        #expect(loaded.sameSitePolicy == "lax")
        #expect(loaded.portList?.map(\.intValue) == [8443])
        #expect(loaded.comment == "note")
        #expect(loaded.commentURL?.absoluteString == "https://example.com/why")
        let loadedExpiry = try #require(loaded.expiresDate)
        #expect(abs(loadedExpiry.timeIntervalSince(expires)) < 0.001)
        #expect(abs(loaded.creationDate.timeIntervalSince(rich.creationDate)) < 0.001)
        // The loaded cookie is sent like the original.
        let url = try #require(URL(string: "https://www.example.com:8443/app/page"))
        #expect(second.cookies(for: url)?.map(\.name) == ["rich"])
    }

    @Test func sessionCookiesAreNeverWritten() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = storage(directory)
        store.setCookie(try cookie("session", lifetime: nil))
        store.setCookie(try cookie("discarded", extra: [.discard: "TRUE"]))
        store.flush()
        // Nothing persistent changed, so nothing was written at all.
        #expect(!FileManager.default.fileExists(atPath: directory.file("Cookies.json").path))

        store.setCookie(try cookie("kept"))
        store.flush()
        let text = try String(contentsOf: directory.file("Cookies.json"), encoding: .utf8)
        #expect(text.contains("kept"))
        #expect(!text.contains("session") && !text.contains("discarded"))
        #expect(names(storage(directory)) == ["kept"])
        #expect(names(store).sorted() == ["discarded", "kept", "session"])
    }

    @Test func expiredCookiesAreDroppedOnLoadAndFromTheFile() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let now = Date().timeIntervalSince1970
        let document = """
        {"format": "Courier.Cookies", "version": 1, "cookies": [
          {"name": "old", "value": "1", "domain": "example.com", "path": "/", "expires": \(now - 60)},
          {"name": "fresh", "value": "2", "domain": "example.com", "path": "/", "expires": \(now + 600)},
          {"name": "", "value": "3", "domain": "", "path": "/", "expires": \(now + 600)}
        ]}
        """
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try Data(document.utf8).write(to: directory.file("Cookies.json"))

        let store = storage(directory)
        #expect(names(store) == ["fresh"])
        // The file is rewritten without the records that were dropped.
        store.flush()
        let text = try String(contentsOf: directory.file("Cookies.json"), encoding: .utf8)
        #expect(text.contains("fresh") && !text.contains("\"old\""))
    }

    @Test(arguments: ["not json at all {", "{\"format\": \"Courier.Cookies\", \"version\": 99, \"cookies\": []}",
                      "{\"format\": \"Something.Else\", \"version\": 1, \"cookies\": []}", "[1, 2, 3]", ""])
    func damagedFilesAreIgnoredAndReplaced(contents: String) throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let file = directory.file("Cookies.json")
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try Data(contents.utf8).write(to: file)

        let store = storage(directory)
        #expect(store.cookies?.isEmpty == true)
        store.flush()
        let replaced = try Data(contentsOf: file)
        let decoded = try #require(CookieStoreFile.decode(replaced))
        #expect(decoded.cookies.isEmpty)

        store.setCookie(try cookie("after"))
        store.flush()
        #expect(names(storage(directory)) == ["after"])
    }

    @Test func aDirectoryInPlaceOfTheFileIsIgnored() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.file("Cookies.json"), withIntermediateDirectories: true)
        let store = storage(directory)
        #expect(store.cookies?.isEmpty == true)
        store.setCookie(try cookie("still-works"))
        #expect(names(store) == ["still-works"])
        store.flush() // the write fails quietly
    }

    @Test func filesArePrivateAndWrittenAtomically() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = storage(directory)
        for index in 0..<20 { store.setCookie(try cookie("c\(index)")) }
        store.flush()
        #expect(TemporaryStoreDirectory.permissions(directory.url) == 0o700)
        #expect(TemporaryStoreDirectory.permissions(directory.file("Cookies.json")) == 0o600)
        // Only the file itself is left: no temporary files.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["Cookies.json"])
    }

    @Test func anExistingLooseDirectoryIsTightened() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        let store = storage(directory)
        store.setCookie(try cookie("c"))
        store.flush()
        #expect(TemporaryStoreDirectory.permissions(directory.url) == 0o700)
    }

    @Test func theFileIsReadLazilyOnFirstUse() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = storage(directory) // nothing read yet
        let writer = storage(directory)
        writer.setCookie(try cookie("written-later"))
        writer.flush()
        #expect(names(store) == ["written-later"])
    }

    @Test func changesAreWrittenAfterAShortDelayWithoutFlush() async throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let file = directory.file("Cookies.json")
        let store = HTTPCookieStorage(fileURL: file, writeDelay: 0.05)
        for index in 0..<10 { store.setCookie(try cookie("burst\(index)")) }
        let written = await waitUntil {
            guard let data = try? Data(contentsOf: file), let decoded = CookieStoreFile.decode(data) else { return false }
            return decoded.cookies.count == 10
        }
        #expect(written)
    }

    @Test func concurrentChangesAndFlushesLoseNothing() async throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = HTTPCookieStorage(fileURL: directory.file("Cookies.json"), writeDelay: 0.001)
        // Two domains: one holds at most 180 cookies (CookieJarLimits).
        let cookies = try (0..<200).map { try cookie("c\($0)", extra: [.domain: $0 < 100 ? "example.com" : "example.org"]) }
        await withTaskGroup(of: Void.self) { group in
            for start in stride(from: 0, to: cookies.count, by: 20) {
                let slice = Array(cookies[start..<start + 20])
                group.addTask {
                    for cookie in slice { store.setCookie(cookie) }
                    store.flush()
                }
            }
        }
        store.flush()
        #expect(storage(directory).cookies?.count == 200)
    }

    @Test func deletionsReachTheFile() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = storage(directory)
        let doomed = try cookie("doomed")
        store.setCookie(doomed)
        store.setCookie(try cookie("survivor"))
        store.flush()
        store.deleteCookie(doomed)
        store.flush()
        #expect(names(storage(directory)) == ["survivor"])

        store.removeCookies(since: .distantPast)
        store.flush()
        #expect(names(storage(directory)).isEmpty)
    }

    @Test func storageDatesSurviveAReload() throws {
        let directory = TemporaryStoreDirectory()
        defer { directory.remove() }
        let store = storage(directory)
        store.setCookie(try cookie("early"))
        store.flush()
        let marker = Date()
        let reloaded = storage(directory)
        reloaded.setCookie(try cookie("late"))
        reloaded.removeCookies(since: marker)
        #expect(names(reloaded) == ["early"])
    }

    @Test func ephemeralAndGroupStoragesStayInMemory() {
        #expect(HTTPCookieStorage().fileURL == nil)
        #expect(HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "group.persistence").fileURL == nil)
        #expect(URLSessionConfiguration.ephemeral.httpCookieStorage?.fileURL == nil)
    }

    @Test func theSharedStorageLivesInTheTestDataDirectory() throws {
        let home = try #require(TestDataHome.directory, "the test binary sets COURIER_DATA_HOME at start-up")
        #expect(home.lastPathComponent.hasPrefix(TestDataHome.directoryPrefix))
        let file = try #require(HTTPCookieStorage.shared.fileURL)
        #expect(file.standardizedFileURL == home.appendingPathComponent("Cookies.json").standardizedFileURL)
        #expect(URLSessionConfiguration.default.httpCookieStorage === HTTPCookieStorage.shared)
    }

    @Test func theDataDirectoryFollowsTheEnvironment() {
        let home = URL(fileURLWithPath: "/home/someone", isDirectory: true)
        #expect(CourierDataDirectory.url(environment: [:], home: home).path == "/home/someone/.local/share/Courier")
        #expect(CourierDataDirectory.url(environment: ["XDG_DATA_HOME": "/xdg"], home: home).path == "/xdg/Courier")
        #expect(CourierDataDirectory.url(environment: ["XDG_DATA_HOME": "relative"], home: home).path
                    == "/home/someone/.local/share/Courier")
        #expect(CourierDataDirectory.url(environment: ["XDG_DATA_HOME": "/xdg", "COURIER_DATA_HOME": "/sandbox"],
                                         home: home).path == "/sandbox")
        #expect(CourierDataDirectory.url(environment: ["COURIER_DATA_HOME": "relative"], home: home).path
                    == "/home/someone/.local/share/Courier")
    }
}
