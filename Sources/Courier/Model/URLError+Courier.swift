import Foundation

// Foundation on Linux already defines `URLError`, its codes and the `NSURLError…` keys; Courier
// only adds to it.

extension URLError {

    /// The `userInfo` key under which the failing URL's absolute string is stored. Its value is
    /// that of Foundation's `NSURLErrorFailingURLStringErrorKey`, spelled out here because the
    /// constant is deprecated.
    internal static let failingURLStringKey = "NSErrorFailingURLStringKey"

    /// Creates a URL-loading error, the one way Courier reports a failure.
    ///
    /// The error's `userInfo` always carries:
    /// - `NSURLErrorFailingURLErrorKey` (the `URL`) and `NSErrorFailingURLStringKey` (its absolute
    ///   string) when `url` is non-nil, so `failingURL` is set;
    /// - `NSLocalizedDescriptionKey`: `description`, or a standard English message for `code`;
    /// - `NSUnderlyingErrorKey`: `underlying`, stored as the given error value (cast it with
    ///   `as? any Error`, or to its own type), when non-nil.
    ///
    /// - Parameters:
    ///   - code: The error code.
    ///   - url: The URL whose load failed.
    ///   - description: A message for people, replacing the default one for `code`.
    ///   - underlying: The lower-level error that caused this one, if any.
    internal init(_ code: URLError.Code, url: URL?, description: String? = nil, underlying: (any Error)? = nil) {
        var info: [String: Any] = [:]
        if let url {
            info[NSURLErrorFailingURLErrorKey] = url
            info[URLError.failingURLStringKey] = url.absoluteString
        }
        info[NSLocalizedDescriptionKey] = description ?? URLError.defaultDescription(for: code)
        if let underlying {
            info[NSUnderlyingErrorKey] = underlying
        }
        self.init(code, userInfo: info)
    }

    /// The data needed to resume a failed or cancelled download with
    /// `URLSession.downloadTask(withResumeData:)`, if the download can be resumed.
    public var downloadTaskResumeData: Data? {
        userInfo[URLSessionDownloadTaskResumeData] as? Data
    }

    /// The standard English message Courier uses for `code` when no specific one is given.
    internal static func defaultDescription(for code: URLError.Code) -> String {
        switch code {
        case .unknown: return "An unknown error occurred."
        case .cancelled: return "The request was cancelled."
        case .badURL: return "The URL is malformed."
        case .timedOut: return "The request timed out."
        case .unsupportedURL: return "The URL's scheme is not supported."
        case .cannotFindHost: return "A server with the specified host name could not be found."
        case .cannotConnectToHost: return "Could not connect to the server."
        case .networkConnectionLost: return "The network connection was lost."
        case .dnsLookupFailed: return "The DNS lookup failed."
        case .httpTooManyRedirects: return "There were too many HTTP redirects."
        case .resourceUnavailable: return "The requested resource is unavailable."
        case .notConnectedToInternet: return "The Internet connection appears to be offline."
        case .redirectToNonExistentLocation: return "The server redirected to a location that does not exist."
        case .badServerResponse: return "The server returned an invalid response."
        case .userCancelledAuthentication: return "Authentication was cancelled."
        case .userAuthenticationRequired: return "Authentication is required to access the resource."
        case .zeroByteResource: return "The resource is empty."
        case .cannotDecodeRawData: return "The response data could not be decoded."
        case .cannotDecodeContentData: return "The response content could not be decoded with its content encoding."
        case .cannotParseResponse: return "The response could not be parsed."
        case .appTransportSecurityRequiresSecureConnection: return "A secure connection is required to load the resource."
        case .fileDoesNotExist: return "The requested file does not exist."
        case .fileIsDirectory: return "The requested file is a directory."
        case .noPermissionsToReadFile: return "There is no permission to read the requested file."
        case .dataLengthExceedsMaximum: return "The resource exceeds the maximum allowed size."
        case .secureConnectionFailed: return "A TLS error occurred and a secure connection to the server could not be made."
        case .serverCertificateHasBadDate: return "The server's certificate has expired."
        case .serverCertificateUntrusted: return "The server's certificate is not trusted."
        case .serverCertificateHasUnknownRoot: return "The server's certificate was signed by an unknown certificate authority."
        case .serverCertificateNotYetValid: return "The server's certificate is not yet valid."
        case .clientCertificateRejected: return "The server rejected the client certificate."
        case .clientCertificateRequired: return "The server requires a client certificate."
        case .cannotLoadFromNetwork: return "The resource is not in the cache and the request does not allow loading it from the network."
        case .cannotCreateFile: return "The download file could not be created."
        case .cannotOpenFile: return "The download file could not be opened."
        case .cannotCloseFile: return "The download file could not be closed."
        case .cannotWriteToFile: return "The download file could not be written."
        case .cannotRemoveFile: return "The download file could not be removed."
        case .cannotMoveFile: return "The download file could not be moved."
        case .downloadDecodingFailedMidStream: return "Decoding the download failed part way through."
        case .downloadDecodingFailedToComplete: return "Decoding the download could not be completed."
        case .internationalRoamingOff: return "International roaming is turned off."
        case .callIsActive: return "A call is active."
        case .dataNotAllowed: return "Data use is not allowed."
        case .requestBodyStreamExhausted: return "The request body stream is exhausted and cannot be sent again."
        case .backgroundSessionRequiresSharedContainer: return "The background session requires a shared container."
        case .backgroundSessionInUseByAnotherProcess: return "The background session is in use by another process."
        case .backgroundSessionWasDisconnected: return "The background session was disconnected."
        @unknown default: return "The URL load failed (error \(code.rawValue))."
        }
    }
}
