internal import CCurl
import Foundation

/// Maps libcurl's result codes to Apple's `URLError` codes.
enum CurlErrorMapping {
    /// The `URLError.Code` for `result`.
    static func code(for result: CURLcode) -> URLError.Code {
        switch result {
        case CURLE_UNSUPPORTED_PROTOCOL: return .unsupportedURL
        case CURLE_URL_MALFORMAT: return .badURL
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return .cannotFindHost
        case CURLE_COULDNT_CONNECT: return .cannotConnectToHost
        case CURLE_OPERATION_TIMEDOUT: return .timedOut
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE, CURLE_HTTP2_STREAM,
             CURLE_HTTP2:
            return .networkConnectionLost
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP_RETURNED_ERROR, CURLE_RANGE_ERROR: return .badServerResponse
        case CURLE_BAD_CONTENT_ENCODING: return .cannotDecodeContentData
        case CURLE_TOO_MANY_REDIRECTS: return .httpTooManyRedirects
        case CURLE_LOGIN_DENIED, CURLE_AUTH_ERROR: return .userAuthenticationRequired
        case CURLE_PEER_FAILED_VERIFICATION: return .serverCertificateUntrusted
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_CIPHER,
             CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_USE_SSL_FAILED:
            return .secureConnectionFailed
        case CURLE_SSL_CERTPROBLEM: return .clientCertificateRejected
        case CURLE_SSL_CACERT_BADFILE: return .secureConnectionFailed
        case CURLE_FILESIZE_EXCEEDED: return .dataLengthExceedsMaximum
        case CURLE_READ_ERROR, CURLE_SEND_FAIL_REWIND: return .requestBodyStreamExhausted
        case CURLE_WRITE_ERROR: return .cannotWriteToFile
        case CURLE_ABORTED_BY_CALLBACK: return .cancelled
        case CURLE_OUT_OF_MEMORY: return .cannotLoadFromNetwork
        case CURLE_REMOTE_FILE_NOT_FOUND: return .fileDoesNotExist
        case CURLE_REMOTE_ACCESS_DENIED: return .noPermissionsToReadFile
        default: return .unknown
        }
    }

    /// The most bytes libcurl 7.88 builds a request head (request line and header fields) in
    /// (`DYN_HTTP_REQUEST`).
    static let requestHeadLimit = 1 << 20

    /// Whether libcurl could not build the request head, so sent nothing: a URL or header fields
    /// longer than ``requestHeadLimit``. libcurl 7.88 reports that as running out of memory, with no
    /// detail, before any request byte is sent (`CURLINFO_REQUEST_SIZE` 0).
    static func refusedOversizedRequest(_ result: CURLcode, requestBytesSent: Int) -> Bool {
        result == CURLE_OUT_OF_MEMORY && requestBytesSent == 0
    }

    /// Whether libcurl refused a response head for its size, before any response was delivered:
    /// a header line longer than it keeps (libcurl 7.88 reports running out of memory after the
    /// request went out, later versions "Rejected … bytes header") or a whole head over its limit
    /// ("Too large response headers", a receive error).
    static func refusedOversizedResponseHead(_ result: CURLcode, detail: String?, requestBytesSent: Int) -> Bool {
        if result == CURLE_OUT_OF_MEMORY { return requestBytesSent > 0 }
        guard let detail = detail?.lowercased() else { return false }
        return detail.contains("too large response headers") || detail.contains("bytes header")
    }

    /// Whether libcurl refused the URL's scheme because the transfer may not use it
    /// (`CURLOPT_PROTOCOLS_STR`): "Protocol "ftp" not supported or disabled in libcurl". libcurl
    /// also answers `CURLE_UNSUPPORTED_PROTOCOL` to an HTTP/0.9 reply, with another message.
    static func refusedScheme(_ result: CURLcode, detail: String?) -> Bool {
        result == CURLE_UNSUPPORTED_PROTOCOL && detail?.contains("not supported or disabled") == true
    }

    /// A `URLError` for `result` on `url`, with libcurl's own wording in the description.
    static func error(for result: CURLcode, url: URL?, detail: String? = nil) -> URLError {
        let message = String(cString: curl_easy_strerror(result))
        let text = detail.map { "\(message): \($0)" } ?? message
        if result == CURLE_PEER_FAILED_VERIFICATION, let detail {
            return URLError(TLSServerTrust.errorCode(forVerificationFailure: detail), url: url,
                            description: "\(text) (libcurl error \(result.rawValue))")
        }
        return URLError(code(for: result), url: url, description: "\(text) (libcurl error \(result.rawValue))")
    }
}
