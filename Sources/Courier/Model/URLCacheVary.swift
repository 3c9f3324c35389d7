import Foundation

/// The request headers a cached HTTP response depends on (its `Vary` field, RFC 9111 §4.1).
///
/// When a `URLCache` stores a response that names request headers in `Vary`, it keeps the values
/// those headers had in the request it was stored for. A later request matches the entry only when
/// each of those headers has the same value (after trimming spaces and tabs; a header absent from
/// both requests matches). A response with `Vary: *` matches no request, so the cache does not
/// store it.
struct URLCacheVary: Sendable, Equatable {
    /// Lowercased header name → the value the stored request had; names the request lacked are
    /// absent.
    let values: [String: String]

    /// The lowercased header names `response`'s `Vary` lists (empty when it has none; `"*"`
    /// included as is). Non-HTTP responses never vary.
    static func fieldNames(of response: URLResponse) -> [String] {
        guard let http = response as? HTTPURLResponse,
              let vary = http.value(forHTTPHeaderField: "Vary") else { return [] }
        return vary.split(separator: ",").compactMap { name in
            let trimmed = name.trimmingCharacters(in: .whitespaces).lowercased()
            return trimmed.isEmpty ? nil : trimmed
        }
    }

    /// Whether `response` has `Vary: *` (it can never be reused).
    static func variesOnEverything(_ response: URLResponse) -> Bool {
        fieldNames(of: response).contains("*")
    }

    /// The values of the headers `response` varies on, taken from `request`; `nil` when the
    /// response has no `Vary`.
    init?(response: URLResponse, request: URLRequest) {
        let names = Self.fieldNames(of: response)
        guard !names.isEmpty else { return nil }
        var values: [String: String] = [:]
        for name in names where name != "*" {
            if let value = Self.normalizedValue(of: name, in: request) { values[name] = value }
        }
        self.values = values
    }

    /// An entry made from values read back from storage.
    init(values: [String: String]) {
        self.values = values
    }

    /// Whether `request` has the same values as the stored request for every header `response`
    /// varies on. Always true for a response without `Vary`; always false for `Vary: *`.
    static func request(_ request: URLRequest, matches stored: URLCacheVary?, for response: URLResponse) -> Bool {
        let names = fieldNames(of: response)
        guard !names.isEmpty else { return true }
        guard !names.contains("*") else { return false }
        let storedValues = stored?.values ?? [:]
        for name in names where normalizedValue(of: name, in: request) != storedValues[name] {
            return false
        }
        return true
    }

    /// A request header's value with surrounding whitespace removed, or `nil` when absent.
    private static func normalizedValue(of name: String, in request: URLRequest) -> String? {
        request.value(forHTTPHeaderField: name)?.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
    }
}
