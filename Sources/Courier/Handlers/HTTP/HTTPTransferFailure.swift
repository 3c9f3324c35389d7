internal import CCurl
import Foundation

/// The `URLError` an HTTP transfer that ended without a usable response fails the load with: what
/// libcurl's result means for HTTP in particular (a response that could not be parsed, a head too
/// large, a request too long to send, a refused client certificate), else ``CurlErrorMapping``.
enum HTTPTransferFailure {
    /// What the handler knew about client certificates when the transfer ended.
    struct CertificateState {
        /// A client certificate was presented.
        var presented: Bool
        /// The delegate chose to go on without one.
        var declined: Bool
    }

    /// The error for a transfer that ended with `result` (CURLE_OK: it ended without a response the
    /// handler could deliver). `detail`: libcurl's message; `requestBytesSent`: what libcurl sent of
    /// the request (`CURLINFO_REQUEST_SIZE`); `delivered`: a response was passed to the client already.
    static func error(for result: CURLcode, url: URL?, detail: String?, requestBytesSent: Int, delivered: Bool,
                      certificate: CertificateState) -> URLError {
        if result == CURLE_OK || (result == CURLE_WRITE_ERROR && !delivered) {
            return URLError(.badServerResponse, url: url, description: "The server's response could not be parsed.")
        }
        if !delivered, CurlErrorMapping.refusedOversizedRequest(result, requestBytesSent: requestBytesSent) {
            return tooLongRequest(url: url)
        }
        if !delivered, CurlErrorMapping.refusedOversizedResponseHead(result, detail: detail, requestBytesSent: requestBytesSent) {
            return URLError(.badServerResponse, url: url,
                            description: "The server's response headers are too large: \(detail ?? "libcurl error \(result.rawValue)")")
        }
        if result == CURLE_RECV_ERROR, let detail, detail.lowercased().contains("chunk") {
            return URLError(.cannotParseResponse, url: url, description: "The response's chunked encoding is malformed: \(detail)")
        }
        if CurlErrorMapping.refusedScheme(result, detail: detail) {
            return URLError(.unsupportedURL, url: url, description: "An http(s) load may not use this URL's scheme: \(detail ?? "")")
        }
        if result == CURLE_UNSUPPORTED_PROTOCOL || result == CURLE_WEIRD_SERVER_REPLY {
            return URLError(.badServerResponse, url: url, description: "The server's response is not HTTP: \(detail ?? "")")
        }
        if certificate.presented, HTTPClientCertificate.serverRejectedCertificate(result: result, detail: detail) {
            return URLError(.clientCertificateRejected, url: url, description: "The server rejected the client certificate: \(detail ?? "")")
        }
        if !certificate.presented, certificate.declined, HTTPClientCertificate.serverRequiresCertificate(result: result, detail: detail) {
            return URLError(.clientCertificateRequired, url: url, description: "The server requires a client certificate: \(detail ?? "")")
        }
        return CurlErrorMapping.error(for: result, url: url, detail: detail)
    }

    /// libcurl could not build the request head: it keeps request heads (request line and header
    /// fields) to 1 MiB. A URL of most of that is "too long"; otherwise the header fields are.
    private static func tooLongRequest(url: URL?) -> URLError {
        let length = url?.absoluteString.utf8.count ?? 0
        let limit = CurlErrorMapping.requestHeadLimit
        if length >= limit / 2 {
            return URLError(.badURL, url: url,
                            description: "The URL is too long to send: it is \(length) bytes, and libcurl sends request heads of at most \(limit) bytes.")
        }
        return URLError(.badURL, url: url,
                        description: "The request's header fields are too long to send: libcurl sends request heads of at most \(limit) bytes.")
    }
}
