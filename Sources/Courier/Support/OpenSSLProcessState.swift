internal import COpenSSL

/// OpenSSL's process-wide initialisation, done once before libcurl, libssh2 or a stream task's TLS
/// first use it, so that OpenSSL registers no exit-time cleanup (see
/// `courier_openssl_init_without_exit_cleanup` in `COpenSSL.h`): a process that exits while a
/// session's loop thread is still in a TLS call must not have OpenSSL's state freed under it. The
/// memory is the kernel's to reclaim at exit anyway.
enum OpenSSLProcessState {
    /// Whether the initialisation succeeded (it runs once, the first time this is read). When it
    /// fails, libcurl and libssh2 initialise OpenSSL themselves, with its exit handler.
    static let isInitialized: Bool = courier_openssl_init_without_exit_cleanup() == 1
}
