internal import CSSH2
import Foundation

// The SSH handshake and the server's host key: what the known-hosts files record limits the key
// types offered, and the key presented is trusted, refused, recorded (`.acceptNew`) or put to the
// delegate. Loop thread only, as the rest of the connection.
extension SSHConnection {
    /// The known-hosts files to read: the configuration's, else the user's and the system's.
    private var knownHostsFiles: [URL] {
        environment.sshKnownHostsURL.map { [$0] }
            ?? SSHHostKeyVerification.defaultFiles(user: environment.sshUserEnvironment.userKnownHostsFile)
    }

    /// Reads what the known-hosts files record for the server and limits the handshake to the key
    /// types recorded (or accepted in this session) for it, so a server cannot dodge its recorded
    /// key by offering a key of another type.
    func limitHostKeyTypes(of session: OpaquePointer) {
        let name = key.knownHostsName
        let recorded = SSHRecordedHostKeys(name: name, files: knownHostsFiles)
        recordedHostKeys = recorded
        var types = recorded.keyTypes
        for accepted in pool?.acceptedHostKeys.keys(for: name) ?? [] where !types.contains(accepted.type) {
            types.append(accepted.type)
        }
        guard let methods = SSHHostKeyVerification.hostKeyMethods(for: types),
              libssh2_session_method_pref(session, LIBSSH2_METHOD_HOSTKEY, methods) == 0 else { return }
        negotiatedHostKeyTypes = types
    }

    func stepHandshake(_ session: OpaquePointer) -> Bool {
        let result = libssh2_session_handshake(session, fd)
        if result == LIBSSH2_ERROR_EAGAIN { return false }
        if result == LIBSSH2_ERROR_KEX_FAILURE, !negotiatedHostKeyTypes.isEmpty, let recordedHostKeys {
            let reason = SSHHostKeyVerification.noRecordedTypeOffered(name: key.knownHostsName, keyTypes: negotiatedHostKeyTypes,
                                                                      recorded: recordedHostKeys)
            failSetup(URLError(.serverCertificateUntrusted, url: url, description: reason))
            return false
        }
        guard result == 0 else {
            failSetup(SFTPErrorMapping.sessionError(result, message: SFTPErrorMapping.lastErrorMessage(of: session),
                                                    established: false, url: url))
            return false
        }
        info.handshakeEnd = Date()
        guard let presented = SSHHostKey(of: session) else {
            failSetup(URLError(.secureConnectionFailed, url: url, description: "The SSH server sent no host key."))
            return false
        }
        hostKey = presented
        log.handshakeFinished(session, hostKey: presented)
        phase = .verifyingHostKey
        guard let pool, let recordedHostKeys else { return false }
        let name = key.knownHostsName
        switch SSHHostKeyVerification.verdict(for: presented, name: name, recorded: recordedHostKeys, accepted: pool.acceptedHostKeys) {
        case .trusted:
            beginAuthentication()
            return true
        case .refused(let reason):
            failSetup(URLError(.serverCertificateUntrusted, url: url, description: reason))
            return false
        case .unknown:
            guard environment.sshStrictHostKeyChecking == .acceptNew else {
                presentHostKeyChallenge(presented, recordingFailure: nil)
                return false
            }
            do {
                try recordNewHost(presented)
            } catch {
                presentHostKeyChallenge(presented, recordingFailure: error.reason)
                return false
            }
            pool.acceptedHostKeys.accept(presented, for: name)
            beginAuthentication()
            return true
        }
    }

    /// `.acceptNew`: adds the unknown server's key to the user's known-hosts file.
    private func recordNewHost(_ presented: SSHHostKey) throws(KnownHostsFile.AppendError) {
        guard let file = environment.sshKnownHostsURL ?? environment.sshUserEnvironment.userKnownHostsFile else {
            throw KnownHostsFile.AppendError(reason: "There is no known-hosts file to record it in.")
        }
        let line = KnownHostsFile.line(name: key.knownHostsName, keyType: presented.type, key: presented.blob)
        try KnownHostsFile.append(line, to: file)
    }
}
