import Foundation
import Testing
@testable import Courier

@Suite("URLCredentialStorage task methods")
struct URLCredentialStorageTasksTests {

    @Test func taskVariantsActOnTheSameCredentials() throws {
        let url = try #require(URL(string: "https://example.com/"))
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let task = session.dataTask(with: url)
        let storage = URLCredentialStorage()
        let space = URLProtectionSpace(host: "example.com", port: 443, protocol: NSURLProtectionSpaceHTTPS,
                                       realm: "r", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        let alice = URLCredential(user: "alice", password: "a", persistence: .forSession)
        let bob = URLCredential(user: "bob", password: "b", persistence: .forSession)

        storage.set(alice, for: space, task: task)
        storage.setDefaultCredential(bob, for: space, task: task)
        #expect(storage.credentials(for: space)?.keys.sorted() == ["alice", "bob"])

        var users: [String]?
        storage.getCredentials(for: space, task: task) { users = $0?.keys.sorted() }
        #expect(users == ["alice", "bob"])

        var preferred: URLCredential?
        storage.getDefaultCredential(for: space, task: task) { preferred = $0 }
        #expect(preferred?.user == "bob")

        storage.remove(bob, for: space, task: task)
        storage.getDefaultCredential(for: space, task: task) { preferred = $0 }
        #expect(preferred == nil)
        storage.remove(alice, for: space, options: nil, task: task)
        storage.getCredentials(for: space, task: task) { users = $0?.keys.sorted() }
        #expect(users == nil)
    }
}
