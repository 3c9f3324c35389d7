import Foundation
import Testing
@testable import Courier

/// Negotiate (SPNEGO with Kerberos, RFC 4559) for data tasks, which libcurl answers
/// (`CURLAUTH_NEGOTIATE`) from the ambient ticket cache once the delegate gives a credential,
/// against the tests' own KDC (``KerberosTestRealm``) and a pyspnego server (``NegotiateTestServer``).
@Suite("HTTP Negotiate", .serialized)
struct HTTPNegotiateTests {
    /// What a data task to the server's `/data` gave.
    private struct Outcome: Sendable {
        var status: Int?
        var seen: NegotiateTestDelegate.Seen
        var error: (any Error)?
    }

    /// Runs a data task for `/data` (http, or https with `secure`, trusting the test PKI) with
    /// `delegate`, with or without the user's ticket, and with `storedCredential` as the credential
    /// storage's default for the Negotiate space.
    private func fetch(ticket: Bool, delegate: NegotiateTestDelegate, storedCredential: URLCredential? = nil,
                       secure: Bool = false) async throws -> Outcome {
        let server = try await NegotiateTestServer.shared()
        return try await server.realm.withClient(ticket: ticket) {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            configuration.connectionProxyDictionary = [:]
            configuration.tlsTrustAnchors = TLSTrustAnchors(file: server.pki.rootCA.path)
            if let storedCredential {
                let storage = URLCredentialStorage()
                storage.setDefaultCredential(storedCredential, for: URLProtectionSpace(
                    host: "127.0.0.1", port: server.port, protocol: "http", realm: nil,
                    authenticationMethod: NSURLAuthenticationMethodNegotiate))
                configuration.urlCredentialStorage = storage
            }
            let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            defer { session.invalidateAndCancel() }
            let task = session.dataTask(with: server.url("/data", secure: secure))
            task.resume()
            let error = try await delegate.completion()
            return Outcome(status: (task.response as? HTTPURLResponse)?.statusCode, seen: delegate.seen.current, error: error)
        }
    }

    /// The delegate's credential names another user: the server sees the ticket's.
    @Test func withATicketTheDelegatesCredentialGetsTheResourceAsTheTicketsUser() async throws {
        let outcome = try await fetch(ticket: true, delegate: NegotiateTestDelegate())
        #expect(outcome.status == 200 && outcome.error == nil && outcome.seen.challenges == [NSURLAuthenticationMethodNegotiate]
                && String(decoding: outcome.seen.body, as: UTF8.self) == "hello \(KerberosTestRealm.user)@\(KerberosTestRealm.realm)")
    }

    /// The same over TLS: libcurl names `HTTP@127.0.0.1` for https as for http.
    @Test func httpsWithATicketGetsTheResourceAsTheTicketsUser() async throws {
        let outcome = try await fetch(ticket: true, delegate: NegotiateTestDelegate(), secure: true)
        #expect(outcome.status == 200 && outcome.error == nil && outcome.seen.challenges == [NSURLAuthenticationMethodNegotiate]
                && outcome.seen.spaceProtocols == ["https"]
                && String(decoding: outcome.seen.body, as: UTF8.self) == "hello \(KerberosTestRealm.user)@\(KerberosTestRealm.realm)")
    }

    @Test func withoutATicketThe401IsTheResponse() async throws {
        let outcome = try await fetch(ticket: false, delegate: NegotiateTestDelegate())
        #expect(outcome.status == 401 && outcome.error == nil && String(decoding: outcome.seen.body, as: UTF8.self) == "negotiate required")
    }

    @Test func defaultHandlingWithNoStoredCredentialKeepsThe401() async throws {
        let outcome = try await fetch(ticket: true, delegate: NegotiateTestDelegate(.performDefaultHandling, nil))
        #expect(outcome.status == 401 && outcome.error == nil && outcome.seen.challenges == [NSURLAuthenticationMethodNegotiate])
    }

    @Test func defaultHandlingUsesTheStoredCredentialOfTheNegotiateSpace() async throws {
        let stored = URLCredential(user: KerberosTestRealm.user, password: "", persistence: .forSession)
        let outcome = try await fetch(ticket: true, delegate: NegotiateTestDelegate(.performDefaultHandling, nil), storedCredential: stored)
        #expect(outcome.status == 200 && outcome.error == nil)
    }
}
