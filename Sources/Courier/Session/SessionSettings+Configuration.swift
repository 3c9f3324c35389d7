import Foundation

extension SessionSettings {
    /// The settings of `configuration` (the session's own copy) that its tasks read.
    init(_ configuration: URLSessionConfiguration) {
        let headers: [(name: String, value: String)] = (configuration.httpAdditionalHeaders ?? [:]).compactMap { key, value in
            guard let name = key.base as? String else { return nil }
            if let text = value as? String { return (name, text) }
            if let number = value as? NSNumber { return (name, number.stringValue) }
            return (name, "\(value)")
        }
        self.init(timeoutIntervalForRequest: configuration.timeoutIntervalForRequest,
                  timeoutIntervalForResource: configuration.timeoutIntervalForResource,
                  requestCachePolicy: configuration.requestCachePolicy,
                  additionalHeaders: headers.sorted { $0.name < $1.name })
    }
}
