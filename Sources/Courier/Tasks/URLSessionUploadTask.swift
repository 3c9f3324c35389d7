import Foundation

/// A data task that sends a body from memory, a file or a stream the delegate provides.
open class URLSessionUploadTask: URLSessionDataTask, @unchecked Sendable {}
