import CCurl
import Foundation
import Testing
@testable import Courier

/// The HTTP handler's end-of-transfer decision, one test per outcome (and per fact that turns one
/// outcome into another), on facts alone: no server, no transfer.
@Suite("HTTP end-of-transfer decision")
struct HTTPTransferOutcomeTests {
    private static let url = URL(string: "https://example.test/resource")!

    private static func facts(_ result: CURLcode, _ adjust: (inout HTTPTransferOutcome.Facts) -> Void = { _ in }) -> HTTPTransferOutcome.Facts {
        var facts = HTTPTransferOutcome.Facts(result: result, url: url)
        adjust(&facts)
        return facts
    }

    /// The case of an outcome, without its values.
    fileprivate enum Kind: Equatable {
        case redirect, waitForConnectivity, resendBody, authenticationChallenge, clientCertificateChallenge
        case serverTrustChallenge, finish, deliverRevalidatedResponse, fail
    }

    /// The error of a `.fail` outcome, or `nil` (recorded as an issue) for any other.
    private static func failure(_ outcome: HTTPTransferOutcome, sourceLocation: SourceLocation = #_sourceLocation) -> URLError? {
        guard case .fail(let error) = outcome else {
            Issue.record("expected a failure, got \(outcome)", sourceLocation: sourceLocation)
            return nil
        }
        return error
    }

    @Test func aRedirectWhoseBodyWasReadIsReported() throws {
        let target = try #require(URL(string: "https://example.test/elsewhere"))
        let response = try #require(HTTPURLResponse(url: Self.url, statusCode: 302, httpVersion: "HTTP/1.1",
                                                    headerFields: ["Location": target.absoluteString]))
        let outcome = HTTPTransferOutcome.decide(Self.facts(CURLE_OK) { $0.redirect = (URLRequest(url: target), response) })
        guard case .redirect(let request, let redirectResponse) = outcome else {
            Issue.record("expected a redirect, got \(outcome)")
            return
        }
        #expect(request.url == target && redirectResponse.statusCode == 302)
    }

    @Test func aRedirectIsReportedEvenWhenItsBodyWasCutShort() throws {
        let response = try #require(HTTPURLResponse(url: Self.url, statusCode: 301, httpVersion: "HTTP/1.1", headerFields: nil))
        #expect(HTTPTransferOutcome.decide(Self.facts(CURLE_RECV_ERROR) { $0.redirect = (URLRequest(url: Self.url), response) }).kind == .redirect)
    }

    @Test func anUnreachableHostIsTriedAgainWhenTheSessionWaitsForConnectivity() {
        #expect(HTTPTransferOutcome.decide(Self.facts(CURLE_COULDNT_CONNECT) { $0.waitsForConnectivity = true }).kind == .waitForConnectivity)
    }

    @Test func anUnreachableHostFailsWhenTheSessionDoesNotWait() {
        let error = Self.failure(HTTPTransferOutcome.decide(Self.facts(CURLE_COULDNT_RESOLVE_HOST)))
        #expect(error?.code == .cannotFindHost)
    }

    @Test func aBodyLibcurlCouldNotRewindIsSentAgainFromANewStream() {
        #expect(HTTPTransferOutcome.decide(Self.facts(CURLE_SEND_FAIL_REWIND)).kind == .resendBody)
    }

    @Test func aCompleted401IsAnAuthenticationChallenge() {
        #expect(HTTPTransferOutcome.decide(Self.facts(CURLE_OK) { $0.challengedByResponse = true }).kind == .authenticationChallenge)
    }

    @Test func a401WhoseBodyWasCutShortFailsInsteadOfChallenging() {
        let error = Self.failure(HTTPTransferOutcome.decide(Self.facts(CURLE_RECV_ERROR) { $0.challengedByResponse = true }))
        #expect(error?.code == .networkConnectionLost)
    }

    @Test func aProxyRefusingTheTunnelChallengesEvenWhenTheSessionWaitsForConnectivity() {
        #expect(HTTPTransferOutcome.decide(Self.facts(CURLE_COULDNT_CONNECT) {
            $0.challengedByTunnel = true
            $0.waitsForConnectivity = true
        }).kind == .authenticationChallenge)
    }

    @Test func aCertificateRequestInTheHandshakeIsAClientCertificateChallenge() {
        #expect(HTTPTransferOutcome.decide(Self.facts(CURLE_SSL_CONNECT_ERROR) { $0.certificateRequested = true }).kind == .clientCertificateChallenge)
    }

    @Test func aHandshakeRefusedForWantOfACertificateIsAClientCertificateChallenge() {
        #expect(HTTPTransferOutcome.decide(Self.facts(CURLE_SSL_CONNECT_ERROR) {
            $0.errorDetail = "error:0A00045C:SSL routines::tlsv13 alert certificate required"
        }).kind == .clientCertificateChallenge)
    }

    @Test func aDeclinedCertificateIsNotAskedForAgain() {
        let error = Self.failure(HTTPTransferOutcome.decide(Self.facts(CURLE_SSL_CONNECT_ERROR) {
            $0.certificateDeclined = true
            $0.errorDetail = "error:0A00045C:SSL routines::tlsv13 alert certificate required"
        }))
        #expect(error?.code == .clientCertificateRequired)
    }

    @Test func aPresentedCertificateTheServerRefusesFails() {
        let error = Self.failure(HTTPTransferOutcome.decide(Self.facts(CURLE_SSL_CONNECT_ERROR) {
            $0.certificatePresented = true
            $0.errorDetail = "error:0A000418:SSL routines::tlsv1 alert unknown ca"
        }))
        #expect(error?.code == .clientCertificateRejected)
    }

    @Test func anUntrustedCertificateIsAServerTrustChallenge() {
        let outcome = HTTPTransferOutcome.decide(Self.facts(CURLE_PEER_FAILED_VERIFICATION))
        guard case .serverTrustChallenge(let error) = outcome else {
            Issue.record("expected a server-trust challenge, got \(outcome)")
            return
        }
        #expect(error.code == .serverCertificateUntrusted && error.failingURL == Self.url)
    }

    @Test func anUntrustedCertificateAfterTheDelegateAcceptedOneFails() {
        let error = Self.failure(HTTPTransferOutcome.decide(Self.facts(CURLE_PEER_FAILED_VERIFICATION) { $0.serverTrustAccepted = true }))
        #expect(error?.code == .serverCertificateUntrusted)
    }

    @Test func aDeliveredResponseWhoseBodyWasReadFinishes() {
        #expect(HTTPTransferOutcome.decide(Self.facts(CURLE_OK) { $0.responseDelivered = true }).kind == .finish)
    }

    @Test func a304ToTheRevalidationDeliversTheStoredResponse() {
        #expect(HTTPTransferOutcome.decide(Self.facts(CURLE_OK) { $0.revalidationAnswered = true }).kind == .deliverRevalidatedResponse)
    }

    @Test func aTransferThatEndedWithoutAResponseIsABadServerResponse() {
        let error = Self.failure(HTTPTransferOutcome.decide(Self.facts(CURLE_OK)))
        #expect(error?.code == .badServerResponse && error?.failingURL == Self.url)
    }

    @Test func aBodyCutShortAfterTheResponseIsALostConnection() {
        let error = Self.failure(HTTPTransferOutcome.decide(Self.facts(CURLE_PARTIAL_FILE) { $0.responseDelivered = true }))
        #expect(error?.code == .networkConnectionLost)
    }

    @Test func aRequestHeadLibcurlCouldNotBuildIsABadURL() {
        let error = Self.failure(HTTPTransferOutcome.decide(Self.facts(CURLE_OUT_OF_MEMORY) { $0.requestBytesSent = 0 }))
        #expect(error?.code == .badURL)
    }

    @Test func aResponseHeadTooLargeForLibcurlIsABadServerResponse() {
        let error = Self.failure(HTTPTransferOutcome.decide(Self.facts(CURLE_OUT_OF_MEMORY) { $0.requestBytesSent = 80 }))
        #expect(error?.code == .badServerResponse)
    }
}

private extension HTTPTransferOutcome {
    /// The outcome's case, for tests that expect one.
    var kind: HTTPTransferOutcomeTests.Kind {
        switch self {
        case .redirect: .redirect
        case .waitForConnectivity: .waitForConnectivity
        case .resendBody: .resendBody
        case .authenticationChallenge: .authenticationChallenge
        case .clientCertificateChallenge: .clientCertificateChallenge
        case .serverTrustChallenge: .serverTrustChallenge
        case .finish: .finish
        case .deliverRevalidatedResponse: .deliverRevalidatedResponse
        case .fail: .fail
        }
    }
}
