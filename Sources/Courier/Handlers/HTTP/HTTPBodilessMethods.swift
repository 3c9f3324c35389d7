import Foundation

/// GET and HEAD requests are sent without a body, as on Apple's platforms: a GET or HEAD request
/// that carries one (`httpBody`, even empty, or `httpBodyStream` — also an upload task whose request
/// keeps the method GET) fails with `dataLengthExceedsMaximum` (-1103) before anything is sent,
/// which is the error Apple's loading system reports for it. Sending it anyway would announce a body
/// many servers and proxies do not expect for these methods.
enum HTTPBodilessMethods {
    /// The methods that must not carry a body.
    static let methods: Set<String> = ["GET", "HEAD"]

    /// The error a request to the HTTP handler fails with because of its body, or `nil`.
    static func refusal(for request: URLRequest) -> URLError? {
        let method = request.uppercasedHTTPMethod
        guard methods.contains(method), request.httpBody != nil || request.httpBodyStream != nil else { return nil }
        return URLError(.dataLengthExceedsMaximum, url: request.url,
                        description: "A \(method) request cannot carry a body; the request was not sent.")
    }
}
