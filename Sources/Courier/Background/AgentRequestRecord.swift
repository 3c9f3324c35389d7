import Foundation

/// A task's request as the agent stores it: URL, method, header fields, timeout and cache policy,
/// without credentials (``AgentRequestSecrets`` carries those, in memory only).
package struct AgentRequestRecord: Codable, Sendable, Equatable {
    /// The URL, without a password.
    package var url: String
    /// The HTTP method.
    package var method: String
    /// Header fields other than the credential ones.
    package var headers: [String: String]
    /// The request's timeout interval.
    package var timeoutInterval: Double
    /// `URLRequest.CachePolicy`'s raw value.
    package var cachePolicy: UInt

    /// The header fields that carry credentials; they are never stored.
    static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The record of `request` and the credentials it carries; `nil` when it has no URL.
    package static func make(from request: URLRequest) -> (AgentRequestRecord, AgentRequestSecrets?)? {
        guard let url = request.url else { return nil }
        var secrets = AgentRequestSecrets()
        var stored: [String: String] = [:]
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            if credentialHeaders.contains(name.lowercased()) {
                secrets.headers[name] = value
            } else {
                stored[name] = value
            }
        }
        var shown = url
        if var components = URLComponents(url: url, resolvingAgainstBaseURL: true), components.password != nil {
            secrets.url = url.absoluteString
            components.password = nil
            shown = components.url ?? url
        }
        let record = AgentRequestRecord(url: shown.absoluteString, method: request.httpMethod ?? "GET", headers: stored,
                                        timeoutInterval: request.timeoutInterval, cachePolicy: request.cachePolicy.rawValue)
        return (record, secrets.isEmpty ? nil : secrets)
    }

    /// The request again, with `secrets` when the agent still has them; `nil` when the stored URL
    /// does not parse.
    package func urlRequest(secrets: AgentRequestSecrets? = nil) -> URLRequest? {
        guard let url = URL(string: secrets?.url ?? self.url) else { return nil }
        var request = URLRequest(url: url, cachePolicy: URLRequest.CachePolicy(rawValue: cachePolicy) ?? .useProtocolCachePolicy,
                                 timeoutInterval: timeoutInterval)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        for (name, value) in secrets?.headers ?? [:] { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// A record.
    package init(url: String, method: String, headers: [String: String], timeoutInterval: Double, cachePolicy: UInt) {
        self.url = url
        self.method = method
        self.headers = headers
        self.timeoutInterval = timeoutInterval
        self.cachePolicy = cachePolicy
    }
}

/// The credentials of a request: sent to the agent with the task, kept in its memory only.
/// After the agent restarts they are gone; the transfer then relies on the credential storage's
/// `.permanent` credentials, as Apple's daemon does.
package struct AgentRequestSecrets: Codable, Sendable, Equatable {
    /// `Authorization`, `Proxy-Authorization`, `Cookie`.
    package var headers: [String: String] = [:]
    /// The URL with its password, when it had one.
    package var url: String?

    /// No secrets.
    package init() {}

    /// Whether there is nothing to keep.
    var isEmpty: Bool { headers.isEmpty && url == nil }
}
