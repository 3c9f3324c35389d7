internal import CCurl
import Foundation

/// What the HTTP handler does when libcurl reports that an attempt's transfer ended: the whole
/// decision, as a pure function of what the handler knew then (``Facts``). The handler gathers the
/// facts, calls ``decide(_:)`` and carries the outcome out (`HTTPURLProtocol.carryOut`).
enum HTTPTransferOutcome {
    /// The response was a redirect (its body has been read): report it; the task decides.
    case redirect(request: URLRequest, response: HTTPURLResponse)
    /// The host could not be reached and the session waits for connectivity: try again later.
    case waitForConnectivity
    /// libcurl had to send the body again (a reused connection was gone) and the app's stream cannot
    /// go back: retry with a new stream from the delegate.
    case resendBody
    /// A 401 or 407 (or a proxy refusing the tunnel with 407) the authentication exchange answers:
    /// present its challenge.
    case authenticationChallenge
    /// The server asked for a client certificate (or refused a handshake without one): ask the
    /// delegate for one.
    case clientCertificateChallenge
    /// The server's certificate failed verification: ask the delegate whether to trust it; `error`
    /// is the load's error unless it does.
    case serverTrustChallenge(error: URLError)
    /// The response was delivered and its body read: the load finished.
    case finish
    /// A `304` answered the revalidation of the stored response: report the refreshed stored response.
    case deliverRevalidatedResponse
    /// The load fails with this error.
    case fail(URLError)

    /// What the handler knows when a transfer ends.
    struct Facts {
        /// libcurl's result (`CURLE_OK` on success).
        var result: CURLcode
        /// The request's URL (the failing URL of every error).
        var url: URL?
        /// libcurl's detailed message about the failure, if any.
        var errorDetail: String? = nil
        /// Request bytes libcurl sent (`CURLINFO_REQUEST_SIZE`; 0: it could not even build the head).
        /// Only a failure's error reads it.
        var requestBytesSent = 0
        /// A response was passed to the client during the attempt.
        var responseDelivered = false
        /// The redirect a 3xx head proposed, if the attempt's final response was one.
        var redirect: (request: URLRequest, response: HTTPURLResponse)? = nil
        /// The attempt's last response was a 401/407 whose challenge the authentication exchange holds.
        var challengedByResponse = false
        /// A proxy refused the CONNECT tunnel with a 407 offering schemes, and its challenge began.
        var challengedByTunnel = false
        /// A server-trust challenge was accepted already (by this load or earlier in the session).
        var serverTrustAccepted = false
        /// A client certificate was chosen and presented.
        var certificatePresented = false
        /// The delegate chose to go on without a client certificate.
        var certificateDeclined = false
        /// The server asked for a client certificate during the attempt's handshake.
        var certificateRequested = false
        /// The session waits for connectivity (`waitsForConnectivity`).
        var waitsForConnectivity = false
        /// A `304` answered the load's revalidation, and the refreshed stored response waits.
        var revalidationAnswered = false
    }

    /// The outcome, in this order of precedence: a redirect whose body was read; a wait for
    /// connectivity when nothing could connect; a body to send again; an authentication challenge;
    /// a client-certificate challenge; a server-trust challenge; the finish of a delivered response;
    /// a revalidated stored response; otherwise a failure (``HTTPTransferFailure``).
    static func decide(_ facts: Facts) -> HTTPTransferOutcome {
        let result = facts.result
        if let redirect = facts.redirect {
            return .redirect(request: redirect.request, response: redirect.response)
        }
        let authentication = (facts.challengedByResponse && result == CURLE_OK) || facts.challengedByTunnel
        let trust = result == CURLE_PEER_FAILED_VERIFICATION && !facts.serverTrustAccepted && !facts.responseDelivered
        let unreachable = result == CURLE_COULDNT_CONNECT || result == CURLE_COULDNT_RESOLVE_HOST
        if !authentication && !trust && !facts.responseDelivered && facts.waitsForConnectivity && unreachable {
            return .waitForConnectivity
        }
        if result == CURLE_SEND_FAIL_REWIND && !authentication {
            return .resendBody
        }
        if authentication {
            return .authenticationChallenge
        }
        // The server asked for a certificate in the handshake (which the watch then ended), or
        // refused a handshake without one.
        if !facts.certificatePresented && !facts.certificateDeclined && !facts.responseDelivered,
           (result != CURLE_OK && facts.certificateRequested)
            || HTTPClientCertificate.serverRequiresCertificate(result: result, detail: facts.errorDetail) {
            return .clientCertificateChallenge
        }
        if trust {
            return .serverTrustChallenge(error: CurlErrorMapping.error(for: result, url: facts.url, detail: facts.errorDetail))
        }
        if result == CURLE_OK && facts.responseDelivered {
            return .finish
        }
        if result == CURLE_OK && facts.revalidationAnswered {
            return .deliverRevalidatedResponse
        }
        let certificate = HTTPTransferFailure.CertificateState(presented: facts.certificatePresented,
                                                               declined: facts.certificateDeclined)
        return .fail(HTTPTransferFailure.error(for: result, url: facts.url, detail: facts.errorDetail,
                                               requestBytesSent: facts.requestBytesSent,
                                               delivered: facts.responseDelivered, certificate: certificate))
    }
}
