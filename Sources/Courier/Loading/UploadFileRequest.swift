import Foundation

/// Marks a request whose `httpBodyStream` Courier opened itself on an upload task's file
/// (`uploadTask(with:fromFile:)`), as opposed to a stream the app made.
///
/// A handler may treat such a stream as a regular file: reading it never blocks for long, and it
/// can go back to its start when a body must be sent again. An app's stream promises neither (it
/// may be a pipe, or the read end of a bound pair that waits for the app to write).
enum UploadFileRequest {
    /// Property key: the file's path (`String`).
    static let key = "Courier.UploadFile"

    /// Marks `request`, whose body stream reads the file at `url`.
    static func mark(_ request: inout URLRequest, file url: URL) {
        request.setProtocolProperty(url.path, forKey: key)
    }

    /// Whether `request`'s body stream is an upload task's file that Courier opened.
    static func streamsAFile(_ request: URLRequest) -> Bool {
        request.httpBodyStream != nil && request.protocolProperty(forKey: key) is String
    }
}
