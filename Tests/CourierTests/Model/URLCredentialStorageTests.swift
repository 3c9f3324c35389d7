import Foundation
import Synchronization
import Testing
@testable import Courier

@Suite("URLCredentialStorage")
struct URLCredentialStorageTests {

    private let space = URLProtectionSpace(host: "example.com", port: 443, protocol: NSURLProtectionSpaceHTTPS,
                                           realm: "Users", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)

    @Test func credentialBasics() throws {
        let credential = URLCredential(user: "ann", password: "secret", persistence: .forSession)
        #expect(credential.user == "ann")
        #expect(credential.password == "secret")
        #expect(credential.persistence == .forSession)
        #expect(credential.hasPassword)
        #expect(credential.isEqual(URLCredential(user: "ann", password: "secret", persistence: .forSession)))
        #expect(credential.hash == URLCredential(user: "ann", password: "secret", persistence: .forSession).hash)
        #expect(!credential.isEqual(URLCredential(user: "ann", password: "other", persistence: .forSession)))
        #expect(!credential.isEqual(URLCredential(user: "ann", password: "secret", persistence: .permanent)))
        let copied = try #require(credential.copy() as? URLCredential)
        #expect(copied === credential)
        #expect(!credential.description.contains("secret"))
        #expect(URLCredential.supportsSecureCoding)
    }

    @Test func credentialSecureCodingRoundTrip() throws {
        let credential = URLCredential(user: "bob", password: "p@ss", persistence: .permanent)
        let archive = try NSKeyedArchiver.archivedData(withRootObject: credential, requiringSecureCoding: true)
        let decoded = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: URLCredential.self, from: archive))
        #expect(decoded.user == "bob")
        #expect(decoded.password == "p@ss")
        #expect(decoded.persistence == .permanent)
        #expect(decoded.isEqual(credential))
    }

    @Test func storesAndReplacesByUser() {
        let storage = URLCredentialStorage()
        let first = URLCredential(user: "ann", password: "1", persistence: .forSession)
        let second = URLCredential(user: "ann", password: "2", persistence: .permanent)
        let other = URLCredential(user: "bob", password: "3", persistence: .forSession)
        storage.set(first, for: space)
        storage.set(second, for: space)
        storage.set(other, for: space)
        let stored = storage.credentials(for: space)
        #expect(stored?.count == 2)
        #expect(stored?["ann"]?.password == "2")
        #expect(stored?["bob"]?.password == "3")
        #expect(storage.allCredentials.count == 1)
        #expect(storage.allCredentials[space]?.count == 2)
    }

    @Test func ignoresCredentialsWithoutPersistence() {
        let storage = URLCredentialStorage()
        storage.set(URLCredential(user: "ann", password: "1", persistence: .none), for: space)
        #expect(storage.credentials(for: space) == nil)
        storage.setDefaultCredential(URLCredential(user: "ann", password: "1", persistence: .none), for: space)
        #expect(storage.defaultCredential(for: space) == nil)
        #expect(storage.allCredentials.isEmpty)
    }

    @Test func equalProtectionSpacesFindTheSameCredentials() {
        let storage = URLCredentialStorage()
        storage.set(URLCredential(user: "ann", password: "1", persistence: .forSession), for: space)
        let sameSpace = URLProtectionSpace(host: "EXAMPLE.com", port: 443, protocol: NSURLProtectionSpaceHTTPS,
                                           realm: "Users", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        #expect(storage.credentials(for: sameSpace)?["ann"]?.password == "1")
        let otherRealm = URLProtectionSpace(host: "example.com", port: 443, protocol: NSURLProtectionSpaceHTTPS,
                                            realm: "Admins", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        #expect(storage.credentials(for: otherRealm) == nil)
    }

    @Test func firstStoredCredentialBecomesTheDefault() {
        let storage = URLCredentialStorage()
        let ann = URLCredential(user: "ann", password: "1", persistence: .forSession)
        storage.set(ann, for: space)
        storage.set(URLCredential(user: "bob", password: "2", persistence: .forSession), for: space)
        #expect(storage.defaultCredential(for: space) === ann)
    }

    @Test func defaultCredentialIsAlsoStored() {
        let storage = URLCredentialStorage()
        let credential = URLCredential(user: "ann", password: "1", persistence: .forSession)
        #expect(storage.defaultCredential(for: space) == nil)
        storage.setDefaultCredential(credential, for: space)
        #expect(storage.defaultCredential(for: space) === credential)
        #expect(storage.credentials(for: space)?["ann"] === credential)
    }

    @Test func removeDropsCredentialAndMatchingDefault() {
        let storage = URLCredentialStorage()
        let ann = URLCredential(user: "ann", password: "1", persistence: .forSession)
        let bob = URLCredential(user: "bob", password: "2", persistence: .forSession)
        storage.setDefaultCredential(ann, for: space)
        storage.set(bob, for: space)

        storage.remove(bob, for: space)
        #expect(storage.credentials(for: space)?.keys.sorted() == ["ann"])
        #expect(storage.defaultCredential(for: space) === ann)

        storage.remove(ann, for: space, options: [NSURLCredentialStorageRemoveSynchronizableCredentials: NSNumber(value: true)])
        #expect(storage.credentials(for: space) == nil)
        #expect(storage.defaultCredential(for: space) == nil)
        #expect(storage.allCredentials.isEmpty)
    }

    @Test func postsChangeNotifications() {
        let storage = URLCredentialStorage()
        let count = Mutex(0)
        let observer = NotificationCenter.default.addObserver(
            forName: .NSURLCredentialStorageChanged, object: storage, queue: nil
        ) { _ in
            count.withLock { $0 += 1 }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let credential = URLCredential(user: "ann", password: "1", persistence: .forSession)
        storage.set(credential, for: space)         // change
        storage.set(credential, for: space)         // same credential: no change
        storage.remove(credential, for: space)      // change
        storage.remove(credential, for: space)      // nothing to remove
        #expect(count.withLock { $0 } == 2)
    }

    @Test func sharedStorageIsASingleton() {
        #expect(URLCredentialStorage.shared === URLCredentialStorage.shared)
    }
}
