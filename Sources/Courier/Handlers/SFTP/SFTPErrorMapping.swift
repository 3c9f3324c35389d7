internal import CSSH2
import Foundation

/// Turns libssh2's error codes and SFTP status codes into `URLError`s (always with the failing URL).
enum SFTPErrorMapping {
    /// What the failed SFTP request was doing, for the wording and the code of the error.
    enum Operation {
        case read, write, list, stat

        var verb: String {
            switch self {
            case .read: return "read"
            case .write: return "write"
            case .list: return "list"
            case .stat: return "look up"
            }
        }
    }

    /// The error for an SFTP status (`SSH_FX_…`) the server answered a request about `path` with.
    static func statusError(_ status: UInt, operation: Operation, path: String, url: URL?) -> URLError {
        let name = Int32(truncatingIfNeeded: status)
        switch name {
        case Int32(LIBSSH2_FX_NO_SUCH_FILE), Int32(LIBSSH2_FX_NO_SUCH_PATH), Int32(LIBSSH2_FX_NOT_A_DIRECTORY):
            return URLError(.fileDoesNotExist, url: url, description: "\(path) does not exist on the server.")
        case Int32(LIBSSH2_FX_PERMISSION_DENIED), Int32(LIBSSH2_FX_WRITE_PROTECT):
            return URLError(.noPermissionsToReadFile, url: url,
                            description: "The server denied permission to \(operation.verb) \(path).")
        case Int32(LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM), Int32(LIBSSH2_FX_QUOTA_EXCEEDED):
            return URLError(.cannotWriteToFile, url: url, description: "The server has no room to write \(path).")
        case Int32(LIBSSH2_FX_FILE_ALREADY_EXISTS):
            return URLError(.cannotCreateFile, url: url, description: "\(path) already exists on the server.")
        case Int32(LIBSSH2_FX_CONNECTION_LOST), Int32(LIBSSH2_FX_NO_CONNECTION):
            return URLError(.networkConnectionLost, url: url, description: "The SFTP connection was lost.")
        case Int32(LIBSSH2_FX_OP_UNSUPPORTED):
            return URLError(.unsupportedURL, url: url, description: "The SFTP server does not support this operation on \(path).")
        default:
            let code: URLError.Code = operation == .write ? .cannotWriteToFile : .cannotOpenFile
            return URLError(code, url: url, description: "The SFTP server could not \(operation.verb) \(path) (status \(status)).")
        }
    }

    /// The error for a libssh2 session-level failure `code` (a `LIBSSH2_ERROR_…`), with libssh2's own
    /// message when there is one. `established` says whether the SSH handshake had completed.
    static func sessionError(_ code: Int32, message: String?, established: Bool, url: URL?) -> URLError {
        let detail = message.map { ": \($0)" } ?? ""
        switch code {
        case LIBSSH2_ERROR_TIMEOUT, LIBSSH2_ERROR_SOCKET_TIMEOUT:
            return URLError(.timedOut, url: url, description: "The SSH server did not answer in time\(detail).")
        case LIBSSH2_ERROR_BANNER_RECV where !established, LIBSSH2_ERROR_PROTO where !established:
            return URLError(.badServerResponse, url: url, description: "The server does not speak SSH\(detail).")
        case LIBSSH2_ERROR_KEX_FAILURE, LIBSSH2_ERROR_KEY_EXCHANGE_FAILURE, LIBSSH2_ERROR_HOSTKEY_INIT,
             LIBSSH2_ERROR_HOSTKEY_SIGN, LIBSSH2_ERROR_METHOD_NONE, LIBSSH2_ERROR_INVALID_MAC, LIBSSH2_ERROR_DECRYPT:
            return URLError(.secureConnectionFailed, url: url, description: "The SSH key exchange failed\(detail).")
        case LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED, LIBSSH2_ERROR_CHANNEL_FAILURE, LIBSSH2_ERROR_REQUEST_DENIED:
            return URLError(.resourceUnavailable, url: url, description: "The SSH server refused an SFTP channel\(detail).")
        case LIBSSH2_ERROR_ALLOC:
            return URLError(.cannotLoadFromNetwork, url: url, description: "libssh2 ran out of memory\(detail).")
        default:
            return URLError(.networkConnectionLost, url: url, description: "The SSH connection was lost\(detail).")
        }
    }

    /// libssh2's message for the session's last error, if any.
    static func lastErrorMessage(of session: OpaquePointer) -> String? {
        var message: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        _ = libssh2_session_last_error(session, &message, &length, 0)
        guard let message, length > 0 else { return nil }
        return String(cString: message)
    }
}
