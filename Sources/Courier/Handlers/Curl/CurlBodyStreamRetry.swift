import Foundation

/// What a libcurl handler sends as the body when it retries a request after a challenge: a body in
/// memory or a file can be sent again, but a stream was used by the attempt before (and closed), so
/// the task's delegate is asked for a new one, as Apple documents for
/// `urlSession(_:task:needNewBodyStream:)`.
enum CurlBodyStreamRetry {
    /// Calls `proceed` with the stream the next attempt sends (`nil` when the body is not a stream),
    /// or `fail` when a new stream is needed and the delegate gives none.
    static func prepare(for request: URLRequest, client: (any URLProtocolClient)?,
                        proceed: @escaping @Sendable (InputStream?) -> Void,
                        fail: @escaping @Sendable (URLError) -> Void) {
        guard request.httpBodyStream != nil, let builtIn = client as? BuiltInHandlerClient else {
            proceed(nil)
            return
        }
        builtIn.needNewBodyStream { stream in
            guard let stream else {
                fail(URLError(.requestBodyStreamExhausted, url: request.url,
                              description: "The request body must be sent again, and the delegate gave no new body stream."))
                return
            }
            proceed(stream)
        }
    }
}
