import Foundation
internal import CourierPluginABI

/// C views of Swift values, valid during one client call.
enum PluginStrings {
    /// Runs `body` with a `courier_response` for `response`.
    static func withResponse<T>(_ response: PluginResponse, _ body: (UnsafePointer<courier_response>) -> T) -> T {
        var strings = CStrings()
        defer { strings.free() }
        let fields = response.headerFields.sorted { $0.key < $1.key }
        var headers = fields.map { courier_header(name: strings.copy($0.key), value: strings.copy($0.value)) }
        return headers.withUnsafeMutableBufferPointer { list in
            var value = courier_response()
            value.struct_size = UInt32(MemoryLayout<courier_response>.size)
            value.status_code = Int32(clamping: response.statusCode)
            value.url = response.url.flatMap { strings.copy($0.absoluteString) }
            value.mime_type = response.mimeType.flatMap { strings.copy($0) }
            value.text_encoding = response.textEncodingName.flatMap { strings.copy($0) }
            value.expected_length = response.expectedContentLength
            value.headers = list.isEmpty ? nil : UnsafePointer(list.baseAddress)
            value.header_count = list.count
            return withUnsafePointer(to: &value) { body($0) }
        }
    }

    /// NUL-terminated copies freed together.
    struct CStrings {
        private var copies: [UnsafeMutablePointer<CChar>] = []

        mutating func copy(_ text: String) -> UnsafePointer<CChar>? {
            guard let duplicate = strdup(text) else { return nil }
            copies.append(duplicate)
            return UnsafePointer(duplicate)
        }

        mutating func free() {
            for copy in copies { Foundation.free(copy) }
            copies.removeAll()
        }
    }
}
