import Foundation

/// What one FTP transfer does. A load is one or two of them: a listing falls back from `MLSD` to
/// `LIST`, and a resumed download first looks at the remote file.
enum FTPOperation: Equatable {
    /// Fetch the file's size and modification time only (`SIZE`, `MDTM`), to check resume data.
    case probe
    /// Fetch the file (`RETR`), from `offset` (`REST`) when it is not zero.
    case download(offset: Int64)
    /// Store the request body as the file (`STOR`).
    case upload
    /// List the directory, machine-readably (`MLSD`) or as the server formats it (`LIST`).
    case list(machineReadable: Bool)

    /// The operation a request asks for: a body means upload, a path ending in `/` a listing.
    static func initial(for request: URLRequest, serverLacksMLSD: Bool) -> FTPOperation {
        if request.httpBody != nil || request.httpBodyStream != nil { return .upload }
        if isDirectory(request.url) { return .list(machineReadable: !serverLacksMLSD) }
        // A resume (from resume data, or from a `Range: bytes=N-` header) first looks at the file.
        if ResumeRequest.parameters(of: request) != nil { return .probe }
        if case .success = RangeStartOffset.of(request) { return .probe }
        return .download(offset: 0)
    }

    /// Whether `url` names a directory (its path is empty or ends in `/`).
    static func isDirectory(_ url: URL?) -> Bool {
        guard let url else { return false }
        let path = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? url.path
        return path.isEmpty || path.hasSuffix("/")
    }
}
