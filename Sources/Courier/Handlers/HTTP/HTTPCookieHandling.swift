import Foundation

/// Cookies between the session's cookie store and HTTP messages, honouring
/// `httpShouldSetCookies`, the request's `httpShouldHandleCookies` and the accept policy.
enum HTTPCookieHandling {
    /// The `Cookie` header value for `request` from the store, or `nil`.
    static func cookieHeader(for request: URLRequest, environment: HandlerEnvironment) -> String? {
        guard environment.shouldSetCookies, request.httpShouldHandleCookies,
              let storage = environment.cookieStorage, !storage.certainlySendsNoCookies, let url = request.url,
              let cookies = storage.cookies(for: url), !cookies.isEmpty else { return nil }
        return HTTPCookie.requestHeaderFields(with: cookies)["Cookie"]
    }

    /// The `Cookie` header the handler sends with `request`: the request's own (none when it is
    /// empty), else the stored cookies for its URL (``cookieHeader(for:environment:)``).
    static func sentCookieHeader(for request: URLRequest, environment: HandlerEnvironment) -> String? {
        if let own = request.value(forHTTPHeaderField: "Cookie") { return own.isEmpty ? nil : own }
        return cookieHeader(for: request, environment: environment)
    }

    /// Stores the cookies `response` sets.
    static func store(from response: HTTPURLResponse, for request: URLRequest, environment: HandlerEnvironment) {
        guard environment.shouldSetCookies, request.httpShouldHandleCookies,
              environment.cookieAcceptPolicy != .never,
              let storage = environment.cookieStorage, let url = response.url,
              response.value(forHTTPHeaderField: "Set-Cookie") != nil else { return }
        var fields: [String: String] = [:]
        for case (let name as String, let value as String) in response.allHeaderFields { fields[name] = value }
        let cookies = HTTPCookie.cookies(withResponseHeaderFields: fields, for: url)
        guard !cookies.isEmpty else { return }
        storage.setCookies(cookies, for: url, mainDocumentURL: request.mainDocumentURL ?? url)
    }
}
