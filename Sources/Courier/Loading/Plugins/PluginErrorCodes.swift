import Foundation

/// The `URLError` codes a plugin may report through `failed`; anything else becomes `.unknown`.
enum PluginErrorCodes {
    /// Every code Foundation's `URLError` defines.
    static let known: Set<Int> = [
        -1, -999, -1000, -1001, -1002, -1003, -1004, -1005, -1006, -1007, -1008, -1009, -1010, -1011,
        -1012, -1013, -1014, -1015, -1016, -1017, -1018, -1019, -1020, -1021, -1022, -1100, -1101,
        -1102, -1103, -1200, -1201, -1202, -1203, -1204, -1205, -1206, -2000, -3000, -3001, -3002,
        -3003, -3004, -3005, -3006, -3007, -995, -996, -997,
    ]

    /// The code for a plugin's `failed(code, …)`, and whether the plugin's code was known.
    static func code(_ raw: Int32) -> (code: URLError.Code, known: Bool) {
        let value = Int(raw)
        guard known.contains(value) else { return (.unknown, false) }
        return (URLError.Code(rawValue: value) ?? .unknown, true)
    }
}
