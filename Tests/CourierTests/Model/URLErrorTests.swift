import Foundation
import Testing
@testable import Courier

@Suite("URLError+Courier")
struct URLErrorTests {

    private struct Underlying: Error, Equatable {
        let reason: String
    }

    private let url = URL(string: "https://example.com/missing?x=1")!

    @Test("failingURL and its string are always set when a URL is given")
    func failingURL() {
        let error = URLError(.cannotFindHost, url: url)
        #expect(error.code == .cannotFindHost)
        #expect(error.failingURL == url)
        #expect(error.userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
        #expect(error.userInfo["NSErrorFailingURLStringKey"] as? String == url.absoluteString)
        #expect(URLError.failingURLStringKey == "NSErrorFailingURLStringKey")

        let noURL = URLError(.unknown, url: nil)
        #expect(noURL.failingURL == nil)
        #expect(noURL.userInfo[NSURLErrorFailingURLErrorKey] == nil)
    }

    @Test("a description is always present: given or per-code default")
    func descriptions() {
        let custom = URLError(.badURL, url: url, description: "The URL has no host.")
        #expect(custom.localizedDescription == "The URL has no host.")
        #expect(custom.userInfo[NSLocalizedDescriptionKey] as? String == "The URL has no host.")

        let timedOut = URLError(.timedOut, url: url)
        #expect(timedOut.localizedDescription == "The request timed out.")

        let codes: [URLError.Code] = [
            .unknown, .cancelled, .badURL, .timedOut, .unsupportedURL, .cannotFindHost, .cannotConnectToHost,
            .networkConnectionLost, .dnsLookupFailed, .httpTooManyRedirects, .resourceUnavailable,
            .notConnectedToInternet, .redirectToNonExistentLocation, .badServerResponse,
            .userCancelledAuthentication, .userAuthenticationRequired, .zeroByteResource, .cannotDecodeRawData,
            .cannotDecodeContentData, .cannotParseResponse, .fileDoesNotExist, .fileIsDirectory,
            .noPermissionsToReadFile, .dataLengthExceedsMaximum, .secureConnectionFailed,
            .serverCertificateUntrusted, .cannotLoadFromNetwork, .cannotCreateFile, .cannotWriteToFile,
            .requestBodyStreamExhausted,
        ]
        var seen = Set<String>()
        for code in codes {
            let text = URLError(code, url: nil).localizedDescription
            #expect(!text.isEmpty)
            #expect(!text.contains("could not be completed"), "code \(code.rawValue) has no specific message")
            seen.insert(text)
        }
        #expect(seen.count == codes.count, "each code has its own message")
    }

    @Test("the underlying error is kept")
    func underlying() {
        let cause = Underlying(reason: "ECONNREFUSED")
        let error = URLError(.cannotConnectToHost, url: url, underlying: cause)
        #expect(error.userInfo[NSUnderlyingErrorKey] as? Underlying == cause)
        #expect(error.userInfo[NSUnderlyingErrorKey] is any Error)

        #expect(URLError(.cancelled, url: url).userInfo[NSUnderlyingErrorKey] == nil)
    }

    @Test("bridges to NSError in NSURLErrorDomain with the same user info")
    func nsError() {
        let error = URLError(.notConnectedToInternet, url: url) as NSError
        #expect(error.domain == NSURLErrorDomain)
        #expect(error.code == NSURLErrorNotConnectedToInternet)
        #expect(error.userInfo[NSURLErrorFailingURLErrorKey] as? URL == url)
    }

    @Test("downloadTaskResumeData reads the resume-data key")
    func resumeData() {
        #expect(URLError(.cancelled, url: url).downloadTaskResumeData == nil)
        let blob = Data([0xCA, 0xFE])
        let error = URLError(.networkConnectionLost, userInfo: [URLSessionDownloadTaskResumeData: blob])
        #expect(error.downloadTaskResumeData == blob)
    }

    @Test("loading constants have Apple's values")
    func constants() {
        #expect(NSURLAuthenticationMethodDefault == "NSURLAuthenticationMethodDefault")
        #expect(NSURLAuthenticationMethodHTTPBasic == "NSURLAuthenticationMethodHTTPBasic")
        #expect(NSURLAuthenticationMethodHTTPDigest == "NSURLAuthenticationMethodHTTPDigest")
        #expect(NSURLAuthenticationMethodHTMLForm == "NSURLAuthenticationMethodHTMLForm")
        #expect(NSURLAuthenticationMethodNTLM == "NSURLAuthenticationMethodNTLM")
        #expect(NSURLAuthenticationMethodNegotiate == "NSURLAuthenticationMethodNegotiate")
        #expect(NSURLAuthenticationMethodServerTrust == "NSURLAuthenticationMethodServerTrust")
        #expect(NSURLAuthenticationMethodClientCertificate == "NSURLAuthenticationMethodClientCertificate")
        #expect(NSURLProtectionSpaceHTTP == "http")
        #expect(NSURLProtectionSpaceHTTPS == "https")
        #expect(NSURLProtectionSpaceHTTPProxy == "http")
        #expect(NSURLProtectionSpaceHTTPSProxy == "https")
        #expect(NSURLProtectionSpaceSOCKSProxy == "SOCKS")
        #expect(NSURLSessionTransferSizeUnknown == -1)
        #expect(URLSessionDownloadTaskResumeData == "NSURLSessionDownloadTaskResumeData")
    }

    @Test("TLS enums use the wire values")
    func tlsValues() {
        #expect(tls_protocol_version_t.TLSv12.rawValue == 0x0303)
        #expect(tls_protocol_version_t.TLSv13.rawValue == 0x0304)
        #expect(tls_protocol_version_t.DTLSv12.rawValue == 0xFEFD)
        #expect(tls_ciphersuite_t.AES_128_GCM_SHA256.rawValue == 0x1301)
        #expect(tls_ciphersuite_t(rawValue: 0xC02F) == .ECDHE_RSA_WITH_AES_128_GCM_SHA256)
        #expect(tls_ciphersuite_t(rawValue: 0xCCA8) == .ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256)
    }
}
