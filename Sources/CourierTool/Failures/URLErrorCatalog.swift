import Foundation

/// Names, default messages and exit statuses for every `URLError.Code` the URL Loading System defines.
///
/// Diagnostics print a code by its Swift name (`badURL`, `fileDoesNotExist`), which is what a reader
/// searches for; the raw number alone says little.
enum URLErrorCatalog {
    /// One code's entry.
    struct Entry: Sendable {
        let code: URLError.Code
        let name: String
        let message: String
        let exit: ToolExit
    }

    /// Every known code. A code missing here prints as `URLError <number>` and exits with ``ToolExit/other``.
    static let entries: [Entry] = [
        Entry(code: .unknown, name: "unknown", message: "unknown error", exit: .other),
        Entry(code: .cancelled, name: "cancelled", message: "cancelled", exit: .cancelled),
        Entry(code: .badURL, name: "badURL", message: "bad URL", exit: .badURL),
        Entry(code: .timedOut, name: "timedOut", message: "timed out", exit: .timedOut),
        Entry(code: .unsupportedURL, name: "unsupportedURL", message: "unsupported URL", exit: .badURL),
        Entry(code: .cannotFindHost, name: "cannotFindHost", message: "cannot find host", exit: .connection),
        Entry(code: .cannotConnectToHost, name: "cannotConnectToHost", message: "cannot connect to host", exit: .connection),
        Entry(code: .networkConnectionLost, name: "networkConnectionLost", message: "network connection lost", exit: .connection),
        Entry(code: .dnsLookupFailed, name: "dnsLookupFailed", message: "DNS lookup failed", exit: .connection),
        Entry(code: .httpTooManyRedirects, name: "httpTooManyRedirects", message: "too many HTTP redirects", exit: .serverError),
        Entry(code: .resourceUnavailable, name: "resourceUnavailable", message: "resource unavailable", exit: .notFound),
        Entry(code: .notConnectedToInternet, name: "notConnectedToInternet", message: "not connected to the network", exit: .connection),
        Entry(code: .redirectToNonExistentLocation, name: "redirectToNonExistentLocation", message: "redirect to a non-existent location", exit: .serverError),
        Entry(code: .badServerResponse, name: "badServerResponse", message: "bad server response", exit: .serverError),
        Entry(code: .userCancelledAuthentication, name: "userCancelledAuthentication", message: "authentication cancelled", exit: .security),
        Entry(code: .userAuthenticationRequired, name: "userAuthenticationRequired", message: "authentication required", exit: .security),
        Entry(code: .zeroByteResource, name: "zeroByteResource", message: "zero-byte resource", exit: .serverError),
        Entry(code: .cannotDecodeRawData, name: "cannotDecodeRawData", message: "cannot decode raw data", exit: .serverError),
        Entry(code: .cannotDecodeContentData, name: "cannotDecodeContentData", message: "cannot decode content data", exit: .serverError),
        Entry(code: .cannotParseResponse, name: "cannotParseResponse", message: "cannot parse response", exit: .serverError),
        Entry(code: .internationalRoamingOff, name: "internationalRoamingOff", message: "international roaming off", exit: .connection),
        Entry(code: .callIsActive, name: "callIsActive", message: "call is active", exit: .connection),
        Entry(code: .dataNotAllowed, name: "dataNotAllowed", message: "data not allowed", exit: .connection),
        Entry(code: .requestBodyStreamExhausted, name: "requestBodyStreamExhausted", message: "request body stream exhausted", exit: .other),
        Entry(code: .fileDoesNotExist, name: "fileDoesNotExist", message: "file does not exist", exit: .notFound),
        Entry(code: .fileIsDirectory, name: "fileIsDirectory", message: "file is a directory", exit: .notFound),
        Entry(code: .noPermissionsToReadFile, name: "noPermissionsToReadFile", message: "no permission to read file", exit: .permissionDenied),
        Entry(code: .dataLengthExceedsMaximum, name: "dataLengthExceedsMaximum", message: "data length exceeds maximum", exit: .other),
        Entry(code: .secureConnectionFailed, name: "secureConnectionFailed", message: "secure connection failed", exit: .security),
        Entry(code: .serverCertificateHasBadDate, name: "serverCertificateHasBadDate", message: "server certificate has a bad date", exit: .security),
        Entry(code: .serverCertificateUntrusted, name: "serverCertificateUntrusted", message: "server certificate untrusted", exit: .security),
        Entry(code: .serverCertificateHasUnknownRoot, name: "serverCertificateHasUnknownRoot", message: "server certificate has an unknown root", exit: .security),
        Entry(code: .serverCertificateNotYetValid, name: "serverCertificateNotYetValid", message: "server certificate not yet valid", exit: .security),
        Entry(code: .clientCertificateRejected, name: "clientCertificateRejected", message: "client certificate rejected", exit: .security),
        Entry(code: .clientCertificateRequired, name: "clientCertificateRequired", message: "client certificate required", exit: .security),
        Entry(code: .cannotLoadFromNetwork, name: "cannotLoadFromNetwork", message: "cannot load from network", exit: .connection),
        Entry(code: .cannotCreateFile, name: "cannotCreateFile", message: "cannot create file", exit: .other),
        Entry(code: .cannotOpenFile, name: "cannotOpenFile", message: "cannot open file", exit: .other),
        Entry(code: .cannotCloseFile, name: "cannotCloseFile", message: "cannot close file", exit: .other),
        Entry(code: .cannotWriteToFile, name: "cannotWriteToFile", message: "cannot write to file", exit: .other),
        Entry(code: .cannotRemoveFile, name: "cannotRemoveFile", message: "cannot remove file", exit: .other),
        Entry(code: .cannotMoveFile, name: "cannotMoveFile", message: "cannot move file", exit: .other),
        Entry(code: .downloadDecodingFailedMidStream, name: "downloadDecodingFailedMidStream", message: "download decoding failed mid-stream", exit: .other),
        Entry(code: .downloadDecodingFailedToComplete, name: "downloadDecodingFailedToComplete", message: "download decoding failed to complete", exit: .other),
        Entry(code: .backgroundSessionRequiresSharedContainer, name: "backgroundSessionRequiresSharedContainer", message: "background session requires a shared container", exit: .other),
        Entry(code: .backgroundSessionInUseByAnotherProcess, name: "backgroundSessionInUseByAnotherProcess", message: "background session in use by another process", exit: .other),
        Entry(code: .backgroundSessionWasDisconnected, name: "backgroundSessionWasDisconnected", message: "background session was disconnected", exit: .other),
    ]

    private static let byRawValue: [Int: Entry] = Dictionary(
        entries.map { ($0.code.rawValue, $0) }, uniquingKeysWith: { first, _ in first })

    /// The entry for `code`, if the catalog knows it.
    static func entry(for code: URLError.Code) -> Entry? { byRawValue[code.rawValue] }

    /// The Swift name of `code` (`badURL`), or `URLError <number>` for a code the catalog lacks.
    static func name(of code: URLError.Code) -> String {
        entry(for: code)?.name ?? "URLError \(code.rawValue)"
    }

    /// The exit status for a load that failed with `code`.
    static func exit(for code: URLError.Code) -> ToolExit {
        entry(for: code)?.exit ?? .other
    }

    /// The code whose Swift name is `name`, for lookups by name.
    static func code(named name: String) -> URLError.Code? {
        entries.first { $0.name == name }?.code
    }

    /// A one-line human message for `error`: its own description when it carries one, else the
    /// catalog's phrase for its code.
    static func message(for error: any Error) -> String {
        let nsError = error as NSError
        if let description = nsError.userInfo[NSLocalizedDescriptionKey] as? String, !description.isEmpty {
            return description
        }
        if let urlError = error as? URLError {
            return entry(for: urlError.code)?.message ?? "URL loading failed"
        }
        return String(describing: error)
    }
}
