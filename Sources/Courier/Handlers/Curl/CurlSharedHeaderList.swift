internal import CCurl

/// A libcurl header list (`curl_slist`) made once and handed to many transfers: libcurl only reads
/// a transfer's `CURLOPT_HTTPHEADER` list, so the lines most requests send unchanged need not be
/// copied into a new list (two allocations a line) for every request.
final class CurlSharedHeaderList: @unchecked Sendable {
    /// The list; immutable once made, freed with the object.
    let list: UnsafeMutablePointer<curl_slist>?
    /// The lines, in order.
    let lines: [String]

    /// A list of `lines`.
    init(_ lines: [String]) {
        var list: UnsafeMutablePointer<curl_slist>? = nil
        for line in lines {
            guard let appended = line.withCString({ curl_slist_append(list, $0) }) else { continue }
            list = appended
        }
        self.list = list
        self.lines = lines
    }

    deinit {
        if let list { curl_slist_free_all(list) }
    }
}
