internal import COpenSSL

/// The two digests of NTLMv2, from OpenSSL through the `COpenSSL` module's shim
/// (`CourierNTLMCrypto.h`): MD4 (OpenSSL's low-level function, which OpenSSL 3 keeps built in
/// without the legacy provider) and HMAC-MD5. `nil` when OpenSSL fails.
enum NTLMCrypto {
    /// MD4 of `bytes` (16 bytes).
    static func md4(_ bytes: [UInt8]) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: 16)
        let succeeded = bytes.withUnsafeBytes { input in
            output.withUnsafeMutableBufferPointer { courier_md4(input.baseAddress, input.count, $0.baseAddress) == 1 }
        }
        return succeeded ? output : nil
    }

    /// HMAC-MD5 of `data` with `key` (16 bytes).
    static func hmacMD5(key: [UInt8], _ data: [UInt8]) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: 16)
        let succeeded = key.withUnsafeBytes { keyBytes in
            data.withUnsafeBytes { input in
                output.withUnsafeMutableBufferPointer {
                    courier_hmac_md5(keyBytes.baseAddress, keyBytes.count, input.baseAddress, input.count, $0.baseAddress) == 1
                }
            }
        }
        return succeeded ? output : nil
    }
}
