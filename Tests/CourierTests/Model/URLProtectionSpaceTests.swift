import Foundation
import Testing
@testable import Courier

@Suite("URLProtectionSpace")
struct URLProtectionSpaceTests {

    @Test func serverSpaceProperties() throws {
        let space = URLProtectionSpace(host: "example.com", port: 8080, protocol: "http", realm: "R", authenticationMethod: nil)
        #expect(space.host == "example.com")
        #expect(space.port == 8080)
        #expect(space.protocol == "http")
        #expect(space.realm == "R")
        #expect(space.authenticationMethod == NSURLAuthenticationMethodDefault)
        #expect(space.proxyType == nil)
        // (`isProxy()` is read outside `#expect`: the macro's expansion of this call crashes Swift 6.3's SILGen.)
        let isProxy = space.isProxy()
        #expect(!isProxy)
        let copied = try #require(space.copy() as? URLProtectionSpace)
        #expect(copied === space)
    }

    @Test func proxySpaceProperties() {
        let space = URLProtectionSpace(proxyHost: "proxy.local", port: 3128, type: NSURLProtectionSpaceHTTPProxy,
                                       realm: nil, authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        let isProxy = space.isProxy()
        #expect(isProxy)
        #expect(space.host == "proxy.local")
        #expect(space.port == 3128)
        #expect(space.protocol == nil)
        #expect(space.proxyType == NSURLProtectionSpaceHTTPProxy)
        #expect(space.authenticationMethod == NSURLAuthenticationMethodHTTPBasic)
        #expect(space.description.contains("Proxy:YES"))
    }

    @Test func equalityIgnoresHostCaseAndDefaultsTheMethod() {
        let a = URLProtectionSpace(host: "Example.COM", port: 443, protocol: "https", realm: "r", authenticationMethod: nil)
        let b = URLProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: "r",
                                   authenticationMethod: NSURLAuthenticationMethodDefault)
        #expect(a.isEqual(b))
        #expect(a.hash == b.hash)
        #expect(Set([a, b]).count == 1)

        let differentPort = URLProtectionSpace(host: "example.com", port: 8443, protocol: "https", realm: "r", authenticationMethod: nil)
        let differentRealm = URLProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: "s", authenticationMethod: nil)
        let differentMethod = URLProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: "r",
                                                 authenticationMethod: NSURLAuthenticationMethodHTTPDigest)
        let differentProtocol = URLProtectionSpace(host: "example.com", port: 443, protocol: "http", realm: "r", authenticationMethod: nil)
        let proxy = URLProtectionSpace(proxyHost: "example.com", port: 443, type: "https", realm: "r", authenticationMethod: nil)
        for other in [differentPort, differentRealm, differentMethod, differentProtocol, proxy] {
            #expect(!a.isEqual(other))
        }
        #expect(!a.isEqual("example.com"))
    }

    @Test func receivesCredentialSecurely() {
        func space(_ proto: String?, _ method: String?) -> URLProtectionSpace {
            URLProtectionSpace(host: "h", port: 1, protocol: proto, realm: nil, authenticationMethod: method)
        }
        #expect(space(NSURLProtectionSpaceHTTPS, nil).receivesCredentialSecurely)
        #expect(space("HTTPS", NSURLAuthenticationMethodHTTPBasic).receivesCredentialSecurely)
        #expect(!space(NSURLProtectionSpaceHTTP, nil).receivesCredentialSecurely)
        #expect(!space(NSURLProtectionSpaceHTTP, NSURLAuthenticationMethodHTTPBasic).receivesCredentialSecurely)
        #expect(!space(NSURLProtectionSpaceHTTP, NSURLAuthenticationMethodHTMLForm).receivesCredentialSecurely)
        #expect(space(NSURLProtectionSpaceHTTP, NSURLAuthenticationMethodHTTPDigest).receivesCredentialSecurely)
        #expect(space(NSURLProtectionSpaceHTTP, NSURLAuthenticationMethodNTLM).receivesCredentialSecurely)
        #expect(space(NSURLProtectionSpaceHTTP, NSURLAuthenticationMethodNegotiate).receivesCredentialSecurely)
        let httpsProxy = URLProtectionSpace(proxyHost: "p", port: 1, type: NSURLProtectionSpaceHTTPSProxy, realm: nil,
                                            authenticationMethod: nil)
        #expect(httpsProxy.receivesCredentialSecurely)
    }

    @Test func descriptionListsTheFields() {
        let space = URLProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: nil,
                                       authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        let text = space.description
        #expect(text.contains("Host:example.com"))
        #expect(text.contains("Server:https"))
        #expect(text.contains("Auth-Scheme:NSURLAuthenticationMethodHTTPBasic"))
        #expect(text.contains("Realm:(null)"))
        #expect(text.contains("Port:443"))
        #expect(text.contains("Proxy:NO"))
    }

    @Test func challengeCarriesItsParts() throws {
        final class Sender: NSObject, URLAuthenticationChallengeSender {
            func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
            func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
            func cancel(_ challenge: URLAuthenticationChallenge) {}
            func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
            func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
        }
        let space = URLProtectionSpace(host: "example.com", port: 443, protocol: "https", realm: "r", authenticationMethod: nil)
        let credential = URLCredential(user: "u", password: "p", persistence: .forSession)
        let url = try #require(URL(string: "https://example.com/"))
        let response = HTTPURLResponse(url: url, statusCode: 401, httpVersion: "HTTP/1.1", headerFields: nil)
        let first = Sender()
        let challenge = URLAuthenticationChallenge(protectionSpace: space, proposedCredential: credential,
                                                   previousFailureCount: 2, failureResponse: response,
                                                   error: URLError(.userAuthenticationRequired), sender: first)
        #expect(challenge.protectionSpace === space)
        #expect(challenge.proposedCredential === credential)
        #expect(challenge.previousFailureCount == 2)
        #expect(challenge.failureResponse === response)
        #expect((challenge.error as? URLError)?.code == .userAuthenticationRequired)
        #expect(challenge.sender === first)

        let second = Sender()
        let copy = URLAuthenticationChallenge(authenticationChallenge: challenge, sender: second)
        #expect(copy.sender === second)
        #expect(copy.protectionSpace === space)
        #expect(copy.previousFailureCount == 2)
    }
}
