import Foundation

/// The request a redirect response proposes, by the rules Apple's loading system follows.
enum HTTPRedirectRequest {
    /// Statuses that redirect when they carry a `Location`.
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// The new request after `response` to `request`, or `nil` when `response` is not a redirect to
    /// an http or https URL (then it is the final response).
    ///
    /// 301, 302 and 303 turn a POST into a GET without a body (303 turns every method but HEAD into
    /// GET); 307 and 308 keep the method and body. `Authorization`, `Cookie` and `Proxy-Authorization`
    /// are dropped when the redirect leaves the origin (scheme, host and port; see ``URLOrigin``).
    static func make(after response: HTTPURLResponse, for request: URLRequest) -> URLRequest? {
        guard redirectStatuses.contains(response.statusCode),
              let location = response.value(forHTTPHeaderField: "Location"), !location.isEmpty,
              let base = response.url ?? request.url,
              let target = URL(string: location, relativeTo: base)?.absoluteURL,
              let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return nil }
        var next = URLOrigin.redirecting(request, to: target)
        let method = request.uppercasedHTTPMethod
        let becomesGet = (response.statusCode == 303 && method != "HEAD")
            || ((response.statusCode == 301 || response.statusCode == 302) && method == "POST")
        if becomesGet {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
        }
        return next
    }
}
