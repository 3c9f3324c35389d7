import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failure to create, write or move an output file. It is reported in the tool's usual format with
/// the matching `URLError` code name (`cannotCreateFile`, `cannotWriteToFile`, `cannotMoveFile`).
struct OutputError: Error, CustomStringConvertible {
    enum Operation: Sendable { case create, write, rename }

    let operation: Operation
    let path: String
    let errnoValue: Int32?
    let underlying: String?

    init(operation: Operation, path: String, errno: Int32) {
        self.operation = operation
        self.path = path
        self.errnoValue = errno
        self.underlying = nil
    }

    init(operation: Operation, path: String, underlying: any Error) {
        self.operation = operation
        self.path = path
        let nsError = underlying as NSError
        self.errnoValue = nsError.domain == NSPOSIXErrorDomain ? Int32(nsError.code) : nil
        self.underlying = nsError.localizedDescription
    }

    /// The `URLError` equivalent, for the code name and exit status.
    var urlError: URLError {
        let code: URLError.Code = switch operation {
        case .create: .cannotCreateFile
        case .write: .cannotWriteToFile
        case .rename: .cannotMoveFile
        }
        return URLError(code, userInfo: [NSLocalizedDescriptionKey: description])
    }

    /// The exit status: permission problems and missing directories get their own.
    var exit: ToolExit {
        switch errnoValue {
        case EACCES, EPERM, EROFS: .permissionDenied
        case ENOENT, ENOTDIR: .notFound
        default: .other
        }
    }

    var description: String {
        let verb = switch operation {
        case .create: "cannot create output file"
        case .write: "cannot write output file"
        case .rename: "cannot move output into place at"
        }
        let reason = errnoValue.map { String(cString: strerror($0)) } ?? underlying ?? "unknown error"
        return "\(verb) \(path): \(reason)"
    }
}
