internal import CCurl
import Foundation

/// The `CURLOPT_SSLVERSION` value for a range of TLS versions given as Apple's
/// `tls_protocol_version_t` raw values (0x0301 = TLS 1.0 … 0x0304 = TLS 1.3).
enum TLSVersionOption {
    static func value(for versions: ClosedRange<UInt16>) -> Int {
        let minimum: Int
        switch versions.lowerBound {
        case ...0x0301: minimum = Int(CURL_SSLVERSION_TLSv1_0)
        case 0x0302: minimum = Int(CURL_SSLVERSION_TLSv1_1)
        case 0x0303: minimum = Int(CURL_SSLVERSION_TLSv1_2)
        default: minimum = Int(CURL_SSLVERSION_TLSv1_3)
        }
        let maximum: Int
        switch versions.upperBound {
        case ...0x0301: maximum = Int(CURL_SSLVERSION_MAX_TLSv1_0)
        case 0x0302: maximum = Int(CURL_SSLVERSION_MAX_TLSv1_1)
        case 0x0303: maximum = Int(CURL_SSLVERSION_MAX_TLSv1_2)
        default: maximum = Int(CURL_SSLVERSION_MAX_TLSv1_3)
        }
        return minimum | maximum
    }
}
