import Foundation

/// Where an upload task's body comes from.
enum UploadBody: @unchecked Sendable {
    /// No body of its own (data and download tasks): the request's own `httpBody` or stream is used.
    case none
    /// Bytes in memory.
    case data(Data)
    /// A file on disk, read as it is sent.
    case file(URL)
    /// A stream the delegate provides through `needNewBodyStream`.
    case stream

    /// Whether preparing a request makes a fresh stream for this body (a file is simply reopened),
    /// so a redirect or retry needs nothing from the delegate.
    var recreatesItsStream: Bool {
        switch self {
        case .file, .data: return true
        case .none, .stream: return false
        }
    }

    /// The body's length when known up front.
    var knownLength: Int64? {
        switch self {
        case .none, .stream: return nil
        case .data(let data): return Int64(data.count)
        case .file(let url):
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber
            return size?.int64Value
        }
    }
}
