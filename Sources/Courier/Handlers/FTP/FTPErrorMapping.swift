internal import CCurl
import Foundation

/// Maps a failed FTP transfer to Apple's `URLError` codes, using the server's last reply where
/// libcurl's code is too coarse (a 550 means "no such file" or "permission denied" by its text).
enum FTPErrorMapping {
    static func error(for result: CURLcode, operation: FTPOperation, url: URL?, reply: String?, detail: String?) -> URLError {
        let message = String(cString: curl_easy_strerror(result))
        let description = "\(detail.map { "\(message): \($0)" } ?? message) (libcurl error \(result.rawValue))"
        return URLError(code(for: result, operation: operation, reply: reply), url: url, description: description)
    }

    static func code(for result: CURLcode, operation: FTPOperation, reply: String?) -> URLError.Code {
        let refusedForPermission = reply.map(isPermissionReply) ?? false
        switch result {
        case CURLE_REMOTE_FILE_NOT_FOUND, CURLE_REMOTE_ACCESS_DENIED, CURLE_FTP_COULDNT_RETR_FILE:
            // 550 on RETR, CWD or LIST: missing, unless the server says it is about permissions.
            if operation == .upload { return refusedForPermission ? .noPermissionsToReadFile : .cannotCreateFile }
            return refusedForPermission ? .noPermissionsToReadFile : .fileDoesNotExist
        case CURLE_UPLOAD_FAILED:
            return refusedForPermission ? .noPermissionsToReadFile : .cannotCreateFile
        case CURLE_FTP_ACCEPT_FAILED, CURLE_FTP_ACCEPT_TIMEOUT, CURLE_FTP_CANT_GET_HOST, CURLE_FTP_PORT_FAILED:
            // The data connection could not be made (active or passive).
            return .cannotConnectToHost
        case CURLE_WEIRD_SERVER_REPLY, CURLE_FTP_WEIRD_PASS_REPLY, CURLE_FTP_WEIRD_PASV_REPLY,
             CURLE_FTP_WEIRD_227_FORMAT, CURLE_FTP_COULDNT_SET_TYPE, CURLE_FTP_COULDNT_USE_REST,
             CURLE_QUOTE_ERROR, CURLE_BAD_DOWNLOAD_RESUME:
            return .badServerResponse
        case CURLE_FTP_PRET_FAILED, CURLE_FTP_BAD_FILE_LIST:
            return .cannotParseResponse
        case CURLE_USE_SSL_FAILED:
            return .secureConnectionFailed
        default:
            return CurlErrorMapping.code(for: result)
        }
    }

    /// Whether a reply text speaks of permission rather than absence.
    private static func isPermissionReply(_ reply: String) -> Bool {
        let text = reply.lowercased()
        return text.contains("permission") || text.contains("denied") || text.contains("not allowed")
            || text.contains("access is") || text.contains("privilege")
    }
}
