import Foundation
internal import CourierPluginABI
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A `courier_request` built from a `URLRequest`, with C copies of every string, header and the
/// body, freed when the buffer is released (after `create` returned).
final class PluginRequestBuffer {
    private var allocations: [UnsafeMutableRawPointer] = []
    private var request = courier_request()

    /// A request for `url`, or nil when memory runs out; `resume` is the offset and validator to
    /// pass when the scheme can resume.
    init?(request source: URLRequest, url: URL, body: Data?, resume: (offset: Int64, validator: String?)?) {
        request.struct_size = UInt32(MemoryLayout<courier_request>.size)
        guard let urlText = copy(url.absoluteString), let method = copy(source.httpMethod ?? "GET") else { return nil }
        request.url = urlText
        request.method = method
        let headers = (source.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }
        if !headers.isEmpty {
            guard let list = allocate(courier_header.self, count: headers.count) else { return nil }
            for (index, field) in headers.enumerated() {
                guard let name = copy(field.key), let value = copy(field.value) else { return nil }
                (list + index).initialize(to: courier_header(name: name, value: value))
            }
            request.headers = UnsafePointer(list)
            request.header_count = headers.count
        }
        if let body, !body.isEmpty {
            guard let bytes = allocate(UInt8.self, count: body.count) else { return nil }
            body.copyBytes(to: bytes, count: body.count)
            request.body = UnsafePointer(bytes)
            request.body_length = body.count
        }
        request.timeout_seconds = source.timeoutInterval
        request.resume_offset = -1
        if let resume {
            request.resume_offset = resume.offset
            if let validator = resume.validator {
                guard let copied = copy(validator) else { return nil }
                request.resume_validator = copied
            }
        }
    }

    deinit {
        for allocation in allocations { free(allocation) }
    }

    /// Runs `body` with the C request; its pointers are valid only during the call.
    func withRequest<T>(_ body: (UnsafePointer<courier_request>) -> T) -> T {
        withUnsafePointer(to: &request) { body($0) }
    }

    /// A C copy of `text`, freed with the buffer.
    private func copy(_ text: String) -> UnsafePointer<CChar>? {
        guard let duplicate = strdup(text) else { return nil }
        allocations.append(UnsafeMutableRawPointer(duplicate))
        return UnsafePointer(duplicate)
    }

    /// Memory for `count` values, freed with the buffer.
    private func allocate<T>(_ type: T.Type, count: Int) -> UnsafeMutablePointer<T>? {
        guard let raw = malloc(max(1, MemoryLayout<T>.stride * count)) else { return nil }
        allocations.append(raw)
        return raw.bindMemory(to: T.self, capacity: count)
    }

    /// The body of `request`: `httpBody`, or everything its body stream holds.
    static func body(of request: URLRequest) -> Data? {
        if let body = request.httpBody { return body }
        guard let stream = request.httpBodyStream else { return nil }
        var data = Data()
        stream.open()
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBufferPointer { pointer -> Int in
                guard let base = pointer.baseAddress else { return -1 }
                return stream.read(base, maxLength: pointer.count)
            }
            guard count > 0 else { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }
}
