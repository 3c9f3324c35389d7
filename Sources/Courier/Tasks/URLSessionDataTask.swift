import Foundation

/// A task that loads a resource into memory: delivered piece by piece to a
/// `URLSessionDataDelegate`, or whole to a completion handler.
open class URLSessionDataTask: URLSessionTask, @unchecked Sendable {}
